import { lstatSync, readdirSync, readlinkSync, statSync, type BigIntStats } from 'node:fs';
import { createHash } from 'node:crypto';
import { absoluteEvidencePath, type EvidenceEntry, type EvidenceUse } from '../core/evidence.js';
import { identityOf, isRacy } from '../core/identity.js';
import { keepsName, type ListingNames } from '../core/listingNames.js';
import type { StatCache } from '../core/statCache.js';
import { hashFile } from './hashFile.js';

/**
 * An entry as looked at now, and the latest ctime of what is at the path: the link itself, if the
 * path is one, and what it leads to. A change made while a run ran moves one of them.
 */
export interface Looked {
  entry: EvidenceEntry;
  ctimeNs: bigint | null;
}

const ABSENT = new Set(['ENOENT', 'ENOTDIR']);

/** The 'error' digest of a file that kept changing while it was hashed: never a settled answer. */
export const CHANGING = 'changing';

/**
 * Looks at evidence paths as a run's entries say to: content for reads, names for listings,
 * the answer for lookups. Files are hashed through the stat cache, keyed by the evidence path:
 * a file whose identity (inode, size, mode, link count, mtime, ctime) is unchanged is not read
 * again. A hard-linked file in a shared store whose link count or ctime changed is read again,
 * and the same bytes give the same digest: identity churn costs a read, never a STALE.
 */
export class EvidenceLooker {
  constructor(
    private readonly realRoot: string,
    private readonly statCache: StatCache,
    private readonly observedAtNs: bigint,
  ) {}

  /**
   * `statDigest` false: a looked-up file's size and time are not asked (its bytes are read under
   * another name). `execBit`: a file the run executed also records whether it may be executed.
   * `names`: a listing bound only to the names its lister could act on.
   */
  look(path: string, use: EvidenceUse, own: boolean, statDigest = true, execBit = false, names?: ListingNames): Looked {
    const abs = absoluteEvidencePath(path, this.realRoot);
    const base: Pick<EvidenceEntry, 'path' | 'use' | 'own' | 'names'> = own ? { path, use, own: true } : { path, use };
    if (use === 'listed' && names !== undefined) base.names = names;
    let link: string | undefined;
    let linkCtimeNs: bigint | null = null;
    // Not a link: lstat said all stat would, and the first look needs no second call.
    let known: BigIntStats | undefined;
    try {
      const lstats = lstatSync(abs, { bigint: true, throwIfNoEntry: false });
      if (lstats === undefined) return { entry: { ...base, type: 'absent' }, ctimeNs: null };
      if (!lstats.isSymbolicLink()) known = lstats;
      else {
        link = readlinkSync(abs, { encoding: 'buffer' }).toString('latin1');
        linkCtimeNs = lstats.ctimeNs;
      }
    } catch (error) {
      return failed(base, error);
    }
    const latest = (ctimeNs: bigint | null) => (linkCtimeNs !== null && (ctimeNs === null || linkCtimeNs > ctimeNs) ? linkCtimeNs : ctimeNs);
    const looked = (entry: EvidenceEntry, ctimeNs: bigint | null): Looked => ({ entry, ctimeNs: latest(ctimeNs) });
    const withLink = link === undefined ? base : { ...base, link };
    for (let attempt = 0; attempt < 3; attempt++) {
      let stats: BigIntStats | undefined = known;
      known = undefined;
      try {
        stats ??= statSync(abs, { bigint: true, throwIfNoEntry: false });
      } catch (error) {
        return failed(withLink, error);
      }
      // A dangling link: the path names nothing.
      if (stats === undefined) return looked({ ...withLink, type: 'absent' }, null);
      const ctimeNs = stats.ctimeNs;
      if (stats.isDirectory()) {
        if (use !== 'listed') return looked({ ...withLink, type: 'directory' }, ctimeNs);
        try {
          return looked({ ...withLink, type: 'directory', digest: namesDigest(abs, names) }, ctimeNs);
        } catch (error) {
          return failed(withLink, error);
        }
      }
      if (!stats.isFile()) return looked({ ...withLink, type: 'other' }, ctimeNs);
      // A lookup of a file is answered with its size and modification time too: a tool that
      // decides from them alone (eslint --cache, prettier --cache, tsc -b's up-to-date check, make)
      // does not read a file whose stat it finds unchanged.
      if (use === 'lookup' && statDigest) return looked({ ...withLink, type: 'file', digest: `${stats.size}:${stats.mtimeNs}` }, ctimeNs);
      if (use !== 'read') return looked({ ...withLink, type: 'file' }, ctimeNs);
      const identity = identityOf(stats);
      const cached = this.statCache.get(path);
      const file = execBit ? { ...withLink, executable: (stats.mode & 0o111n) !== 0n } : withLink;
      if (cached?.identity === identity) return looked({ ...file, type: 'file', digest: cached.digest }, ctimeNs);
      let digest: string;
      try {
        digest = hashFile(abs, Number(stats.size));
      } catch (error) {
        return failed(withLink, error);
      }
      // A write while hashing would bind the digest to bytes that never existed whole.
      const after = statSync(abs, { bigint: true, throwIfNoEntry: false });
      if (after === undefined || identityOf(after) !== identity) continue;
      if (isRacy(stats, this.observedAtNs)) this.statCache.delete(path);
      else this.statCache.set(path, identity, digest);
      return looked({ ...file, type: 'file', digest }, ctimeNs);
    }
    return { entry: { ...withLink, type: 'error', digest: CHANGING }, ctimeNs: null };
  }
}

/**
 * sha256 of a directory's entries, sorted by name bytes: each name, the kind of entry (file,
 * directory, link, other) and a NUL (the one byte no name holds). A walker that keeps only files
 * decides from the kind as much as from the name. With `names`, only the entries its lister could
 * act on, judged by the name's bytes (latin1 keeps every byte as one character: a dot is a dot).
 */
function namesDigest(abs: string, names?: ListingNames): string {
  const entries = readdirSync(abs, { encoding: 'buffer', withFileTypes: true }) as unknown as { name: Buffer; isFile(): boolean; isDirectory(): boolean; isSymbolicLink(): boolean }[];
  entries.sort((a, b) => Buffer.compare(a.name, b.name));
  const hash = createHash('sha256');
  for (const entry of entries) {
    const kind = entry.isFile() ? 'file' : entry.isDirectory() ? 'directory' : entry.isSymbolicLink() ? 'link' : 'other';
    if (names !== undefined && !keepsName(names, entry.name.toString('latin1'), kind)) continue;
    hash.update(entry.name).update(KIND_MARK[kind]);
  }
  return hash.digest('hex');
}

const KIND_MARK = { file: '/f\0', directory: '/d\0', link: '/l\0', other: '/o\0' } as const;

function failed(base: Pick<EvidenceEntry, 'path' | 'use' | 'own' | 'link'>, error: unknown): Looked {
  const code = (error as NodeJS.ErrnoException).code ?? 'EIO';
  if (ABSENT.has(code)) return { entry: { ...base, type: 'absent' }, ctimeNs: null };
  return { entry: { ...base, type: 'error', digest: code }, ctimeNs: null };
}
