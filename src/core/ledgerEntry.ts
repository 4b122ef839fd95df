/*
 * One ledger entry: what vouch decided about one command an agent was about to
 * run (source "hook"), or one check `vouch run --if-due` or the MCP run tool
 * skipped (sources "run", "mcp"). docs/hooks.md, "The ledger", describes the
 * fields. Entries are statistics for `vouch savings`, never evidence: nothing
 * decides from them.
 */

export const LEDGER_SOURCES = ['hook', 'run', 'mcp'] as const;
export const LEDGER_DECISIONS = ['deny', 'rewrite', 'pass', 'skip'] as const;
export const HOOK_MODES = ['enforce', 'shadow'] as const;

export type LedgerSource = (typeof LEDGER_SOURCES)[number];
export type LedgerDecision = (typeof LEDGER_DECISIONS)[number];
export type HookMode = (typeof HOOK_MODES)[number];

/** A receipt a decision relied on: what rerunning its check would have cost. */
export interface LedgerReceipt {
  check: string;
  run_id: string;
  duration_ms: number;
}

/** In snake_case, as it is spooled and stored. */
export interface LedgerEntry {
  /** Milliseconds since the epoch. */
  at: number;
  source: LedgerSource;
  host: 'claude' | 'codex' | null;
  /** The host's session id; null outside a hook. */
  session: string | null;
  mode: HookMode;
  decision: LedgerDecision;
  /** VOUCH_FORCE=1 made the command run as typed. */
  forced: boolean;
  /** The command, cut to COMMAND_MAX characters; null for a run or MCP skip. */
  command: string | null;
  checks: string[];
  /** The CURRENT, PASS, reusable receipts the decision relied on (a deny, a skip, or what a rewrite's --if-due would skip). */
  receipts: LedgerReceipt[];
  /** The decision's own time: the hook process's, or the skip's. */
  latency_ms: number | null;
}

/** A command is kept to this many characters: enough to recognise, never the 100 KB an agent may send. */
export const COMMAND_MAX = 512;
/** A session id longer than this is not a host's. */
const SESSION_MAX = 200;
/** A fan-out may name many package checks; a row names at most this many. */
const CHECKS_MAX = 500;

export function truncateCommand(command: string): string {
  if (command.length <= COMMAND_MAX) return command;
  let end = COMMAND_MAX - 1;
  // Never between the two halves of a surrogate pair.
  const last = command.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${command.slice(0, end)}…`;
}

/**
 * An entry read back from the spool, checked field by field: the state dir is
 * a file anyone with the checkout can write, so a line that is not exactly an
 * entry is dropped, never stored.
 */
export function ledgerEntryFrom(value: unknown): LedgerEntry | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const v = value as Record<string, unknown>;
  if (!isCount(v.at)) return null;
  if (!includes(LEDGER_SOURCES, v.source) || !includes(LEDGER_DECISIONS, v.decision) || !includes(HOOK_MODES, v.mode)) return null;
  if (v.host !== null && v.host !== 'claude' && v.host !== 'codex') return null;
  if (v.session !== null && !(typeof v.session === 'string' && v.session.length <= SESSION_MAX)) return null;
  if (typeof v.forced !== 'boolean') return null;
  if (v.command !== null && typeof v.command !== 'string') return null;
  if (!Array.isArray(v.checks) || v.checks.length > CHECKS_MAX || !v.checks.every((name) => typeof name === 'string' && name.length <= 300)) return null;
  if (!Array.isArray(v.receipts) || v.receipts.length > CHECKS_MAX) return null;
  const receipts: LedgerReceipt[] = [];
  for (const item of v.receipts as unknown[]) {
    if (typeof item !== 'object' || item === null) return null;
    const r = item as Record<string, unknown>;
    if (typeof r.check !== 'string' || typeof r.run_id !== 'string' || r.run_id.length > 100 || !isCount(r.duration_ms)) return null;
    receipts.push({ check: r.check, run_id: r.run_id, duration_ms: r.duration_ms });
  }
  if (v.latency_ms !== null && !isCount(v.latency_ms)) return null;
  return {
    at: v.at,
    source: v.source,
    host: v.host,
    session: v.session,
    mode: v.mode,
    decision: v.decision,
    forced: v.forced,
    command: v.command === null ? null : truncateCommand(v.command),
    checks: v.checks as string[],
    receipts,
    latency_ms: v.latency_ms,
  };
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

function includes<T extends string>(values: readonly T[], value: unknown): value is T {
  return typeof value === 'string' && (values as readonly string[]).includes(value);
}
