/**
 * path -> (identity, digest): an unchanged file is never read twice. An entry
 * is written only once its identity is past the racy window, so a cached digest
 * is trusted exactly when the identity still matches.
 */
export interface StatCache {
  get(path: string): { identity: string; digest: string } | undefined;
  set(path: string, identity: string, digest: string): void;
  delete(path: string): void;
  /**
   * For each path, the cached digest when the cached identity equals
   * identities[i], as get() would decide it; paths sorted as git lists them
   * (by bytes) make this a single merge instead of a lookup each.
   */
  digestsFor(paths: readonly string[], identities: readonly (string | null)[]): (string | undefined)[];
}

/** Rows as the store holds them: sorted by path, byte by byte. */
export interface StatCacheRows {
  paths: string[];
  identities: string[];
  digests: string[];
}

type Cached = { identity: string; digest: string };

/**
 * Rows sorted by bytes, and the changes made since, each path's entry or null
 * when deleted. No map of every path: at 100k files a map and an object per
 * path cost 6 MB, and a long-lived process (the observer) keeps them. A path
 * is looked up by a binary search of the rows; the changes are folded into
 * new rows when there are many (fold()).
 */
export class MemoryStatCache implements StatCache {
  readonly dirty = new Set<string>();
  private changes = new Map<string, Cached | null>();

  /**
   * Per row, whether its path may be a slice of a larger string (the store's column, a git
   * listing), which it would keep alive. A merge with a listing takes the listing's own strings
   * for the rows it finds (held by the index anyway), and gives each row it did not find a string
   * of its own: a row kept a slice of an old listing would keep all of it.
   */
  private mayPin: Uint8Array;

  /**
   * The rows are used as they are; they must be sorted by path, byte by byte (as the store holds
   * them). `longLived`: the process keeps the cache across scans (the observer), and its paths are
   * shared with each listing as above; a command that exits after one scan does not pay for it.
   */
  constructor(
    private rows: StatCacheRows = { paths: [], identities: [], digests: [] },
    private readonly longLived = false,
  ) {
    this.mayPin = new Uint8Array(longLived ? rows.paths.length : 0).fill(1);
  }

  /** Every entry, in a map made for the asking. */
  get entries(): Map<string, Cached> {
    const map = new Map<string, Cached>();
    const { paths, identities, digests } = this.rows;
    for (let index = 0; index < paths.length; index++) if (!this.changes.has(paths[index]!)) map.set(paths[index]!, { identity: identities[index]!, digest: digests[index]! });
    for (const [path, entry] of this.changes) if (entry !== null) map.set(path, entry);
    return map;
  }

  get(path: string): Cached | undefined {
    const changed = this.changes.get(path);
    if (changed !== undefined) return changed ?? undefined;
    const row = this.rowOf(path);
    return row < 0 ? undefined : { identity: this.rows.identities[row]!, digest: this.rows.digests[row]! };
  }

  set(path: string, identity: string, digest: string) {
    const old = this.get(path);
    if (old?.identity === identity && old.digest === digest) return;
    const key = this.ownPath(path);
    this.changes.set(key, { identity, digest });
    this.dirty.add(key);
  }

  delete(path: string) {
    if (this.get(path) === undefined) return;
    const key = this.ownPath(path);
    this.changes.set(key, null);
    this.dirty.add(key);
  }

  /** Kept until the process saves the cache, which the observer does when it stops: no slice of a listing. */
  private ownPath(path: string): string {
    return this.longLived ? unsliced(path) : path;
  }

  /**
   * Folds the changes into new rows when there are at least `atLeast` of them, so that a process
   * that lives on holds each path once, in columns. What is dirty stays dirty.
   */
  fold(atLeast = 1): void {
    if (this.changes.size < atLeast || this.changes.size === 0) return;
    const added = [...this.changes.keys()].filter((path) => this.changes.get(path) !== null).sort(byteOrder);
    const { paths, identities, digests } = this.rows;
    const rows: StatCacheRows = { paths: [], identities: [], digests: [] };
    const push = (path: string, identity: string, digest: string) => {
      rows.paths.push(path);
      rows.identities.push(identity);
      rows.digests.push(digest);
    };
    let next = 0;
    for (let index = 0; index < paths.length; index++) {
      const path = paths[index]!;
      if (this.changes.has(path)) continue;
      for (; next < added.length && byteOrder(added[next]!, path) < 0; next++) {
        const entry = this.changes.get(added[next]!)!;
        push(added[next]!, entry.identity, entry.digest);
      }
      push(path, identities[index]!, digests[index]!);
    }
    for (; next < added.length; next++) {
      const entry = this.changes.get(added[next]!)!;
      push(added[next]!, entry.identity, entry.digest);
    }
    this.rows = rows;
    this.mayPin = new Uint8Array(this.longLived ? rows.paths.length : 0).fill(1);
    this.changes = new Map();
  }

