import type Database from 'better-sqlite3';
import type { MemoryStatCache } from '../core/statCache.js';
import { envKey } from '../store/envKey.js';
import { openStore, type Store } from '../store/openStore.js';
import { loadStatCache } from '../store/statCacheTable.js';
import type { Project } from './project.js';

/** The store and stat cache one command works with, opened once and closed at the end. */
export interface Session {
  db: Database.Database;
  statCache: MemoryStatCache;
  envKey: string;
  /** False when a full disk let the store open only to read: nothing can be saved. */
  readonly writable: boolean;
  /** Filled as the command goes: a damaged store kept aside mid-command adds one. */
  notices: string[];
  stateDir: string;
}

/** `env` decides where the key for environment digests is kept (XDG_CONFIG_HOME, HOME). */
export async function withSession<T>(project: Project, use: (session: Session) => Promise<T>, env: NodeJS.ProcessEnv = process.env): Promise<T> {
  const { session, close } = openSession(project, env);
  try {
    return await use(session);
  } finally {
    close();
  }
}

/**
 * `lazyStatCache`: load the stat cache on first need, not now. Loading it reads every page of its
 * table, which is where a damaged page is found before any receipt is read from that file; only a
 * command that reads no receipt of its own before it needs the cache may wait (a run the observer
 * follows: it decides from the observer's answers and scans nothing, and 60,000 rows are 30 ms).
 */
export function openSession(project: Project, env: NodeJS.ProcessEnv = process.env, options: { lazyStatCache?: boolean } = {}): { session: Session; close(): void } {
  const store: Store = openStore(project.stateDir);
  let key: string | null = null;
  let cache: MemoryStatCache | null = options.lazyStatCache ? null : loadStatCache(store.db);
  const session: Session = {
    db: store.db,
    get statCache() {
      return (cache ??= loadStatCache(store.db));
    },
    // Read on first need: a command that digests no environment (log) makes no key.
    get envKey() {
      return (key ??= envKey(project, env));
    },
    get writable() {
      return store.writable;
    },
    notices: store.notices,
    stateDir: project.stateDir,
  };
  return { session, close: () => store.close() };
}
