import type { HookMode, LedgerEntry, LedgerReceipt } from '../core/ledgerEntry.js';
import { truncateCommand } from '../core/ledgerEntry.js';
import type { CheckAnswer, CommandDecision } from './commandDecision.js';
import type { HostName } from './host.js';

export interface HookFacts {
  host: HostName;
  session: string | null;
  command: string;
  mode: HookMode;
  /** What the hook decided (in shadow mode, what it would have done). */
  decision: 'deny' | 'rewrite' | 'pass';
  /** The decision as evaluated: its matched checks. */
  evaluated: CommandDecision;
  answers: readonly CheckAnswer[];
  forced: boolean;
  latencyMs: number;
  at: number;
}

/**
 * The ledger entry for one hook decision, pure. The receipts relied on are the
 * matched checks' CURRENT, PASS, reusable ones: for a deny, every check; for a
 * rewrite, those `--if-due` would skip at their turn (the rewrite's own run
 * records what it did skip, so `vouch savings` counts a rewrite's saving from
 * that run in enforce mode, and from here only in shadow mode, where no run follows).
 */
export function hookLedgerEntry(facts: HookFacts): LedgerEntry {
  const checks = facts.evaluated.checks;
  const receipts: LedgerReceipt[] = [];
  if (facts.decision !== 'pass') {
    for (const name of checks) {
      const answer = facts.answers.find((candidate) => candidate.name === name);
      if (!answer || answer.freshness !== 'CURRENT' || answer.result !== 'PASS' || !answer.reuseEligible || answer.runId === null) continue;
      receipts.push({ check: name, run_id: answer.runId, duration_ms: Math.max(0, Math.round(answer.durationMs ?? 0)) });
    }
  }
  return {
    at: facts.at,
    source: 'hook',
    host: facts.host,
    session: facts.session,
    mode: facts.mode,
    decision: facts.decision,
    forced: facts.forced,
    command: truncateCommand(facts.command),
    checks,
    receipts,
    latency_ms: Math.max(0, Math.round(facts.latencyMs)),
  };
}
