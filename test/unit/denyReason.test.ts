import { describe, expect, it } from 'vitest';
import { decideCommand, type CheckAnswer } from '../../src/agents/commandDecision.js';
import { matchCommand, type MatchTarget } from '../../src/agents/commandMatch.js';
import { REASON_MAX_BYTES } from '../../src/agents/denyReason.js';
import { definitionOf } from '../../src/core/definition.js';
import type { StoredLog } from '../../src/core/replay.js';

/*
 * The deny's reason (agents/denyReason.ts) through decideCommand, pure: the
 * logs are given by logOf. The e2e counterpart is test/e2e/hookReplay.test.ts.
 */

const NOW = 1_800_000_000_000;
const SCRIPTS = { test: 'vitest run', lint: 'eslint .' };

function target(names: string[]): MatchTarget {
  return { root: '/repo', cwd: '/repo', packageManager: 'npm', scripts: { ...SCRIPTS, ...Object.fromEntries(names.map((name) => [name, `node ${name}.js`])) }, checks: names.map((name) => definitionOf({ name, kind: 'test', script: name }, 'npm')) };
}

function answer(name: string, result: 'PASS' | 'FAIL', extra: Partial<CheckAnswer> = {}): CheckAnswer {
  return {
    name,
    freshness: 'CURRENT',
    result,
    reuseEligible: result === 'PASS',
    runId: `run-${name}`,
    finishedAt: NOW - 5 * 60_000,
    durationMs: 2500,
    exitCode: result === 'PASS' ? 0 : 1,
    signal: null,
    reasons: result === 'PASS' ? [] : ['failed'],
    logPath: `logs/run-${name}.log`,
    ...extra,
  };
}

const logs = (texts: Record<string, string>) => (a: CheckAnswer): StoredLog | null => {
  const text = texts[a.name];
  if (text === undefined) return null;
  const bytes = Buffer.from(text);
  return { bytes, offset: 0, size: bytes.length };
};

const numbered = (count: number, prefix = 'line') => Array.from({ length: count }, (_, index) => `${prefix} ${index + 1}`).join('\n') + '\n';

