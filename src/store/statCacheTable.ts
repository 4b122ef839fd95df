import type Database from 'better-sqlite3';
import { MemoryStatCache, type StatCacheRows } from '../core/statCache.js';

/**
 * The whole table, read as one string SQLite joins, in path order (the primary key's, by bytes):
 * a warm status reads every row, and one value costs far less to hand to JavaScript than a row
 * object each. No field holds a NUL.
 */
export function loadStatCache(db: Database.Database): MemoryStatCache {
  const joined = db
    .prepare('SELECT group_concat(path || char(0) || identity || char(0) || digest, char(0) ORDER BY path) FROM stat_cache')
    .pluck()
    .get() as string | null;
  const rows: StatCacheRows = { paths: [], identities: [], digests: [] };
  if (joined !== null) {
    const fields = joined.split('\0');
    for (let index = 0; index + 2 < fields.length; index += 3) {
      rows.paths.push(fields[index]!);
      rows.identities.push(fields[index + 1]!);
      rows.digests.push(fields[index + 2]!);
    }
  }
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
