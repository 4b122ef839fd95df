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

export class MemoryStatCache implements StatCache {
  readonly dirty = new Set<string>();
  private map: Map<string, { identity: string; digest: string }> | null = null;

  /** The rows are used as they are until something needs a path looked up alone. */
  constructor(private readonly rows: StatCacheRows = { paths: [], identities: [], digests: [] }) {}

  get entries(): Map<string, { identity: string; digest: string }> {
    if (this.map === null) {
      this.map = new Map();
      const { paths, identities, digests } = this.rows;
      for (let index = 0; index < paths.length; index++) this.map.set(paths[index]!, { identity: identities[index]!, digest: digests[index]! });
    }
    return this.map;
  }

  get(path: string) {
    return this.entries.get(path);
  }

  set(path: string, identity: string, digest: string) {
    const old = this.entries.get(path);
    if (old?.identity === identity && old.digest === digest) return;
    this.entries.set(path, { identity, digest });
    this.dirty.add(path);
  }

  delete(path: string) {
    if (this.entries.delete(path)) this.dirty.add(path);
  }

  digestsFor(paths: readonly string[], identities: readonly (string | null)[]): (string | undefined)[] {
    const digests: (string | undefined)[] = [];
    // Untouched, the rows are merged with the paths, both ascending; else each path is looked up.
    let rows = this.map === null ? this.rows : null;
    let row = 0;
    let merged = '';
    for (let index = 0; index < paths.length; index++) {
      digests.push(undefined);
      const identity = identities[index];
      if (identity === null || identity === undefined) continue;
      const path = paths[index]!;
      // The merge has passed every row before the last path it took: a listing that goes back
      // is looked up path by path from here on.
      if (rows !== null && path < merged) rows = null;
      let found: { identity: string; digest: string } | undefined;
      if (rows !== null) {
        merged = path;
        while (row < rows.paths.length && rows.paths[row]! < path) row++;
        if (rows.paths[row] === path) found = { identity: rows.identities[row]!, digest: rows.digests[row]! };
        // Beyond the BMP, JavaScript orders strings otherwise than bytes do, and the merge may
        // stop short of the row at one that sorts otherwise. A miss is never a wrong digest, but
        // it costs a read: those are looked up alone.
        else if (SURROGATE.test(path) || (row < rows.paths.length && SURROGATE.test(rows.paths[row]!))) found = this.get(path);
      } else {
        found = this.get(path);
      }
      if (found !== undefined && found.identity === identity) digests[index] = found.digest;
    }
    return digests;
  }
}

const SURROGATE = /[\uD800-\uDFFF]/;
