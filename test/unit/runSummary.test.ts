import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { savedMs, summaryLine, toolCounts } from '../../src/core/runSummary.js';

const sample = (name: string) => readFileSync(join(import.meta.dirname, '../fixtures/tool-output', `${name}.txt`), 'utf8');

describe('toolCounts reads the counts each tool printed (samples captured from the tools: fixtures/tool-output/README.md)', () => {
  it('tsc --pretty: "Found N errors"', () => {
    expect(toolCounts(sample('tsc-pretty'))).toEqual([{ tool: 'tsc', line: 'Found 2 errors in the same file, starting at: bad.ts:1', errors: 2 }]);
    expect(toolCounts(sample('tsc-pretty-1'))).toEqual([{ tool: 'tsc', line: 'Found 1 error in bad2.ts:1', errors: 1 }]);
    expect(toolCounts(sample('tsc-pretty-2files'))).toEqual([{ tool: 'tsc', line: 'Found 3 errors in 2 files.', errors: 3 }]);
  });

  it('tsc to a pipe prints no summary: its "error TS" lines are counted, and said to be', () => {
    expect(toolCounts(sample('tsc-plain'))).toEqual([{ tool: 'tsc', line: '2 "error TS" diagnostic lines', errors: 2 }]);
  });

  it('eslint: "✖ N problems (E errors, W warnings)"', () => {
    expect(toolCounts(sample('eslint'))).toEqual([{ tool: 'eslint', line: '✖ 4 problems (2 errors, 2 warnings)', total: 4, errors: 2, warnings: 2 }]);
  });

  it('oxlint: "Found W warnings and E errors."', () => {
    expect(toolCounts(sample('oxlint'))).toEqual([{ tool: 'oxlint', line: 'Found 2 warnings and 0 errors.', warnings: 2, errors: 0 }]);
    expect(toolCounts(sample('oxlint-err'))).toEqual([{ tool: 'oxlint', line: 'Found 0 warnings and 2 errors.', warnings: 0, errors: 2 }]);
  });

  it('vitest: "Tests  1 failed | 3 passed (4)", its colours removed', () => {
    expect(toolCounts(sample('vitest-fail'))).toEqual([{ tool: 'vitest', line: 'Tests 1 failed | 3 passed (4)', passed: 3, failed: 1, total: 4 }]);
    expect(toolCounts(sample('vitest-pass'))).toEqual([{ tool: 'vitest', line: 'Tests 1 passed (1)', passed: 1, total: 1 }]);
  });

  it('jest: "Tests:       1 failed, 5 passed, 6 total" (a recorded sample)', () => {
    expect(toolCounts(sample('jest'))).toEqual([{ tool: 'jest', line: 'Tests: 1 failed, 5 passed, 6 total', passed: 5, failed: 1, total: 6 }]);
  });

  it('node:test, TAP and spec: "# pass N" / "# fail M"', () => {
    const expected = [{ tool: 'node:test', line: 'tests 3, pass 2, fail 1', passed: 2, failed: 1, total: 3 }];
    expect(toolCounts(sample('node-test-tap'))).toEqual(expected);
    expect(toolCounts(sample('node-test-spec'))).toEqual(expected);
  });

  it('node:test run for real now, both reporters', () => {
    const dir = mkdtempSync(join(tmpdir(), 'vouch-node-test-'));
    try {
      writeFileSync(join(dir, 'a.test.mjs'), "import test from 'node:test';\ntest('ok', () => {});\ntest('ok too', () => {});\ntest('bad', () => { throw new Error('no'); });\n");
      for (const reporter of ['tap', 'spec']) {
        const run = spawnSync(process.execPath, ['--test', `--test-reporter=${reporter}`, 'a.test.mjs'], { cwd: dir, encoding: 'utf8' });
        expect(run.status).toBe(1);
        expect(toolCounts(run.stdout + run.stderr), reporter).toEqual([{ tool: 'node:test', line: 'tests 3, pass 2, fail 1', passed: 2, failed: 1, total: 3 }]);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('several tools in one log each count once, the last summary of each', () => {
    const counts = toolCounts(`${sample('tsc-pretty')}\n${sample('eslint')}\n${sample('vitest-pass')}\n${sample('vitest-fail')}`);
    expect(counts.map((count) => count.tool)).toEqual(['tsc', 'eslint', 'vitest']);
    expect(counts[2]).toMatchObject({ failed: 1, total: 4 });
  });

  it('nothing is made up: output without a summary has no counts', () => {
    expect(toolCounts('all good\nFound something else\nTests are fine\n')).toEqual([]);
  });
});

describe('summaryLine', () => {
  it('says the check, PASS or FAIL, exit code, duration, when, run id and the counts', () => {
    const line = summaryLine(
      { check: 'test', result: 'FAIL', exitCode: 1, signal: null, durationMs: 3200, finishedAt: Date.parse('2026-12-05T02:30:01.250Z'), runId: 'R1' },
      toolCounts(sample('vitest-fail')),
      Date.parse('2026-12-05T02:35:01Z'),
    );
    expect(line).toBe('check "test" FAILED in run R1, 5 min ago (2026-12-05T02:30:01Z): exit 1 in 3.2s; vitest: Tests 1 failed | 3 passed (4)');
    expect(summaryLine({ check: 'x'.repeat(500), result: 'PASS', exitCode: 0, signal: null, durationMs: 10, finishedAt: 0, runId: 'R' }, [], 1000).length).toBeLessThan(300);
  });
});

describe('savedMs', () => {
  it("is the receipt's duration less the skip's own time, never below zero", () => {
    expect(savedMs(2000, 200)).toBe(1800);
    // The case: a skip that took 2 s on a busy machine saved nothing of a 1.8 s run.
    expect(savedMs(1800, 2000)).toBe(0);
    expect(savedMs(500, 500)).toBe(0);
  });
});
