import type { LedgerEntry } from './ledgerEntry.js';

/*
 * What `vouch savings` reports, computed from ledger entries and reruns, pure
 * (docs/hooks.md, "vouch savings"). A decision's saving is the time of the runs
 * it avoided (the receipts' durations) minus the decision's own time, never
 * less than zero.
 */

/** A receipt whose check ran again on exactly the inputs, context and definition of an earlier, sound one (api/savings.ts). */
export interface Rerun {
  check: string;
  runId: string;
  startedAt: number;
  result: 'PASS' | 'FAIL';
  exitCode: number | null;
  previousRunId: string;
  previousResult: 'PASS' | 'FAIL';
  previousExitCode: number | null;
}

export interface CheckTime {
  check: string;
  count: number;
  ms: number;
}

export interface SessionTime {
  /** null: decisions without a session (`vouch run --if-due` outside an agent that names one, the MCP run tool). */
  session: string | null;
  host: 'claude' | 'codex' | null;
  count: number;
  ms: number;
}

export interface Avoided {
  /** Decisions that relied on a receipt: denies and skips (enforce), or what shadow mode would have denied or skipped. */
  decisions: number;
  ms: number;
  byCheck: CheckTime[];
  bySession: SessionTime[];
}

export interface ForcedCommand {
  at: number;
  host: 'claude' | 'codex' | null;
  session: string | null;
  command: string | null;
  checks: string[];
}

export interface SavingsReport {
  since: number;
  until: number;
  commands: { seen: number; matched: number; checksMatched: number; shadow: number };
  decisions: { deny: number; rewrite: number; pass: number; skip: number };
  shadowDecisions: { deny: number; rewrite: number; pass: number };
  avoided: Avoided;
  wouldAvoid: Avoided;
  forced: { count: number; byCheck: Array<{ check: string; count: number }>; latest: ForcedCommand[] };
  reruns: Array<Rerun & { differs: boolean; afterForce: boolean }>;
  differing: number;
}

/** How long before a run a VOUCH_FORCE command naming its check counts as what started it. */
export const FORCE_WINDOW_MS = 10 * 60_000;
/** The forced commands listed; the count covers them all. */
const FORCED_LISTED = 50;

export function summarizeSavings(entries: readonly LedgerEntry[], reruns: readonly Rerun[], since: number, until: number): SavingsReport {
  const hook = entries.filter((entry) => entry.source === 'hook');
  const enforce = entries.filter((entry) => entry.mode === 'enforce');
  const shadow = entries.filter((entry) => entry.mode === 'shadow');
  const count = (list: readonly LedgerEntry[], decision: LedgerEntry['decision']) => list.filter((entry) => entry.decision === decision).length;
  // Enforce mode: what was avoided is what did not run, a deny or a skip. A rewrite's skips are its run's own entries.
  const avoided = avoidedBy(enforce.filter((entry) => entry.decision === 'deny' || entry.decision === 'skip'));
  // Shadow mode: nothing follows a decision, so a rewrite's receipts are the skips its --if-due would have made.
  const wouldAvoid = avoidedBy(shadow.filter((entry) => entry.decision === 'deny' || entry.decision === 'rewrite'));
  const forcedEntries = hook.filter((entry) => entry.forced);
  const forcedByCheck = new Map<string, number>();
  for (const entry of forcedEntries) for (const check of entry.checks) forcedByCheck.set(check, (forcedByCheck.get(check) ?? 0) + 1);
  const judged = reruns.map((rerun) => ({
    ...rerun,
    differs: rerun.result !== rerun.previousResult || rerun.exitCode !== rerun.previousExitCode,
    afterForce: forcedEntries.some((entry) => entry.checks.includes(rerun.check) && entry.at <= rerun.startedAt && rerun.startedAt - entry.at <= FORCE_WINDOW_MS),
  }));
  return {
    since,
    until,
    commands: {
      seen: hook.length,
      matched: hook.filter((entry) => entry.checks.length > 0).length,
      checksMatched: hook.reduce((sum, entry) => sum + entry.checks.length, 0),
      shadow: hook.filter((entry) => entry.mode === 'shadow').length,
    },
    decisions: { deny: count(enforce, 'deny'), rewrite: count(enforce, 'rewrite'), pass: count(enforce.filter((entry) => entry.source === 'hook'), 'pass'), skip: count(enforce, 'skip') },
    shadowDecisions: { deny: count(shadow, 'deny'), rewrite: count(shadow, 'rewrite'), pass: count(shadow, 'pass') },
    avoided,
    wouldAvoid,
    forced: {
      count: forcedEntries.length,
      byCheck: [...forcedByCheck].map(([check, n]) => ({ check, count: n })).sort((a, b) => b.count - a.count || compare(a.check, b.check)),
      latest: forcedEntries.slice(-FORCED_LISTED).map((entry) => ({ at: entry.at, host: entry.host, session: entry.session, command: entry.command, checks: entry.checks })),
    },
    reruns: judged,
    differing: judged.filter((rerun) => rerun.differs).length,
  };
}

/** The time a decision saved: its receipts' durations minus its own time, never below zero; shared among its checks by duration. */
export function savedBy(entry: LedgerEntry): Array<{ check: string; ms: number }> {
  const total = entry.receipts.reduce((sum, receipt) => sum + receipt.duration_ms, 0);
  if (total === 0) return entry.receipts.map((receipt) => ({ check: receipt.check, ms: 0 }));
  const saved = Math.max(0, total - (entry.latency_ms ?? 0));
  return entry.receipts.map((receipt) => ({ check: receipt.check, ms: Math.round((saved * receipt.duration_ms) / total) }));
}

function avoidedBy(entries: readonly LedgerEntry[]): Avoided {
  const byCheck = new Map<string, CheckTime>();
  const bySession = new Map<string, SessionTime>();
  let ms = 0;
  let decisions = 0;
  for (const entry of entries) {
    if (entry.receipts.length === 0) continue;
    decisions++;
    const shares = savedBy(entry);
    const sum = shares.reduce((total, share) => total + share.ms, 0);
    ms += sum;
    for (const share of shares) {
      const row = byCheck.get(share.check) ?? { check: share.check, count: 0, ms: 0 };
      row.count++;
      row.ms += share.ms;
      byCheck.set(share.check, row);
    }
    const key = JSON.stringify([entry.session, entry.host]);
    const session = bySession.get(key) ?? { session: entry.session, host: entry.host, count: 0, ms: 0 };
    session.count++;
    session.ms += sum;
    bySession.set(key, session);
  }
  const order = <T extends { ms: number; count: number }>(a: T, b: T) => b.ms - a.ms || b.count - a.count;
  return {
    decisions,
    ms,
    byCheck: [...byCheck.values()].sort((a, b) => order(a, b) || compare(a.check, b.check)),
    bySession: [...bySession.values()].sort((a, b) => order(a, b) || compare(a.session ?? '', b.session ?? '')),
  };
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
