import { createHash } from 'node:crypto';
import type { ListingNames } from './listingNames.js';
import type { PathFacts } from './runFacts.js';
export { isSkippedPath } from './systemPaths.js';

/**
 * A traced receipt's evidence: one entry per path its run touched, fingerprinted by what the
 * run did with it. Pure: the looking is fs/evidenceLook.ts's.
 *
 * - `read` (opened for reading, or executed): the file's content.
 * - `listed` (a directory's entries were read): a digest of its names.
 * - `lookup` (stat, access, readlink, an open that found nothing): only the answer: absent,
 *   file, directory or other, a symbolic link's target, and for a file its size and modification
 *   time (what a tool that trusts stat alone decides from).
 *
 * Every entry also records whether the path itself is a symbolic link and where it points, so
 * a link retargeted at a file of the same bytes is still seen by a run that resolved it.
 *
 * An entry the run wrote (created, truncated, renamed or removed) is `own`: the run's cache,
 * or an output it read back. It is fingerprinted by what the run left there, as any other
 * entry: a later change by anyone else makes the receipt STALE; the run's own change does not.
 * A path the run only wrote and never read, listed or looked up is no input and has no entry.
 */

export type EvidenceUse = 'read' | 'listed' | 'lookup';
export type EvidenceType = 'absent' | 'file' | 'directory' | 'other' | 'error';

export interface EvidenceEntry {
  /** Relative to the root inside it ('.' for the root itself), absolute outside it. */
  path: string;
  use: EvidenceUse;
  /** The run wrote it. */
  own?: true;
  /** What is at the path, links followed ('error' when looking failed otherwise than "not there"). */
  type: EvidenceType;
  /** The target, when the path itself is a symbolic link. */
  link?: string;
  /** For a file the run executed: whether it may be executed (any execute bit). */
  executable?: boolean;
  /** For a listing: bound only to the names its lister could act on (core/listingNames.ts); absent, to all. */
  names?: ListingNames;
  /** sha256 of the bytes (read file), of the names (listed directory), `SIZE:MTIME_NS` (looked-up file), or the errno ('error'). */
  digest?: string;
}

/** Evidence entries sorted by path, and their digest. */
export interface Evidence {
  entries: EvidenceEntry[];
  digest: string;
}

/** Kept apart from the input manifests' digests, which share a table with these. */
const DOMAIN = 'vouch evidence 1\n';

function field(value: string | undefined): string {
  return value === undefined ? '-' : `${value.length}:${value}`;
}

/** One entry's line in the digest; every variable part carries its length, so no two entries share a line. */
export function evidenceLine(entry: EvidenceEntry): string {
  const exec = entry.executable === undefined ? '' : entry.executable ? ' x' : ' -';
  // Absent on the entries made before listings had filters: their lines, and digests, are unchanged.
  const names = entry.names === undefined ? '' : ` n:${entry.names}`;
  return `${field(entry.path)} ${entry.use} ${entry.own ? 'o' : '-'} ${entry.type} ${field(entry.link)} ${entry.digest ?? '-'}${exec}${names}\n`;
}

export function compareEvidencePaths(a: EvidenceEntry, b: EvidenceEntry): number {
  return a.path < b.path ? -1 : a.path > b.path ? 1 : 0;
}

/** Entries must be sorted by path (compareEvidencePaths). */
export function evidenceOf(entries: EvidenceEntry[]): Evidence {
  const hash = createHash('sha256').update(DOMAIN);
  let chunk = '';
  for (const entry of entries) {
    chunk += evidenceLine(entry);
    if (chunk.length > 1 << 16) {
      hash.update(chunk);
      chunk = '';
    }
  }
  hash.update(chunk);
  return { entries, digest: hash.digest('hex') };
}

/** What a fact asks to be compared: its listing over its content, its content over its answer. */
export function useOf(facts: PathFacts): EvidenceUse | null {
  if (facts.listed !== undefined) return 'listed';
  if (facts.read !== undefined || facts.executed) return 'read';
  if (facts.lookup !== undefined || facts.linkTarget !== undefined) return 'lookup';
  // Only written: an output, not an input.
  return null;
}

/** The evidence path of an absolute path: relative inside `realRoot`, absolute outside. */
export function evidencePath(path: string, realRoot: string): string {
  if (path === realRoot) return '.';
  if (path.startsWith(realRoot) && path.charCodeAt(realRoot.length) === 47) return path.slice(realRoot.length + 1);
  if (realRoot === '/') return path.slice(1) || '.';
  return path;
}

/** The absolute path of an evidence path. */
export function absoluteEvidencePath(path: string, realRoot: string): string {
  if (path.startsWith('/')) return path;
  if (path === '.') return realRoot;
  return realRoot === '/' ? `/${path}` : `${realRoot}/${path}`;
}

/** Whether two entries of one path say the same. */
export function sameEvidence(a: EvidenceEntry, b: EvidenceEntry): boolean {
  return evidenceLine(a) === evidenceLine(b);
}

export interface EvidenceChange {
  path: string;
  use: EvidenceUse;
  before: EvidenceEntry;
  now: EvidenceEntry;
}

/** The entries that differ, in path order; both lists hold the same paths in the same order. */
export function diffEvidence(before: readonly EvidenceEntry[], now: readonly EvidenceEntry[]): EvidenceChange[] {
  const changes: EvidenceChange[] = [];
  for (let index = 0; index < before.length; index++) {
    const old = before[index]!;
    const fresh = now[index];
    if (fresh === undefined || !sameEvidence(old, fresh)) changes.push({ path: old.path, use: old.use, before: old, now: fresh ?? { ...old, type: 'absent' } });
  }
  return changes;
}

/** "src/a.ts: content changed", for reasons and explain. */
export function describeEvidenceChange(change: EvidenceChange): string {
  const { before, now } = change;
  if (before.type !== now.type) return `${change.path}: ${describeType(before)} → ${describeType(now)}`;
  if (before.link !== now.link) return `${change.path}: link ${before.link === undefined ? 'appeared' : now.link === undefined ? 'replaced by a ' + now.type : 'retargeted to ' + now.link}`;
  if (before.executable !== now.executable) return `${change.path}: ${now.executable ? 'made executable' : 'no longer executable'}`;
  if (before.use === 'listed') return `${change.path}: entries ${before.names?.startsWith('typescript') ? 'TypeScript can include ' : ''}added, removed or changed kind`;
  if (before.use === 'lookup') return `${change.path}: size or modification time changed`;
  return `${change.path}: content changed`;
}

function describeType(entry: EvidenceEntry): string {
  return entry.type === 'absent' ? 'absent' : entry.type === 'error' ? `unreadable (${entry.digest ?? 'error'})` : `a ${entry.type}`;
}
