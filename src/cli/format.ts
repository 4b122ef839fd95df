import type { Output } from '../core/output.js';

export { formatAge, formatDuration } from '../core/humanTime.js';
export { iso, receiptJson, receiptSummaryJson, statusJson } from '../api/reportJson.js';

export function writeNotices(stderr: Output, notices: readonly string[]): void {
  for (const notice of notices) stderr.write(`vouch: ${notice}\n`);
}

/** Left-aligned columns, two spaces apart. */
export function table(rows: string[][]): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, index) => (widths[index] = Math.max(widths[index] ?? 0, cell.length)));
  return rows.map((row) => row.map((cell, index) => (index === row.length - 1 ? cell : cell.padEnd(widths[index] ?? 0))).join('  ')).join('\n') + '\n';
}
