import { createHash } from 'node:crypto';

/**
 * One input as observed. Source files are bound by content (digest plus the
 * executable bit); installed files by identity, plus content when the identity
 * alone cannot be trusted (hard links). Links are recorded as links.
 */
export type InputEntry =
  | { path: string; origin: 'source'; type: 'file'; digest: string; executable: boolean }
  | { path: string; origin: 'installed'; type: 'file'; identity: string; digest?: string }
  | { path: string; origin: 'source' | 'installed'; type: 'symlink'; target: string };

/** The entries of one observation, sorted by path, and their digest. */
export interface Manifest {
  entries: InputEntry[];
  digest: string;
}

/**
 * One entry's line in the digest. Paths and link targets may hold any byte
 * but NUL, newlines included, so each is prefixed with its length: no two
 * different entries can make the same line.
 */
export function entryLine(entry: InputEntry): string {
  const path = `${entry.path.length}:${entry.path}`;
  switch (entry.type) {
    case 'symlink':
      return `${path} ${entry.origin} l ${entry.target.length}:${entry.target}\n`;
    default:
      return entry.origin === 'source'
        ? `${path} s ${entry.digest} ${entry.executable ? 'x' : '-'}\n`
        : `${path} i ${entry.identity} ${entry.digest ?? '-'}\n`;
  }
}

const LINES_PER_UPDATE = 512;

/** Entries must already be sorted by path: the digest is order-sensitive by design. */
export function manifestOf(entries: InputEntry[]): Manifest {
  const hash = createHash('sha256');
  for (let start = 0; start < entries.length; start += LINES_PER_UPDATE) {
    let chunk = '';
    const end = Math.min(entries.length, start + LINES_PER_UPDATE);
    for (let index = start; index < end; index++) chunk += entryLine(entries[index] as InputEntry);
    hash.update(chunk);
  }
  return { entries, digest: hash.digest('hex') };
}

export function comparePaths(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
