import { describe, expect, it } from 'vitest';
import type { IssueJson, ProveReportJson } from '../../src/api/prove.js';
import { proveText } from '../../src/api/proveText.js';

// The text a person (or a model) reads: what the claim did must never be hidden under what the workspace already had.

const issue = (origin: IssueJson['origin'], n: number, extra: Partial<IssueJson> = {}): IssueJson => ({
  origin,
  stage: 'type',
  path: `src/f${n}.ts`,
  line: n,
  column: null,
  code: 'TS2322',
  message: `${origin} issue ${n}`,
  ...extra,
});

function report(issues: IssueJson[]): ProveReportJson {
  const checks = (['case', 'control'] as const).flatMap((phase) =>
    (['type', 'lint', 'runtime'] as const).map((stage) => ({ stage, phase, completed: true, issues: phase === 'control' && stage === 'type' ? issues : [] })),
  );
  return {
    schema: 1,
    digest: 'a'.repeat(64),
    receipt: null,
    why: ['the control did not break at its declared type stage: no claimant issue there'],
    verdict: {
      digest: 'a'.repeat(64),
      control_stage: 'type',
      toolchain: { typescript: '5.9.3', linter: { name: 'oxlint', version: '1.95.0' }, vitest: '4.1.12', jest: null },
      config: { digest: '0'.repeat(32), files: [] },
      project: { tsconfig: 'tsconfig.json', options_digest: '0'.repeat(32) },
      checks,
    },
    timings: [],
    ms: 1,
    cold: false,
    notices: [],
  };
}

const issueLines = (text: string) => text.split('\n').filter((line) => line.startsWith('    '));

describe('proveText', () => {
  it('shows the claimant\'s one issue first, before 77 baseline ones, and caps only the baseline', () => {
    const baseline = Array.from({ length: 77 }, (_, n) => issue('workspace', n + 1));
    const text = proveText(report([...baseline.slice(0, 40), issue('claimant', 500), ...baseline.slice(40)]));
    const lines = issueLines(text);
    expect(lines[0]).toBe('    [claimant] src/f500.ts:500: claimant issue 500 (TS2322)');
    expect(lines.filter((line) => line.includes('[workspace]'))).toHaveLength(5);
    expect(lines.at(-1)).toBe('    … and 72 more (--json has all)');
    expect(text).toMatch(/control type     breaks: 1 claimant issue, 77 other issues/);
  });

  it('shows every claimant issue, however many, then instrument issues before the baseline', () => {
    const claimant = Array.from({ length: 9 }, (_, n) => issue('claimant', n + 1));
    const text = proveText(report([issue('workspace', 100), issue('instrument', 200), ...claimant]), { maxIssues: 2 });
    const lines = issueLines(text);
    expect(lines.slice(0, 9).every((line) => line.startsWith('    [claimant]'))).toBe(true);
    expect(lines[9]).toMatch(/^    \[instrument\]/);
    expect(lines[10]).toMatch(/^    \[workspace\]/);
    expect(lines).toHaveLength(11);
  });

  it('puts the column in the issue\'s location when the tool gave one', () => {
    const text = proveText(report([issue('claimant', 6, { column: 21, message: 'Unexpected token', code: null })]));
    expect(issueLines(text)[0]).toBe('    [claimant] src/f6.ts:6:21: Unexpected token');
  });
});
