import Database from 'better-sqlite3';
import { chmodSync, existsSync, lstatSync, renameSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { VouchError } from '../core/errors.js';
import { MIGRATIONS } from './migrations.js';
import { checkStateDir, ensureStateDir, notWritable, refuseLinks } from './stateDir.js';

export interface Store {
  db: Database.Database;
  stateDir: string;
  /** Things the user must hear about, such as a database kept aside. */
  notices: string[];
  close(): void;
}

export const STATE_DB = 'state.db';
/** The database and the files SQLite keeps beside it (https://www.sqlite.org/tempfiles.html). */
const SQLITE_FILES = [STATE_DB, `${STATE_DB}-wal`, `${STATE_DB}-shm`, `${STATE_DB}-journal`];

/**
 * The addon's own path: left to itself, better-sqlite3 finds it through the
 * "bindings" package, which probes a dozen paths on every start.
 */
const NATIVE_BINDING = nativeBinding();

function nativeBinding(): string | undefined {
  try {
    return createRequire(import.meta.url).resolve('better-sqlite3/build/Release/better_sqlite3.node');
  } catch {
    return undefined; // a Debug or relocated build: let better-sqlite3 search for it
  }
}

/**
 * Opens (creating or migrating) the receipts database. One that is corrupt, or
 * from a newer vouch, is renamed aside and reported, never dropped.
 */
export function openStore(stateDir: string): Store {
  // The common case, an existing store, costs a few lstats: SQLite follows links, so none may be there.
  if (!checkStateDir(stateDir) || !existsSync(join(stateDir, STATE_DB))) ensureStateDir(stateDir);
  refuseLinks(stateDir, SQLITE_FILES);
  const notices: string[] = [];
  const path = join(stateDir, STATE_DB);
  let db: Database.Database;
  try {
    db = openAndMigrate(path);
  } catch (error) {
    const newer = error instanceof VouchError && error.code === 'state-newer';
    if (!newer && !isCorruption(error)) throw error;
    const why = error instanceof VouchError ? error.message : `it is not a readable SQLite database (${(error as Error).message})`;
    const kept = keepAside(path, error instanceof VouchError ? 'newer' : 'corrupt');
    notices.push(`${path}: ${why}. It was kept as ${kept} and a new one was started; receipts in it are not used. To go back, stop vouch and rename it to ${STATE_DB}.`);
    try {
      db = openAndMigrate(path);
    } catch (second) {
      throw notWritable(stateDir, second);
    }
  }
  ownerOnly(stateDir);
  return { db, stateDir, notices, close: () => db.close() };
}

function openAndMigrate(path: string): Database.Database {
  const stateDir = dirname(path);
  let db: Database.Database;
  try {
    db = new Database(path, NATIVE_BINDING ? { nativeBinding: NATIVE_BINDING } : {});
  } catch (error) {
    if (cannotWrite(error)) throw notWritable(stateDir, error);
    throw error;
  }
  try {
    db.pragma('busy_timeout = 10000');
    // Before anything that writes: a newer vouch's database is kept aside exactly as it was.
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version > MIGRATIONS.length) {
      throw new VouchError('state-newer', `it was written by a newer vouch (schema ${version}; this vouch knows up to ${MIGRATIONS.length})`);
    }
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    if (version < MIGRATIONS.length) {
      db.transaction(() => {
        // Re-read inside the write lock: another process may have migrated meanwhile.
        const current = db.pragma('user_version', { simple: true }) as number;
        for (let index = current; index < MIGRATIONS.length; index++) db.exec(MIGRATIONS[index] ?? '');
        db.pragma(`user_version = ${MIGRATIONS.length}`);
      }).immediate();
    }
    db.prepare('SELECT 1 FROM receipts LIMIT 1').get();
    return db;
  } catch (error) {
    db.close();
    if (cannotWrite(error)) throw notWritable(stateDir, error);
    throw error;
  }
}

/** SQLite creates its files with 0644 (less the umask); receipts and logs are the owner's alone. */
function ownerOnly(stateDir: string): void {
  for (const name of SQLITE_FILES) {
    const path = join(stateDir, name);
    try {
      const mode = lstatSync(path).mode & 0o777;
      if ((mode & 0o077) !== 0) chmodSync(path, mode & 0o700);
    } catch {
      // not there
    }
  }
}

function keepAside(path: string, why: 'newer' | 'corrupt'): string {
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const kept = `${path}.${why}-${stamp}`;
  for (const suffix of ['', '-wal', '-shm']) {
    if (existsSync(path + suffix)) renameSync(path + suffix, kept + suffix);
  }
  return kept;
}

/** better-sqlite3 reports extended codes, such as SQLITE_READONLY_DIRECTORY. */
function cannotWrite(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code ?? '';
  return code.startsWith('SQLITE_READONLY') || code.startsWith('SQLITE_CANTOPEN');
}

export function isCorruption(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'SQLITE_CORRUPT' || code === 'SQLITE_NOTADB';
}
