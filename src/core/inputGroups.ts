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

/**
 * The bucket of a path by directory: its top-level directory, "." for a file in
 * the root (or the root itself). An absolute path (evidence outside the root)
 * is counted under its first two directories ("/home/me", "/etc/ssl"): one
 * level says only "/home" of everything in a home directory.
 */
export function topDirectoryOf(path: string): string {
  if (path.startsWith('/')) {
    const first = path.indexOf('/', 1);
    const second = first === -1 ? -1 : path.indexOf('/', first + 1);
    if (second !== -1) return path.slice(0, second);
    // "/etc/hosts" is under "/etc"; "/etc" under itself.
    return first === -1 ? path : path.slice(0, first);
  }
  const slash = path.indexOf('/');
  return slash === -1 ? '.' : path.slice(0, slash);
}

/** The bucket of a directory: the top-level directory it is, or is in ("." for the root itself). */
export function directoryBucketOf(path: string): string {
  if (path === '.' || path.startsWith('/')) return topDirectoryOf(path);
  const slash = path.indexOf('/');
  return slash === -1 ? path : path.slice(0, slash);
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
  if (kind === 'installed') return { kind, by: 'package', count: paths.length, buckets: countBuckets(paths, installedBucketOf), paths };
  // Listed paths are directories: "src" is counted under src, not under the root.
  return { kind, by: 'directory', count: paths.length, buckets: countBuckets(paths, kind === 'listed' ? directoryBucketOf : topDirectoryOf), paths };
}

/** Both groups, always, in this order: source, then installed. */
export function groupInputs(entries: readonly Pick<InputEntry, 'path' | 'origin'>[]): InputGroup[] {
  const source: string[] = [];
  const installed: string[] = [];
  for (const entry of entries) (entry.origin === 'source' ? source : installed).push(entry.path);
  return [group('source', source), group('installed', installed)];
}

/**
 * The one group of a traced evidence entry. The first that applies wins:
 * - own: the run wrote it (its cache, or an output it read back);
 * - outside: an absolute path, outside the root;
 * - absent: looked for and not there (a module resolver's probe, an optional config);
 * - installed: under a node_modules directory, counted by package;
 * - read, listed: by what the run did with it;
 * - found: looked up (stat, access, readlink) and there.
 */
export function tracedGroupOf(entry: Pick<EvidenceEntry, 'path' | 'use' | 'own' | 'type'>): TracedGroupKind {
  if (entry.own) return 'own';
  if (entry.path.startsWith('/')) return 'outside';
  if (entry.type === 'absent') return 'absent';
  if (installedPackageOf(entry.path) !== null) return 'installed';
  if (entry.use === 'read') return 'read';
  if (entry.use === 'listed') return 'listed';
  return 'found';
}

/** Every traced group, always, in TRACED_GROUPS order, each path in exactly one. */
export function groupEvidence(entries: readonly Pick<EvidenceEntry, 'path' | 'use' | 'own' | 'type'>[]): InputGroup[] {
  const paths = new Map<TracedGroupKind, string[]>(TRACED_GROUPS.map((kind) => [kind, []]));
  for (const entry of entries) paths.get(tracedGroupOf(entry))!.push(entry.path);
  return TRACED_GROUPS.map((kind) => group(kind, paths.get(kind)!));
}
