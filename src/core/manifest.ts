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

export function entryLine(entry: InputEntry): string {
  switch (entry.type) {
    case 'symlink':
      return JSON.stringify([entry.path, entry.origin, 'l', entry.target]);
    default:
      return entry.origin === 'source'
        ? JSON.stringify([entry.path, 's', entry.digest, entry.executable ? 'x' : '-'])
        : JSON.stringify([entry.path, 'i', entry.identity, entry.digest ?? '']);
  }
}

/** Entries must already be sorted by path: the digest is order-sensitive by design. */
export function manifestOf(entries: InputEntry[]): Manifest {
  const hash = createHash('sha256');
  for (const entry of entries) hash.update(entryLine(entry) + '\n');
  return { entries, digest: hash.digest('hex') };
}

export function comparePaths(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
