import { lstatSync, realpathSync } from 'node:fs';
import { absoluteEvidencePath, evidenceOf, type EvidenceEntry } from '../core/evidence.js';
import { linkCountOf, nowNs } from '../core/identity.js';
import type { StatCache } from '../core/statCache.js';
import { EvidenceLooker } from '../fs/evidenceLook.js';
import { knownFiles, lookAgain, verifiedOf, verifyEvidence, type VerifiedEvidence } from '../fs/verifyEvidence.js';
import type { Change, ChangeLog, ChangeMark } from './changeLog.js';

/**
 * A traced receipt's evidence as the observer last looked at it, kept between answers, so that
 * the next answer looks again only at what the watcher's events say may have changed since, and
 * at what no event under the root can tell about:
 *
 * - a path outside the root;
 * - a path that is a symbolic link, or has one among the directories above it inside the root
 *   (an event names the target's path, not the link's);
 * - a file read with a link count above 1, or whose link count is not known: a write through
 *   another hard link (a package store's) raises no event here;
 * - a looked-up file (its size and time are the answer, and it may be hard-linked too);
 * - an entry whose look failed, and a path that is not plain ASCII (events and evidence paths
 *   need not spell such a name with the same characters).
 *
 * An event naming a directory above any entry (created, deleted, moved or replaced by a link)
 * makes the next answer look at everything again, as does any mark the change log voids: a lost
 * event, a renewed watch, or a watcher that does not report its losses. Not seen, as by the
 * declared index (docs/observer.md): a file with one link that gains another from outside the
 * root, then is written through that one.
 */
export class KeptEvidence {
  private readonly kept = new Map<string, Kept>();

  constructor(
    private readonly root: string,
    private readonly statCache: StatCache,
    private readonly changes: ChangeLog,
    private readonly capacity = 32,
  ) {}

  /** Full looks and partial ones since the observer started, for its info and tests. */
  readonly counts = { full: 0, partial: 0, looked: 0 };

  verify(recorded: readonly EvidenceEntry[], expectedDigest: string): VerifiedEvidence {
    const mark = this.changes.mark();
    const realRoot = realpathSync.native(this.root);
    const kept = this.kept.get(expectedDigest);
    const changed = kept && mark && kept.realRoot === realRoot && kept.recorded === recorded ? this.changes.since(kept.mark) : null;
    const again = kept && changed ? affected(kept, changed, realRoot) : null;
    if (!kept || !mark || !again) return this.full(recorded, expectedDigest, realRoot, mark);
    this.counts.partial++;
    this.counts.looked += again.length;
    const looker = new EvidenceLooker(realRoot, this.statCache, nowNs());
    // Files with a known identity in bulk, on the addon's threads, as a full look does: a package store's hard links are looked at on every answer.
    const identities = new Map<number, string>();
    const known = knownFiles(realRoot, recorded, this.statCache, again, identities);
    const entries = kept.entries.slice();
    let same = true;
    for (const index of again) {
      const entry = known.get(index) ?? lookAgain(looker, recorded[index]!);
      if (!sameEntry(entry, entries[index]!)) same = false;
      entries[index] = entry;
      kept.always[index] = kept.unwatched[index] === 1 || alwaysLooked(recorded[index]!, entry, identities.get(index) ?? this.statCache.get(entry.path)?.identity) ? 1 : 0;
    }
    const verified = verifiedOf(recorded, entries, expectedDigest, same ? kept.digest : evidenceOf(entries).digest);
    this.keep(expectedDigest, { ...kept, mark, entries, digest: verified.digest });
    return verified;
  }

  private full(recorded: readonly EvidenceEntry[], expectedDigest: string, realRoot: string, mark: ChangeMark | null): VerifiedEvidence {
    this.counts.full++;
    this.counts.looked += recorded.length;
    const verified = verifyEvidence(this.root, recorded, this.statCache, expectedDigest);
    // Entries are found by path with a binary search: evidence is stored sorted, and any that is not is looked at whole every time.
    if (mark === null || !sortedByPath(recorded)) return verified;
    const linkAbove = linksAbove(realRoot);
    const always = new Uint8Array(recorded.length);
    const unwatched = new Uint8Array(recorded.length);
    const reads: number[] = [];
    for (let index = 0; index < recorded.length; index++) {
      const path = recorded[index]!.path;
      if (recorded[index]!.use === 'read') reads.push(index);
      unwatched[index] = unwatchedPath(path, linkAbove) ? 1 : 0;
      always[index] = unwatched[index] === 1 || alwaysLooked(recorded[index]!, verified.entries[index]!, this.statCache.get(path)?.identity) ? 1 : 0;
    }
    this.keep(expectedDigest, { mark, realRoot, recorded, entries: verified.entries, digest: verified.digest, always, unwatched, reads });
    return verified;
  }

  private keep(digest: string, kept: Kept): void {
    this.kept.delete(digest);
    if (this.kept.size >= this.capacity) this.kept.delete(this.kept.keys().next().value!);
    this.kept.set(digest, kept);
  }
}

