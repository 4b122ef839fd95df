import type Database from 'better-sqlite3';
import { MemoryStatCache, type StatCacheRows } from '../core/statCache.js';

/**
 * The whole table as three strings SQLite joins, one per column, in path order (the primary
 * key's, by bytes): a warm status reads every row, and three values cost far less to hand to
 * JavaScript than a row object each. No field holds a NUL; if one did, the columns would not
 * line up, and the cache is dropped (it only saves work).
 */
export function loadStatCache(db: Database.Database): MemoryStatCache {
  const [paths, identities, digests] = db
    .prepare(
      'SELECT group_concat(path, char(0)), group_concat(identity, char(0)), group_concat(digest, char(0)) FROM (SELECT path, identity, digest FROM stat_cache ORDER BY path)',
    )
    .raw()
    .get() as [string | null, string | null, string | null];
  if (paths === null || identities === null || digests === null) return new MemoryStatCache();
  const rows: StatCacheRows = { paths: paths.split('\0'), identities: identities.split('\0'), digests: digests.split('\0') };
  if (rows.identities.length !== rows.paths.length || rows.digests.length !== rows.paths.length) return new MemoryStatCache();
  return new MemoryStatCache(rows);
}

/** Writes only what changed; a lost write only costs a re-read later. */
export function saveStatCache(db: Database.Database, cache: MemoryStatCache): void {
  if (cache.dirty.size === 0) return;
  const upsert = db.prepare('INSERT OR REPLACE INTO stat_cache (path, identity, digest) VALUES (?, ?, ?)');
  const remove = db.prepare('DELETE FROM stat_cache WHERE path = ?');
  db.transaction(() => {
    for (const path of cache.dirty) {
      const entry = cache.entries.get(path);
      if (entry) upsert.run(path, entry.identity, entry.digest);
      else remove.run(path);
    }
  })();
  cache.dirty.clear();
}
