import type { Output } from '../core/output.js';
import type { Receipt } from '../core/receipt.js';
import { formatCount } from '../core/formatCount.js';

export { formatAge, formatDuration } from '../core/humanTime.js';
export { iso, receiptJson, receiptSummaryJson, statusJson } from '../api/reportJson.js';

export function writeNotices(stderr: Output, notices: readonly string[]): void {
  for (const notice of notices) stderr.write(`vouch: ${notice}\n`);
}

/** Left-aligned columns, two spaces apart. */
export function table(rows: string[][]): string {
  return tableLines(rows).join('\n') + '\n';
}

/**
 * A table whose body rows may each be followed by lines of their own, indented two spaces and
 * outside the columns (a receipt's notes): `after[i]` follows `rows[i + 1]`, the header having none.
 */
export function tableWithLines(rows: string[][], after: readonly (readonly string[])[]): string {
  return tableLines(rows).flatMap((line, index) => [line, ...(index === 0 ? [] : (after[index - 1] ?? []).map((extra) => `  ${extra}`))]).join('\n') + '\n';
}

function tableLines(rows: string[][]): string[] {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, index) => (widths[index] = Math.max(widths[index] ?? 0, cell.length)));
  return rows.map((row) => row.map((cell, index) => (index === row.length - 1 ? cell : cell.padEnd(widths[index] ?? 0))).join('  '));
}

/*
 * A receipt's evidence in the text of status, run and log: its mode in a few words, and its
 * notes one line each. A declared receipt with nothing to note says nothing, so the output of a
 * project that never asked for tracing is as it was.
 */

/** Whether a receipt's evidence is worth a word: traced, or noted (a traced check that fell back). */
export function evidenceWorthShowing(receipt: Receipt | null): boolean {
  // An observer started by an older vouch sends receipts without evidence: declared, nothing to say.
  const evidence = receipt?.evidence;
  return evidence !== undefined && (evidence.mode === 'traced' || evidence.notes.length > 0);
}

/** "traced, 412 paths", or "declared". */
export function evidenceText(receipt: Receipt): string {
  if (receipt.evidence?.mode !== 'traced') return 'declared';
  const count = receipt.inputCount;
  return `traced, ${formatCount(count)} ${count === 1 ? 'path' : 'paths'}`;
}

/** One line per note: its message, then its code, as errors are shown. */
export function evidenceNoteLines(receipt: Receipt | null): string[] {
  return (receipt?.evidence?.notes ?? []).map((note) => `note: ${note.message} [${note.code}]`);
}