  /** The row holding `path`, or -1. */
  private rowOf(path: string): number {
    const { paths } = this.rows;
    let low = 0;
    let high = paths.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (byteOrder(paths[middle]!, path) < 0) low = middle + 1;
      else high = middle;
    }
    return low < paths.length && paths[low] === path ? low : -1;
  }

  digestsFor(paths: readonly string[], identities: readonly (string | null)[]): (string | undefined)[] {
    const digests: (string | undefined)[] = [];
    const rows = this.rows;
    const changes = this.changes.size > 0 ? this.changes : null;
    // The rows are merged with the paths, both ascending; a listing that goes back is looked up path by path.
    let merging = true;
    const taken = this.longLived ? new Uint8Array(rows.paths.length) : null;
    let row = 0;
    let merged = '';
    for (let index = 0; index < paths.length; index++) {
      digests.push(undefined);
      const identity = identities[index];
      if (identity === null || identity === undefined) continue;
      const path = paths[index]!;
      let found: Cached | undefined;
      const changed = changes?.get(path);
      if (changed !== undefined) {
        found = changed ?? undefined;
      } else {
        // The merge has passed every row before the last path it took: a listing that goes back
        // is looked up path by path from here on.
        if (merging && path < merged) merging = false;
        if (merging) {
          merged = path;
          while (row < rows.paths.length && rows.paths[row]! < path) row++;
          if (rows.paths[row] === path) {
            found = { identity: rows.identities[row]!, digest: rows.digests[row]! };
            // The listing's own string from now on: the rows' copy of every path (a slice of the
            // store's column) is let go.
            if (taken !== null) {
              rows.paths[row] = path;
              taken[row] = 1;
            }
          }
          // Beyond the BMP, JavaScript orders strings otherwise than bytes do, and the merge may
          // stop short of the row at one that sorts otherwise. A miss is never a wrong digest, but
          // it costs a read: those are looked up alone.
          else if (SURROGATE.test(path) || (row < rows.paths.length && SURROGATE.test(rows.paths[row]!))) found = this.get(path);
        } else {
          found = this.get(path);
        }
      }
      if (found !== undefined && found.identity === identity) digests[index] = found.digest;
    }
    const mayPin = this.mayPin;
    for (let at = 0; taken !== null && at < rows.paths.length; at++) {
      if (taken[at] === 1) mayPin[at] = 1;
      else if (mayPin[at] === 1) {
        rows.paths[at] = unsliced(rows.paths[at]!);
        mayPin[at] = 0;
      }
    }
    return digests;
  }
}

/**
 * The same characters in a string of their own, not a slice of a larger one: the concatenation is
 * made flat (copied) before it is sliced, so the slice keeps only that copy.
 */
export function unsliced(text: string): string {
  return ` ${text}`.slice(1);
}

const SURROGATE = /[\uD800-\uDFFF]/;

/**
 * Strings compared as their UTF-8 bytes compare (code point order), as the store sorts paths.
 * UTF-16 code units order the same way but for surrogates (code points above U+FFFF), which sort
 * below U+E000..U+FFFF as units and above them as bytes.
 */
export function byteOrder(a: string, b: string): number {
  if (a === b) return 0;
  const length = Math.min(a.length, b.length);
  for (let index = 0; index < length; index++) {
    const x = a.charCodeAt(index);
    const y = b.charCodeAt(index);
    if (x === y) continue;
    if (x >= 0xd800 && y >= 0xd800) {
      const xSurrogate = x <= 0xdfff;
      if (xSurrogate !== y <= 0xdfff) return xSurrogate ? 1 : -1;
    }
    return x < y ? -1 : 1;
  }
  return a.length - b.length;
}
