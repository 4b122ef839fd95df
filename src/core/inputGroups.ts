import { installedPackageOf } from './installedPackage.js';
import type { InputEntry } from './manifest.js';

/*
 * What a receipt depends on, grouped for people: source inputs by top-level
 * directory, installed inputs by package. Receipts hold declared evidence
 * today (the input manifest); traced kinds (directories listed, lookups found
 * absent, reads outside the root) become more groups beside these two.
 */

export type InputGroupKind = 'source' | 'installed';

/** A directory or package, and how many inputs are in it. */
export interface Bucket {
  name: string;
  count: number;
}

export interface InputGroup {
  kind: InputGroupKind;
  /** What the buckets are: top-level directories (source) or packages (installed). */
  by: 'directory' | 'package';
  count: number;
  /** Sorted by count, largest first, then by name. */
  buckets: Bucket[];
  /** Every path, sorted as the manifest is. */
  paths: string[];
}

/** The bucket of a source file: its top-level directory, or "." for a file in the root. */
export function topDirectoryOf(path: string): string {
  const slash = path.indexOf('/');
  return slash === -1 ? '.' : path.slice(0, slash);
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

/** Both groups, always, in this order: source, then installed. */
export function groupInputs(entries: readonly Pick<InputEntry, 'path' | 'origin'>[]): InputGroup[] {
  const source: string[] = [];
  const installed: string[] = [];
  for (const entry of entries) (entry.origin === 'source' ? source : installed).push(entry.path);
  return [
    { kind: 'source', by: 'directory', count: source.length, buckets: countBuckets(source, topDirectoryOf), paths: source },
    { kind: 'installed', by: 'package', count: installed.length, buckets: countBuckets(installed, installedBucketOf), paths: installed },
  ];
}
