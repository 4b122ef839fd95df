import type Database from 'better-sqlite3';
import { MemoryStatCache, type StatCacheRows } from '../core/statCache.js';
import { isDiskFull } from './diskFull.js';
import { withRecovery } from './openStore.js';

/**
 * The whole table as three strings SQLite joins, one per column, in path order (the primary
 * key's, by bytes): a warm status reads every row, and three values cost far less to hand to
 * JavaScript than a row object each. No field holds a NUL; if one did, the columns would not
 * line up, and the cache is dropped (it only saves work).
 */
export function loadStatCache(db: Database.Database, longLived = false): MemoryStatCache {
  const [paths, identities, digests] = withRecovery(db, (live) =>
    live
      .prepare(
        'SELECT group_concat(path, char(0)), group_concat(identity, char(0)), group_concat(digest, char(0)) FROM (SELECT path, identity, digest FROM stat_cache ORDER BY path)',
      )
      .raw()
      .get(),
  ) as [string | null, string | null, string | null];
  if (paths === null || identities === null || digests === null) return new MemoryStatCache(undefined, longLived);
  const rows: StatCacheRows = { paths: paths.split('\0'), identities: identities.split('\0'), digests: digests.split('\0') };
  if (rows.identities.length !== rows.paths.length || rows.digests.length !== rows.paths.length) return new MemoryStatCache(undefined, longLived);
  return new MemoryStatCache(rows, longLived);
}

/**
 * Writes only what changed; a lost write only costs a re-read later. So a full disk skips it:
 * false says it was not saved, for the caller to tell the user.
 */
export function saveStatCache(db: Database.Database, cache: MemoryStatCache): boolean {
  if (cache.dirty.size === 0) return true;
  try {
    withRecovery(db, (live) => {
      const upsert = live.prepare('INSERT OR REPLACE INTO stat_cache (path, identity, digest) VALUES (?, ?, ?)');
      const remove = live.prepare('DELETE FROM stat_cache WHERE path = ?');
      live.transaction(() => {
        for (const path of cache.dirty) {
          const entry = cache.get(path);
          if (entry) upsert.run(path, entry.identity, entry.digest);
          else remove.run(path);
        }
      })();
    });
  } catch (error) {
    if (isDiskFull(error)) return false;
    throw error;
  }
  cache.dirty.clear();
  return true;
}
