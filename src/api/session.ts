import type Database from 'better-sqlite3';
import type { MemoryStatCache } from '../core/statCache.js';
import { envKey, openStore, withRecovery, type Store } from '../store/openStore.js';
import { loadStatCache } from '../store/statCacheTable.js';
import type { Project } from './project.js';

/** The store and stat cache one command works with, opened once and closed at the end. */
export interface Session {
  db: Database.Database;
  statCache: MemoryStatCache;
  envKey: string;
  /** Filled as the command goes: a damaged store kept aside mid-command adds one. */
  notices: string[];
  stateDir: string;
}

export async function withSession<T>(project: Project, use: (session: Session) => Promise<T>): Promise<T> {
  const { session, close } = openSession(project);
  try {
    return await use(session);
  } finally {
    close();
  }
}

export function openSession(project: Project): { session: Session; close(): void } {
  const store: Store = openStore(project.stateDir);
  const session: Session = {
    db: store.db,
    statCache: loadStatCache(store.db),
    envKey: withRecovery(store.db, envKey),
    notices: store.notices,
    stateDir: project.stateDir,
  };
  return { session, close: () => store.close() };
}
