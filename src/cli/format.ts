import type { CheckStatus } from '../core/decide.js';
import type { Receipt } from '../core/receipt.js';

export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes}m${Math.round((ms % 60_000) / 1000)}s`;
}

export function formatAge(fromMs: number, nowMs = Date.now()): string {
  const seconds = Math.max(0, Math.round((nowMs - fromMs) / 1000));
  if (seconds < 60) return `${seconds}s ago`;
  if (seconds < 3600) return `${Math.round(seconds / 60)}m ago`;
  if (seconds < 86_400) return `${Math.round(seconds / 3600)}h ago`;
  return `${Math.round(seconds / 86_400)}d ago`;
}

/** The receipt summary that status, run and explain share in JSON. */
export function receiptSummaryJson(receipt: Receipt) {
  return {
    run_id: receipt.runId,
    started_at: iso(receipt.startedAt),
    finished_at: iso(receipt.finishedAt),
    duration_ms: receipt.durationMs,
    exit_code: receipt.exitCode,
    signal: receipt.signal,
  };
}

/** A whole receipt, as log and run report it. */
export function receiptJson(receipt: Receipt, stateDir: string) {
  return {
    ...receiptSummaryJson(receipt),
    check: receipt.check,
    result: receipt.result,
    reuse_eligible: receipt.reuseEligible,
    reasons: receipt.reasons,
    input_count: receipt.inputCount,
    log_path: `${stateDir}/${receipt.logPath}`,
  };
}

export function statusJson(status: CheckStatus) {
  return {
    name: status.name,
    kind: status.kind,
    freshness: status.freshness,
    result: status.result,
    reuse_eligible: status.reuseEligible,
    reasons: status.reasons,
    receipt: status.receipt ? receiptSummaryJson(status.receipt) : null,
  };
}

export function writeNotices(stderr: NodeJS.WritableStream, notices: readonly string[]): void {
  for (const notice of notices) stderr.write(`vouch: ${notice}\n`);
}

/** Left-aligned columns, two spaces apart. */
export function table(rows: string[][]): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, index) => (widths[index] = Math.max(widths[index] ?? 0, cell.length)));
  return rows.map((row) => row.map((cell, index) => (index === row.length - 1 ? cell : cell.padEnd(widths[index] ?? 0))).join('  ')).join('\n') + '\n';
}