interface Kept {
  mark: ChangeMark;
  realRoot: string;
  /** The receipt's entries, the same array the looks were of. */
  recorded: readonly EvidenceEntry[];
  /** As last looked at, in the recorded order. */
  entries: EvidenceEntry[];
  digest: string;
  /** 1 for an entry looked at on every answer. */
  always: Uint8Array;
  /** 1 for an entry whose path no event under the root names (outside it, through a link, not in the kernel's spelling): fixed until a full look. */
  unwatched: Uint8Array;
  /** The indexes of the files read. */
  reads: number[];
}

/**
 * The indexes to look at again, given the paths events named since the last look: those always
 * looked at, an entry of a named path, and the listing of a named path's directory. Null, and
 * everything is looked at again, when a directory above an entry was named, or the root itself.
 * Every file read is looked at again (in bulk, by identity) when a path was made that may be a new
 * hard link to one (not a directory, and with more than one link, or already gone: a temporary
 * file; but not one of git's lock files): a file raises no event under its own path when it gains
 * a link, nor when it is written through the new one, but its change time moves with either.
 */
function affected(kept: Kept, changed: readonly Change[], realRoot: string): number[] | null {
  const again = new Set<number>();
  for (let index = 0; index < kept.always.length; index++) if (kept.always[index] === 1) again.add(index);
  let reads = false;
  const { recorded } = kept;
  for (const { path, created } of changed) {
    if (path === '') return null;
    const below = lowerBound(recorded, `${path}/`);
    if (below < recorded.length && recorded[below]!.path.startsWith(`${path}/`)) return null;
    if (created && !reads && mayBeNewLink(absoluteEvidencePath(path, realRoot), path.startsWith('.git/'))) reads = true;
    const slash = path.lastIndexOf('/');
    for (const named of [path, slash === -1 ? '.' : path.slice(0, slash)]) {
      for (let index = lowerBound(recorded, named); index < recorded.length && recorded[index]!.path === named; index++) again.add(index);
    }
  }
  if (reads) for (const index of kept.reads) again.add(index);
  return [...again];
}

/** The first index whose path is not before `path`, in core/evidence.ts compareEvidencePaths's order. */
function lowerBound(recorded: readonly EvidenceEntry[], path: string): number {
  let low = 0;
  let high = recorded.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (recorded[middle]!.path < path) low = middle + 1;
    else high = middle;
  }
  return low;
}

function sortedByPath(recorded: readonly EvidenceEntry[]): boolean {
  for (let index = 1; index < recorded.length; index++) if (recorded[index - 1]!.path > recorded[index]!.path) return false;
  return true;
}

/**
 * `inGit`: a path under `.git/` that is gone again is git's own lock or temporary file (made with
 * O_EXCL, then renamed or removed), or an observer's cookie: git makes no hard link to a file of
 * the work tree, and its lock files come and go on every `git status` that refreshes the index.
 */
function mayBeNewLink(abs: string, inGit: boolean): boolean {
  try {
    const stats = lstatSync(abs, { throwIfNoEntry: false });
    return stats === undefined ? !inGit : !stats.isDirectory() && stats.nlink > 1;
  } catch {
    return true;
  }
}

/** Whether no event under the root names this path (the first items of KeptEvidence's list). */
function unwatchedPath(path: string, linkAbove: (path: string) => boolean): boolean {
  // Events name paths in the kernel's spelling: plain ASCII, no '.' or '..' components, no '//'.
  if (path.startsWith('/') || !/^[\x20-\x7e]*$/.test(path) || (path !== '.' && /(^|\/)\.{1,2}(\/|$)|\/\/|\/$/.test(path))) return true;
  return linkAbove(path);
}

/** Whether an entry as looked at now is one no event can tell of a change to (the rest of KeptEvidence's list); `identity`, its file's. */
function alwaysLooked(recorded: EvidenceEntry, now: EvidenceEntry, identity: string | undefined): boolean {
  if (recorded.link !== undefined || now.link !== undefined || now.type === 'error') return true;
  if (now.type === 'file' && recorded.use === 'lookup') return true;
  return now.type === 'file' && recorded.use === 'read' && (identity === undefined ? Number.NaN : linkCountOf(identity)) !== 1;
}

/** Whether two looks at one path say the same: the fields of core/evidence.ts evidenceLine, without making the lines. */
function sameEntry(a: EvidenceEntry, b: EvidenceEntry): boolean {
  return a.path === b.path && a.use === b.use && a.own === b.own && a.type === b.type && a.link === b.link && a.digest === b.digest && a.executable === b.executable && a.names === b.names;
}

/** Whether a directory above a root-relative path, inside the root, is a symbolic link (or cannot be told), each directory lstat'ed once. */
function linksAbove(realRoot: string): (path: string) => boolean {
  const known = new Map<string, boolean>();
  const isLink = (dir: string): boolean => {
    let link = known.get(dir);
    if (link === undefined) {
      try {
        const stats = lstatSync(absoluteEvidencePath(dir, realRoot), { throwIfNoEntry: false });
        link = stats !== undefined && !stats.isDirectory();
      } catch {
        link = true;
      }
      known.set(dir, link);
    }
    return link;
  };
  return (path) => {
    for (let slash = path.indexOf('/'); slash !== -1; slash = path.indexOf('/', slash + 1)) if (isLink(path.slice(0, slash))) return true;
    return false;
  };
}
