import { lstatSync } from 'node:fs';
import { changedSince, identityOf } from '../core/identity.js';
import type { ManifestBasis } from '../core/manifest.js';
import { startPathStats } from '../fs/nativeTreeScan.js';

/**
 * The sources of a check whose ctime is not before `sinceMs`, less a tick of the file system's
 * clock (core/identity.ts changedSince), sorted: after a run, those its check may have seen other
 * bytes of than the receipt records, whatever the digest says (exec/runCheck.ts).
 *
 * Every source is lstat'ed now, not taken from the stat cache: a file written through a hard link
 * outside the root, which it had only while the check ran, raises no event here, and its cached
 * identity would be the one from before. One that cannot be looked at counts as written.
 */
export function writtenSince(root: string, basis: ManifestBasis, sinceMs: number): string[] {
  const sinceNs = BigInt(sinceMs) * 1_000_000n;
  const paths: string[] = [];
  for (const entry of basis.entries) if (entry.origin === 'source') paths.push(entry.path);
  // On the addon's threads where it is built; its identity is null for what is not a regular file (a link).
  const identities = startPathStats(root, paths)?.finish().identities ?? null;
  const written: string[] = [];
  for (let index = 0; index < paths.length; index++) {
    const identity = identities?.[index] ?? lookedAt(`${root}/${paths[index]}`);
    if (identity === null || changedSince(identity, sinceNs)) written.push(paths[index]!);
  }
  return written.sort();
}

function lookedAt(abs: string): string | null {
  try {
    const stats = lstatSync(abs, { bigint: true, throwIfNoEntry: false });
    return stats ? identityOf(stats) : null;
  } catch {
    return null;
  }
}
