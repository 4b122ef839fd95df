import type { BigIntStats } from 'node:fs';

/**
 * A file's identity: what changes whenever the file may have changed without
 * reading it. mtime alone is not enough (npm stamps every extracted file with
 * one fixed mtime), so inode and ctime are part of it; ctime cannot be set back.
 */
export function identityOf(stats: BigIntStats): string {
  return [
    stats.dev,
    stats.ino,
    stats.size,
    (stats.mode & 0o7777n).toString(8),
    stats.nlink,
    stats.mtimeNs,
    stats.ctimeNs,
  ].join(':');
}

export const IDENTITY_FIELDS = ['dev', 'ino', 'size', 'mode', 'nlink', 'mtime_ns', 'ctime_ns'] as const;

/**
 * An identity's link count; NaN when it has none. Without split: a full scan asks this of every
 * input, and 100k arrays of 7 strings were 20 MB of garbage.
 */
export function linkCountOf(identity: string): number {
  let at = -1;
  for (let field = 0; field < 4; field++) {
    at = identity.indexOf(':', at + 1);
    if (at < 0) return Number.NaN;
  }
  const end = identity.indexOf(':', at + 1);
  return Number(identity.slice(at + 1, end < 0 ? identity.length : end));
}

/** An identity's ctime in nanoseconds (its last field); null when it has none. */
function ctimeNsOf(identity: string): bigint | null {
  const at = identity.lastIndexOf(':');
  if (at < 0) return null;
  try {
    return BigInt(identity.slice(at + 1));
  } catch {
    return null;
  }
}

/**
 * Whether a file with this identity may have changed at or after `sinceNs`: its ctime, which the
 * kernel sets to "now" on every change and nobody can set back, falls within a tick of the file
 * system's clock of that moment or later. An identity without a ctime may have.
 */
export function changedSince(identity: string, sinceNs: bigint): boolean {
  const ctimeNs = ctimeNsOf(identity);
  return ctimeNs === null || ctimeNs + racyWindowNs(ctimeNs) > sinceNs;
}

export function identityFields(identity: string): Record<(typeof IDENTITY_FIELDS)[number], string> {
  const parts = identity.split(':');
  return Object.fromEntries(IDENTITY_FIELDS.map((field, index) => [field, parts[index] ?? ''])) as Record<
    (typeof IDENTITY_FIELDS)[number],
    string
  >;
}

/**
 * Timestamps are written in ticks of the file system's clock. A file whose
 * ctime falls within a tick of the moment we looked could still be rewritten
 * with the same size and timestamps, so its identity proves nothing yet.
 * Whole-second timestamps mean a coarse file system (ext3, HFS+, FAT): assume
 * two seconds there; otherwise a generous bound on the kernel's coarse clock.
 */
export function racyWindowNs(ctimeNs: bigint): bigint {
  return ctimeNs % 1_000_000_000n === 0n ? 2_000_000_000n : 50_000_000n;
}

/** ctime, not mtime: the kernel sets ctime to "now" on every change, and nobody can set it back or ahead. */
export function isRacy(stats: BigIntStats, observedAtNs: bigint): boolean {
  return stats.ctimeNs + racyWindowNs(stats.ctimeNs) > observedAtNs;
}

export function nowNs(): bigint {
  return BigInt(Date.now()) * 1_000_000n;
}