describe('the deny replays the stored result', () => {
  it('a CURRENT FAIL with a readable log is denied with its failure; without a log, or with replayFailures false, or killed by a signal, it is rewritten', () => {
    const command = 'npm test 2>&1 | tail -3';
    const match = matchCommand(command, target(['test']))!;
    const answers = new Map([['test', answer('test', 'FAIL')]]);
    const logOf = logs({ test: `${numbered(10)}Tests  1 failed | 2 passed (3)\n` });
    const denied = decideCommand(command, match, answers, NOW, 'vouch', { logOf });
    expect(denied.kind).toBe('deny');
    if (denied.kind !== 'deny') return;
    expect(denied.reason).toBe(
      [
        'vouch: not run, because check "test" has a CURRENT receipt: nothing it depends on (inputs, configuration, tools, environment) changed since the run below, so a rerun would fail the same way.',
        `check "test" FAILED in run run-test, 5 min ago (${new Date(NOW - 300_000).toISOString().replace('.000Z', 'Z')}): exit 1 in 2.5s; vitest: Tests 1 failed | 2 passed (3)`,
        'Its stored output, the last 3 lines (| tail -3), ANSI escapes removed:',
        '--- output of run run-test ---',
        'line 9',
        'line 10',
        'Tests  1 failed | 2 passed (3)',
        '--- end of output ---',
        'This is the failure the stored run shows, and the same inputs give the same failure. Fix it and run the command again; if you suspect a flaky test, run it anyway with: VOUCH_FORCE=1 npm test 2>&1 | tail -3 ("replayFailures": false in vouch.config.json always reruns a CURRENT FAIL instead).',
      ].join('\n'),
    );
    expect(decideCommand(command, match, answers, NOW, 'vouch', { logOf: logs({}) }).kind).toBe('rewrite');
    expect(decideCommand(command, match, answers, NOW, 'vouch', { logOf, replayFailures: false }).kind).toBe('rewrite');
    expect(decideCommand(command, match, answers, NOW, 'vouch').kind, 'no log reader: nothing to show').toBe('rewrite');
    const killed = new Map([['test', answer('test', 'FAIL', { signal: 'SIGKILL', exitCode: null })]]);
    expect(decideCommand(command, match, killed, NOW, 'vouch', { logOf }).kind).toBe('rewrite');
    const interrupted = new Map([['test', answer('test', 'FAIL', { reasons: ['failed', 'interrupted'] })]]);
    expect(decideCommand(command, match, interrupted, NOW, 'vouch', { logOf }).kind).toBe('rewrite');
  });

  it('a CURRENT PASS whose log is gone is still denied, and says the output could not be read', () => {
    const match = matchCommand('npm test', target(['test']))!;
    const decision = decideCommand('npm test', match, new Map([['test', answer('test', 'PASS')]]), NOW, 'vouch', { logOf: logs({}) });
    expect(decision.kind).toBe('deny');
    if (decision.kind === 'deny') expect(decision.reason).toContain('Its stored output could not be read');
  });

  it('a fan-out of 600 package checks stays within 16 KB: as many as fit are named once, the rest counted', () => {
    const names = Array.from({ length: 600 }, (_, index) => `check${index}`);
    const command = names.map((name) => `npm run ${name}`).join(' && ');
    const match = matchCommand(command, target(names))!;
    expect(match.parts).toHaveLength(600);
    const answers = new Map(names.map((name, index) => [name, answer(name, index === 599 ? 'FAIL' : 'PASS')]));
    const logOf = logs(Object.fromEntries(names.map((name) => [name, numbered(300, name)])));
    const decision = decideCommand(command, match, answers, NOW, 'vouch', { logOf });
    expect(decision.kind).toBe('deny');
    if (decision.kind !== 'deny') return;
    expect(Buffer.byteLength(decision.reason)).toBeLessThanOrEqual(REASON_MAX_BYTES);
    const named = names.filter((name) => decision.reason.includes(`check "${name}" `));
    const rest = /… and (\d+) more checks with a CURRENT receipt \((\d+) PASS, (\d+) FAIL\)/.exec(decision.reason);
    expect(rest).not.toBeNull();
    expect(named.length + Number(rest![1])).toBe(600);
    for (const name of named) expect(decision.reason.split(`check "${name}" `), name).toHaveLength(2);
    // The failure comes first, with its output: it is what the agent must read.
    expect(decision.reason).toContain('\n- npm run check599: check "check599" FAILED in run run-check599');
    expect(decision.reason).toContain('check599 300\n--- end of output ---');
    expect(decision.reason).toContain('`vouch run CHECK --if-due --replay` shows');
    expect(decision.reason).toContain('VOUCH_FORCE=1 in front of your command (npm run check0 && npm run check1');
    expect(decision.reason).not.toContain(command.slice(0, 400));
  });

  it('a chain of two: each replay within its share, both named with their part', () => {
    const command = 'npm run a 2>&1 | tail -300 && npm run b | head -300';
    const match = matchCommand(command, target(['a', 'b']))!;
    const decision = decideCommand(command, match, new Map([['a', answer('a', 'PASS')], ['b', answer('b', 'PASS')]]), NOW, 'vouch', { logOf: logs({ a: numbered(1000, 'a'), b: numbered(1000, 'b') }) });
    expect(decision.kind).toBe('deny');
    if (decision.kind !== 'deny') return;
    expect(decision.reason).toContain('- npm run a: check "a" PASSED in run run-a');
    expect(decision.reason).toContain('- npm run b: check "b" PASSED in run run-b');
    expect(decision.reason).toContain('a 1000\n--- end of output ---');
    expect(decision.reason).toContain('--- output of run run-b ---\nb 1\nb 2\n');
    expect(decision.reason).toContain('stderr is included');
    expect(Buffer.byteLength(decision.reason)).toBeLessThanOrEqual(REASON_MAX_BYTES);
  });
});
