import { lstatSync, type BigIntStats } from 'node:fs';
import { identityOf, isRacy } from '../core/identity.js';
import type { InputEntry } from '../core/manifest.js';
import { reason, type Reason } from '../core/reason.js';
import type { StatCache } from '../core/statCache.js';
import { hashFile } from './hashFile.js';

/** A source file as looked at: its entry and the identity its digest was read under. */
export interface LookedSource {
  entry: InputEntry;
  identity: string;
}

/**
 * A source path bound by content: a regular file's digest (the stat cache's,
 * while its identity is unchanged) and executable bit. Anything that is not a
 * regular file comes back as its stats, for the caller to record (a link) or
 * refuse; null when nothing is there.
 */
export function lookSourceFile(root: string, path: string, statCache: StatCache, observedAtNs: bigint): LookedSource | BigIntStats | Reason | null {
  const abs = `${root}/${path}`;
  for (let attempt = 0; attempt < 3; attempt++) {
    const stats = lstatAt(abs, path);
    if (stats === null || 'code' in stats) return stats;
    if (!stats.isFile()) return stats;
    const identity = identityOf(stats);
    const cached = statCache.get(path);
    let digest: string;
    if (cached?.identity === identity) {
      digest = cached.digest;
    } else {
      try {
        digest = hashFile(abs, Number(stats.size));
      } catch (error) {
        return unreadable(path, error);
      }
      // A write while hashing would bind the digest to bytes that never existed whole.
      const after = lstatAt(abs, path);
      if (after === null || 'code' in after || identityOf(after) !== identity) continue;
      if (isRacy(stats, observedAtNs)) statCache.delete(path);
      else statCache.set(path, identity, digest);
    }
    return { entry: { path, origin: 'source', type: 'file', digest, executable: (stats.mode & 0o111n) !== 0n }, identity };
  }
  return reason('input-changing', `${path} kept changing while vouch read it; run again once writes have finished`);
}

export function lstatAt(abs: string, path: string): BigIntStats | Reason | null {
  try {
    return lstatSync(abs, { bigint: true, throwIfNoEntry: false }) ?? null;
  } catch (error) {
    return unreadable(path, error);
  }
}

export function unreadable(path: string, error: unknown): Reason {
  const code = (error as NodeJS.ErrnoException).code ?? 'error';
  return reason('input-unreadable', `cannot read ${path} (${code}); fix its permissions, or exclude it with "!${path}" in the check's inputs`);
}
