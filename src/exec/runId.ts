import { randomBytes } from 'node:crypto';

/** Sortable by time, unique without coordination: "20261202T181633Z-3f9a1c". */
export function newRunId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  return `${stamp}-${randomBytes(3).toString('hex')}`;
}
