import type Database from 'better-sqlite3';
import { MemoryStatCache } from '../core/statCache.js';

export function loadStatCache(db: Database.Database): MemoryStatCache {
  const cache = new MemoryStatCache();
  const rows = db.prepare('SELECT path, identity, digest FROM stat_cache').raw().all() as [string, string, string][];
  for (const [path, identity, digest] of rows) cache.entries.set(path, { identity, digest });
  return cache;
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
