import Database from 'better-sqlite3';
import { closeSync, existsSync, renameSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { VouchError } from '../core/errors.js';
import { nativeLoadError } from '../core/nativeLoad.js';
import { MIGRATIONS } from './migrations.js';
import { diskFull, diskFullNotice, isDiskFull, noteOnce } from './diskFull.js';
import { checkStateDir, ensureStateDir, guardStateFiles, notWritable, openStateFile } from './stateDir.js';

export interface Store {
  /** The live connection: after a damaged file is kept aside, a fresh one (see withRecovery). */
  readonly db: Database.Database;
  stateDir: string;
  /** Things the user must hear about, such as a database kept aside or a full disk. */
  notices: string[];
  /**
   * False when the disk is full and the store could only be opened to read (see
   * openOnFullDisk): a write then fails with disk-full.
   */
  readonly writable: boolean;
  close(): void;
}

export interface OpenOptions {
  /**
   * On a full disk, open to read rather than fail. Not for a long-lived process: that
   * connection holds an exclusive lock until it closes.
   */
  readWhenFull?: boolean;
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

class OpenedStore implements Store {
  db: Database.Database;
  writable: boolean;
  /** Bumped each time the file is replaced, so a reader can tell its earlier reads came from another file. */
  generation = 0;
  /** The file the connection has open (dev:ino), to tell it from one another process put in its place. */
  identity: string;

  readonly path: string;
  readonly stateDir: string;
  readonly notices: string[];
  readonly options: OpenOptions;

  constructor(path: string, notices: string[], options: OpenOptions, opened: { db: Database.Database; writable: boolean }) {
    this.path = path;
    this.stateDir = dirname(path);
    this.notices = notices;
    this.options = options;
    this.db = opened.db;
    this.writable = opened.writable;
    this.identity = fileIdentity(path);
    OWNERS.set(this.db, this);
  }

  /**
   * A page of the file is damaged: say what it held, keep it aside as the header case does,
   * and go on with a fresh one. Receipts are evidence, so the damaged file's are never read
   * again: that costs reruns, never a false CURRENT.
   */
  recover(error: unknown): void {
    const held = describeHeld(this.db);
    const meta = readableMeta(this.db);
    try {
      this.db.close();
    } catch {
      // closing a damaged file may fail too; it is kept aside whatever happens
    }
    // Another process may have found the damage first and already started a fresh file here:
    // that one is not moved aside.
    let notice: string | null = null;
    if (fileIdentity(this.path) === this.identity) {
      const kept = keepAside(this.path, 'corrupt');
      notice = `${this.path}: it is damaged (${(error as Error).message}, found while reading it). It was kept as ${kept} and a new one was started; receipts in it are not used, so checks will rerun. ${held}`;
      this.notices.push(notice);
    }
    try {
      this.replace();
    } catch (failure) {
      // The command ends here (a full disk): the file kept aside is said in the error, not in a notice nobody prints.
      if (notice === null || !(failure instanceof VouchError)) throw failure;
      throw new VouchError(failure.code, `${failure.message}. Before that, ${notice.replace(' and a new one was started', ', but no new one could be started')}`, failure.exitCode);
    }
    // meta holds no evidence, only this state dir's settings: kept, so the fresh store behaves as the damaged one did.
    try {
      const insert = this.db.prepare('INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)');
      this.db.transaction(() => {
        for (const [key, value] of meta) insert.run(key, value);
      })();
    } catch {
      // a full disk: the next session makes new settings
    }
  }

  /** Opens whatever is at the path now: a fresh store after recover, or another process's. */
  replace(): void {
    try {
      this.db.close();
    } catch {
      // already closed by recover
    }
    const opened = openDatabase(this.path, this.notices, this.options);
    this.db = opened.db;
    this.writable = opened.writable;
    this.identity = fileIdentity(this.path);
    this.generation++;
    OWNERS.set(this.db, this);
  }

  close(): void {
    this.db.close();
  }
}

/** Every connection a store has had, old ones included, to the store that owns it. */
const OWNERS = new WeakMap<Database.Database, OpenedStore>();

/**
 * Opens (creating or migrating) the receipts database. One that is corrupt, or
 * from a newer vouch, is renamed aside and reported, never dropped. On a full
 * disk it is opened to read, with a notice, unless options say otherwise.
 */
export function openStore(stateDir: string, options: OpenOptions = {}): Store {
  const path = join(stateDir, STATE_DB);
  // The common case, an existing store, costs a few lstats.
  if (!checkStateDir(stateDir) || !existsSync(path)) ensureStateDir(stateDir);
  // Before SQLite opens anything: it follows links, and makes its -wal and -shm with the database's mode.
  guardStateFiles(stateDir, SQLITE_FILES);
  const notices: string[] = [];
  const settled: OpenOptions = { readWhenFull: options.readWhenFull ?? true };
  return new OpenedStore(path, notices, settled, openDatabase(path, notices, settled));
}

function openDatabase(path: string, notices: string[], options: OpenOptions): { db: Database.Database; writable: boolean } {
  const stateDir = dirname(path);
  // A fresh store after damage was kept aside is made owner-only too.
  if (!existsSync(path)) createOwnerOnly(stateDir);
  try {
    return { db: openAndMigrate(path), writable: true };
  } catch (error) {
    if (isDiskFull(error)) {
      if (!options.readWhenFull) throw diskFull(stateDir, error);
      const db = openOnFullDisk(path, error);
      noteOnce(notices, diskFullNotice(stateDir));
      return { db, writable: false };
    }
    const newer = error instanceof VouchError && error.code === 'state-newer';
    if (!newer && !isCorruption(error)) throw error;
    const why = error instanceof VouchError ? error.message : `it is not a readable SQLite database (${(error as Error).message})`;
    const kept = keepAside(path, error instanceof VouchError ? 'newer' : 'corrupt');
    const notice = `${path}: ${why}. It was kept as ${kept} and a new one was started; receipts in it are not used. To go back, stop vouch and rename it to ${STATE_DB}.`;
    notices.push(notice);
    try {
      createOwnerOnly(stateDir);
      return { db: openAndMigrate(path), writable: true };
    } catch (second) {
      const failure = notWritable(stateDir, second);
      // The command ends here, so the file kept aside is said in the error, not in a notice nobody prints.
      throw new VouchError(failure.code, `${failure.message}. Before that, ${notice.replace(' and a new one was started', ', but no new one could be started')}`, failure.exitCode);
    }
  }
}

function openAndMigrate(path: string): Database.Database {
  const stateDir = dirname(path);
  let db: Database.Database;
  try {
    db = new Database(path, NATIVE_BINDING ? { nativeBinding: NATIVE_BINDING } : {});
  } catch (error) {
    if (cannotWrite(error) || isDiskFull(error)) throw notWritable(stateDir, error);
    // SQLite's addon built for another Node: a one-line fix, not a stack trace.
    throw nativeLoadError(error) ?? error;
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
    if (cannotWrite(error) || isDiskFull(error)) throw notWritable(stateDir, error);
    throw error;
  }
}

/**
 * A normal open of a WAL database maps its WAL index, the -shm file, and must create and
 * size it when no other connection has it open: on a full disk that fails
 * (SQLITE_IOERR_SHMSIZE). Opening with `readonly: true` does not avoid it: a read-only
 * connection still needs the -shm to exist or be creatable
 * (https://www.sqlite.org/wal.html#readonly), and exclusive locking on a read-only file
 * handle fails (SQLITE_IOERR_LOCK). `immutable=1` is no answer either: it ignores the WAL, so
 * receipts not yet checkpointed would be missed (an older receipt read as the latest), and it
 * is unsafe while another process writes.
 *
 * What works: a read-write handle in EXCLUSIVE locking mode, set before the first read, keeps
 * the WAL index in heap memory and never touches the -shm
 * (https://www.sqlite.org/wal.html#noshm). It reads the WAL's frames, so it sees every
 * committed receipt. The price is an exclusive lock until the connection closes: other vouch
 * processes wait (busy_timeout), so only short-lived commands open this way. Nothing is
 * written unless a command writes (a write fails with SQLITE_FULL and is rolled back).
 */
function openOnFullDisk(path: string, cause: unknown): Database.Database {
  const stateDir = dirname(path);
  let db: Database.Database;
  try {
    db = new Database(path, { fileMustExist: true, ...(NATIVE_BINDING ? { nativeBinding: NATIVE_BINDING } : {}) });
  } catch {
    throw diskFull(stateDir, cause); // no store to read: nothing can be answered from it
  }
  try {
    db.pragma('busy_timeout = 10000');
    db.pragma('locking_mode = EXCLUSIVE');
    // A store that still needs a migration cannot be migrated without room.
    if ((db.pragma('user_version', { simple: true }) as number) !== MIGRATIONS.length) throw diskFull(stateDir, cause);
    db.prepare('SELECT 1 FROM receipts LIMIT 1').get();
    return db;
  } catch (error) {
    db.close();
    if (isCorruption(error)) throw error;
    throw diskFull(stateDir, cause);
  }
}

/**
 * Runs a read or write of the store; if it finds a damaged page (SQLITE_CORRUPT), the file is
 * kept aside, a fresh store replaces it, and `use` runs once more against that. Accepts any
 * connection the store has had, so a caller holding an old one still reaches the live one.
 *
 * Damage is found by the query that reads the page, not by a PRAGMA quick_check on open: on a
 * store with 10k stat-cache rows, a fresh connection's quick_check took 12.8 ms (quick_check of
 * the receipts table alone 7 ms at 2,000 receipts, growing with history) against 0.1 ms for the
 * open itself, while a warm status has about 1 ms to spare. quick_check would not catch
 * garbage that still parses either; what it does catch, the query reading the page does.
 */
export function withRecovery<T>(db: Database.Database, use: (db: Database.Database) => T): T {
  const store = OWNERS.get(db);
  if (!store) return use(db);
  const live = store.db;
  try {
    return use(live);
  } catch (error) {
    if (!isCorruption(error)) throw error;
    if (store.db === live) store.recover(error);
    return use(store.db);
  }
}

/**
 * Runs reads that must come from one file: if the store was replaced while they ran (a
 * damaged page found part-way), they run again, so no answer mixes the damaged file's
 * receipts with the fresh one's.
 */
export function readConsistently<T>(db: Database.Database, read: () => T): T {
  const store = OWNERS.get(db);
  if (!store) return read();
  const generation = store.generation;
  const value = read();
  return store.generation === generation ? value : read();
}

/** How many times the store behind this connection was replaced; for long-lived readers. */
export function storeGeneration(db: Database.Database): number {
  return OWNERS.get(db)?.generation ?? 0;
}

/**
 * For a long-lived process: when another process has kept the file aside and started a fresh
 * one, this connection still reads the old file. Reopens, and says whether it had to.
 */
export function reopenIfReplaced(db: Database.Database): boolean {
  const store = OWNERS.get(db);
  const now = store ? fileIdentity(store.path) : '';
  // A missing file is left alone: the state dir may be going away with the observer.
  if (!store || now === '' || now === store.identity) return false;
  store.replace();
  return true;
}

function fileIdentity(path: string): string {
  const stats = statSync(path, { throwIfNoEntry: false });
  return stats ? `${stats.dev}:${stats.ino}` : '';
}

/**
 * What a damaged store held, as far as it can still be read: a table scan in each direction
 * stops at the damaged page, so together they read everything on either side of it. Best
 * effort; never throws.
 */
function describeHeld(db: Database.Database): string {
  const seen = new Map<number, string>();
  let complete = true;
  for (const order of ['ASC', 'DESC']) {
    try {
      const rows = db.prepare(`SELECT seq, check_name FROM receipts NOT INDEXED ORDER BY seq ${order}`).raw().iterate() as IterableIterator<[number, string]>;
      for (const [seq, check] of rows) seen.set(seq, check);
      break; // a whole scan in one direction read everything
    } catch {
      complete = false;
    }
  }
  let recorded: number | null = null;
  try {
    recorded = (db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'receipts'").pluck().get() as number | undefined) ?? 0;
  } catch {
    // the sequence itself may sit on a damaged page
  }
  const counts = new Map<string, number>();
  for (const check of seen.values()) counts.set(check, (counts.get(check) ?? 0) + 1);
  const checks = [...counts].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([check, count]) => `${check}: ${count}`);
  const of = checks.length > 0 ? ` (${checks.join(', ')})` : '';
  if (complete) return `It held ${seen.size} receipts${of}.`;
  // Receipts are never deleted, so the highest sequence number is how many were ever recorded.
  const total = recorded !== null && recorded > seen.size ? `, of ${recorded} recorded` : '';
  return `It held at least ${seen.size} receipts that could still be read${of}${total}.`;
}

function readableMeta(db: Database.Database): [string, string][] {
  try {
    return db.prepare('SELECT key, value FROM meta').raw().all() as [string, string][];
  } catch {
    return [];
  }
}

/**
 * An empty file is an empty database to SQLite, and its journal, WAL and
 * shared-memory files take the database file's mode (os_unix.c,
 * findCreateFileMode): made 0600 here, none of them is ever readable by others.
 */
function createOwnerOnly(stateDir: string): void {
  try {
    closeSync(openStateFile(join(stateDir, STATE_DB), 'exclusive', stateDir));
  } catch (error) {
    // EEXIST: another process made it meanwhile, or a link is there (refused next).
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw notWritable(stateDir, error);
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
  // Extended codes too: SQLITE_CORRUPT_INDEX (a damaged index page), SQLITE_CORRUPT_SEQUENCE.
  const code = (error as NodeJS.ErrnoException | null)?.code ?? '';
  return code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB';
}
