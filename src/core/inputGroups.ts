import type { EvidenceEntry } from './evidence.js';
import { installedPackageOf } from './installedPackage.js';
import type { InputEntry } from './manifest.js';

/*
 * What a receipt depends on, grouped for people. A declared receipt's input
 * manifest: source inputs by top-level directory, installed inputs by package.
 * A traced receipt's evidence (core/evidence.ts): what its run read, listed
 * and looked up, each path in exactly one group (groupEvidence says which).
 */

export type DeclaredGroupKind = 'source' | 'installed';
export type TracedGroupKind = 'read' | 'listed' | 'found' | 'absent' | 'installed' | 'outside' | 'own';
export type InputGroupKind = DeclaredGroupKind | TracedGroupKind;

/** A traced receipt's groups, in the order they are shown. */
export const TRACED_GROUPS: readonly TracedGroupKind[] = ['read', 'listed', 'found', 'absent', 'installed', 'outside', 'own'];

/** A directory or package, and how many inputs are in it. */
export interface Bucket {
  name: string;
  count: number;
}

export interface InputGroup {
  kind: InputGroupKind;
  /** What the buckets are: top-level directories, or packages (installed). */
  by: 'directory' | 'package';
  count: number;
  /** Sorted by count, largest first, then by name. */
  buckets: Bucket[];
  /** Every path, sorted as the manifest (or the evidence) is. */
  paths: string[];
}

/** The bucket of a path by directory: its top-level directory, "." for a file in the root (or the root itself). */
export function topDirectoryOf(path: string): string {
  const slash = path.indexOf('/');
  return slash === -1 ? '.' : path.slice(0, slash);
}

/** The bucket of a directory: the top-level directory it is, or is in ("." for the root itself). */
export function directoryBucketOf(path: string): string {
  if (path === '.') return '.';
  const slash = path.indexOf('/');
  return slash === -1 ? path : path.slice(0, slash);
}

/**
 * The bucket of a path outside the root (absolute): the directory it is in. Its top directory
 * says only "/home" of everything in a home directory; what is read outside a project is few
 * paths (the system's own files are left out), each named by where it is.
 */
export function parentDirectoryOf(path: string): string {
  const slash = path.lastIndexOf('/');
  return slash <= 0 ? '/' : path.slice(0, slash);
}

/** The bucket of an installed file: its package, or its top-level directory when it is under no node_modules. */
export function installedBucketOf(path: string): string {
  return installedPackageOf(path) ?? topDirectoryOf(path);
}

/** How many paths fall in each bucket, sorted by count (largest first), then name. */
export function countBuckets(paths: Iterable<string>, bucketOf: (path: string) => string): Bucket[] {
  return sortBuckets(countBy(paths, bucketOf));
}

export function countBy(paths: Iterable<string>, bucketOf: (path: string) => string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const path of paths) {
    const name = bucketOf(path);
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  return counts;
}

export function sortBuckets(counts: Map<string, number>): Bucket[] {
  return [...counts].map(([name, count]) => ({ name, count })).sort((a, b) => b.count - a.count || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function group(kind: InputGroupKind, paths: string[]): InputGroup {
  return kind === 'installed'
    ? { kind, by: 'package', count: paths.length, buckets: countBuckets(paths, installedBucketOf), paths }
    : { kind, by: 'directory', count: paths.length, buckets: countBuckets(paths, topDirectoryOf), paths };
}

/** Both groups, always, in this order: source, then installed. */
export function groupInputs(entries: readonly Pick<InputEntry, 'path' | 'origin'>[]): InputGroup[] {
  const source: string[] = [];
  const installed: string[] = [];
  for (const entry of entries) (entry.origin === 'source' ? source : installed).push(entry.path);
  return [group('source', source), group('installed', installed)];
}

type EvidenceFacts = Pick<EvidenceEntry, 'path' | 'use' | 'own' | 'type'>;

/**
 * The installed package an evidence path belongs to (installedPackageOf), or null. A directory
 * is named as what it is: `node_modules/zod` (a package directory, looked up or listed) is the
 * package, not a file directly in `node_modules`.
 */
export function evidencePackageOf(entry: Pick<EvidenceEntry, 'path' | 'type'>): string | null {
  return installedPackageOf(entry.type === 'directory' ? `${entry.path}/-` : entry.path);
}

/**
 * The one group of a traced evidence entry. The first that applies wins:
 * - own: the run wrote it (its cache, or an output it read back);
 * - outside: an absolute path, outside the root;
 * - absent: looked for and not there (a module resolver's probe, an optional config);
 * - installed: under a node_modules directory (or one), counted by package;
 * - read, listed: by what the run did with it;
 * - found: looked up (stat, access, readlink) and there.
 */
export function tracedGroupOf(entry: EvidenceFacts): TracedGroupKind {
  if (entry.own) return 'own';
  if (entry.path.startsWith('/')) return 'outside';
  if (entry.type === 'absent') return 'absent';
  if (evidencePackageOf(entry) !== null) return 'installed';
  if (entry.use === 'read') return 'read';
  if (entry.use === 'listed') return 'listed';
  return 'found';
}

/** The bucket of an entry in its group: its package (installed), the directory it is in (outside), a listed directory's own top directory, else its top-level directory. */
function tracedBucketOf(kind: TracedGroupKind, entry: EvidenceFacts): string {
  switch (kind) {
    case 'installed':
      return evidencePackageOf(entry) ?? topDirectoryOf(entry.path);
    case 'outside':
      return evidencePackageOf(entry) ?? parentDirectoryOf(entry.path);
    case 'listed':
      return directoryBucketOf(entry.path);
    default:
      // The run's own paths may be outside the root too.
      return entry.path.startsWith('/') ? parentDirectoryOf(entry.path) : entry.type === 'directory' ? directoryBucketOf(entry.path) : topDirectoryOf(entry.path);
  }
}

/** Every traced group, always, in TRACED_GROUPS order, each path in exactly one. */
export function groupEvidence(entries: readonly EvidenceFacts[]): InputGroup[] {
  const members = new Map<TracedGroupKind, EvidenceFacts[]>(TRACED_GROUPS.map((kind) => [kind, []]));
  for (const entry of entries) members.get(tracedGroupOf(entry))!.push(entry);
  return TRACED_GROUPS.map((kind) => {
    const list = members.get(kind)!;
    const counts = new Map<string, number>();
    for (const entry of list) {
      const name = tracedBucketOf(kind, entry);
      counts.set(name, (counts.get(name) ?? 0) + 1);
    }
    return { kind, by: kind === 'installed' ? 'package' : 'directory', count: list.length, buckets: sortBuckets(counts), paths: list.map((entry) => entry.path) };
  });
}
