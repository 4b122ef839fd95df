import { describe, expect, it } from 'vitest';
import type { LedgerEntry } from '../../src/core/ledgerEntry.js';
import { savedBy, summarizeSavings, type Rerun } from '../../src/core/savings.js';
import { parseSince, savingsText } from '../../src/cli/commands/savings.js';

/* The savings report from ledger entries, pure: what counts as avoided, in which mode, and the reruns that differ. */

function entry(overrides: Partial<LedgerEntry>): LedgerEntry {
  return {
    at: 1_000,
    source: 'hook',
    host: 'claude',
    session: 's1',
    mode: 'enforce',
    decision: 'pass',
    forced: false,
    command: 'ls',
    checks: [],
    receipts: [],
    latency_ms: 100,
    ...overrides,
  };
}

const receipt = (check: string, duration_ms: number) => ({ check, run_id: `run-${check}`, duration_ms });

describe('vouch savings', () => {
  it('a saving is the receipts\' durations minus the decision\'s own time, never below zero, shared by duration', () => {
    expect(savedBy(entry({ receipts: [receipt('test', 3000), receipt('lint', 1000)], latency_ms: 400 }))).toEqual([
      { check: 'test', ms: 2700 },
      { check: 'lint', ms: 900 },
    ]);
    expect(savedBy(entry({ receipts: [receipt('test', 300)], latency_ms: 2000 }))).toEqual([{ check: 'test', ms: 0 }]);
  });

  it('counts denies and skips as avoided in enforce mode, and shadow decisions only as what would have been', () => {
    const entries = [
      entry({ command: 'ls' }),
      entry({ decision: 'deny', command: 'npm test', checks: ['test'], receipts: [receipt('test', 5000)], latency_ms: 200 }),
      // A rewrite's skips are its run's own entries: not counted twice.
      entry({ decision: 'rewrite', command: 'npm test && npm run lint', checks: ['test', 'lint'], receipts: [receipt('test', 5000)] }),
      entry({ source: 'run', host: null, session: null, decision: 'skip', command: null, checks: ['test'], receipts: [receipt('test', 5000)], latency_ms: 500 }),
      entry({ session: 's2', mode: 'shadow', decision: 'deny', command: 'npm test', checks: ['test'], receipts: [receipt('test', 5000)], latency_ms: 1000 }),
      entry({ session: 's2', mode: 'shadow', decision: 'rewrite', checks: ['test', 'lint'], receipts: [receipt('lint', 2000)], latency_ms: 0 }),
      entry({ session: 's2', mode: 'shadow', decision: 'pass', command: 'git status' }),
    ];
    const report = summarizeSavings(entries, [], 0, 10_000);
    expect(report.commands).toEqual({ seen: 6, matched: 4, checksMatched: 6, shadow: 3 });
    expect(report.decisions).toEqual({ deny: 1, rewrite: 1, pass: 1, skip: 1 });
    expect(report.avoided.ms).toBe(4800 + 4500);
    expect(report.avoided.decisions).toBe(2);
    expect(report.avoided.byCheck).toEqual([{ check: 'test', count: 2, ms: 9300 }]);
    expect(report.avoided.bySession).toEqual([
      { session: 's1', host: 'claude', count: 1, ms: 4800 },
      { session: null, host: null, count: 1, ms: 4500 },
    ]);
    expect(report.shadowDecisions).toEqual({ deny: 1, rewrite: 1, pass: 1 });
    expect(report.wouldAvoid.ms).toBe(4000 + 2000);
    expect(report.wouldAvoid.byCheck).toEqual([
      { check: 'test', count: 1, ms: 4000 },
      { check: 'lint', count: 1, ms: 2000 },
    ]);
  });

  it('flags a rerun whose result differs from the receipt that was CURRENT, and links it to a forced command before it', () => {
    const forced = entry({ at: 50_000, forced: true, command: 'VOUCH_FORCE=1 npm test', checks: ['test'] });
    const rerun = (over: Partial<Rerun>): Rerun => ({ check: 'test', runId: 'b', startedAt: 51_000, result: 'PASS', exitCode: 0, previousRunId: 'a', previousResult: 'PASS', previousExitCode: 0, ...over });
    const report = summarizeSavings(
      [forced],
      [rerun({}), rerun({ runId: 'c', result: 'FAIL', exitCode: 1 }), rerun({ runId: 'd', check: 'lint', exitCode: 2, result: 'FAIL', previousResult: 'FAIL', previousExitCode: 1 }), rerun({ runId: 'e', startedAt: 50_000 + 11 * 60_000 })],
      0,
      10_000_000,
    );
    expect(report.forced.count).toBe(1);
    expect(report.forced.byCheck).toEqual([{ check: 'test', count: 1 }]);
    expect(report.reruns.map((r) => [r.runId, r.differs, r.afterForce])).toEqual([
      ['b', false, true],
      ['c', true, true],
      ['d', true, false],
      ['e', false, false],
    ]);
    expect(report.differing).toBe(2);
    const text = savingsText(report, '7d');
    // The bug comes first, before any figure.
    expect(text.split('\n')[0]).toMatch(/^BUG: test run c FAIL \(exit 1\) on the same inputs as run a, which was PASS \(exit 0\)/);
    expect(text).toContain('2 DIFFERENT');
  });

  it('--since takes minutes, hours and days', () => {
    expect(parseSince('30m')).toBe(30 * 60_000);
    expect(parseSince('24h')).toBe(86_400_000);
    expect(parseSince('7d')).toBe(7 * 86_400_000);
    for (const bad of ['7', '7w', '-1d', '0d', '1.5d', '', '99999d']) expect(() => parseSince(bad), bad).toThrow(/--since takes/);
  });
});
