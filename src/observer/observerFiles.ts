import { lstatSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sha256 } from '../core/digest.js';
import { VouchError } from '../core/errors.js';

/** Linux's sun_path holds 108 bytes, the terminating NUL included. */
const MAX_SOCKET_PATH = 107;

/** Where one observer keeps its record, log and socket. One checkout and config, one observer. */
export interface ObserverFiles {
  dir: string;
  record: string;
  log: string;
  /** The socket's natural path; too long a one is replaced by socketPath() when the observer binds. */
  socket: string;
  /** Barrier cookies are created here; it must be inside the watched root. */
  cookiePrefix: string;
}

/** What a running observer writes about itself, so clients can find it and tell it from a stale one. */
export interface ObserverRecord {
  schema: 1;
  pid: number;
  processStart: string | null;
  socket: string;
  version: string;
  build: string;
  root: string;
  configPath: string;
  stateDir: string;
  startedAt: number;
  log: string;
}

/** Pure paths: finding an observer creates nothing; clients take the socket's path from the record. */
export function observerFiles(stateDir: string, configPath: string): ObserverFiles {
  const id = sha256(configPath).slice(0, 12);
  const dir = join(stateDir, 'observer');
  return { dir, record: join(dir, `${id}.json`), log: join(dir, `${id}.log`), socket: join(dir, `${id}.sock`), cookiePrefix: join(dir, `${id}.cookie-`) };
}

/** Where the observer binds: its natural path, or one in a private runtime dir when that is too long for sun_path. */
export function socketPath(files: Pick<ObserverFiles, 'socket'>, env: NodeJS.ProcessEnv): string {
  if (Buffer.byteLength(files.socket) <= MAX_SOCKET_PATH) return files.socket;
  return join(runtimeDir(env), `${sha256(files.socket).slice(0, 16)}.sock`);
}

/**
 * A directory only this user can enter, for sockets whose natural path is too
 * long. One that exists with looser modes, or that someone else owns, is refused.
 */
function runtimeDir(env: NodeJS.ProcessEnv): string {
  const uid = process.getuid?.() ?? 0;
  const base = env.XDG_RUNTIME_DIR && env.XDG_RUNTIME_DIR.length < 60 ? env.XDG_RUNTIME_DIR : tmpdir();
  const dir = join(base, `vouch-${uid}`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const stats = lstatSync(dir);
  if (!stats.isDirectory() || stats.uid !== uid || (stats.mode & 0o077) !== 0) {
    throw new VouchError('runtime-dir-unsafe', `${dir} is not a directory that only you can enter (mode 0700, owned by uid ${uid}); remove it and try again`);
  }
  if (Buffer.byteLength(dir) + 22 > MAX_SOCKET_PATH) {
    throw new VouchError('socket-path-too-long', `no socket path under ${MAX_SOCKET_PATH} bytes is available; set XDG_RUNTIME_DIR to a short directory only you can enter`);
  }
  return dir;
}

/** The observer's own directory: mode 0700, since the socket in it answers questions about the tree. */
export function ensureObserverDir(files: ObserverFiles): void {
  mkdirSync(files.dir, { recursive: true, mode: 0o700 });
}

export function readRecord(files: ObserverFiles): ObserverRecord | null {
  try {
    const record = JSON.parse(readFileSync(files.record, 'utf8')) as ObserverRecord;
    return record.schema === 1 && typeof record.pid === 'number' && typeof record.socket === 'string' ? record : null;
  } catch {
    return null;
  }
}

/** Written whole or not at all: a reader never sees half a record. */
export function writeRecord(files: ObserverFiles, record: ObserverRecord): void {
  const temp = `${files.record}.${process.pid}.tmp`;
  writeFileSync(temp, JSON.stringify(record, null, 2) + '\n', { mode: 0o600 });
  renameSync(temp, files.record);
}

/** Removes what an observer leaves behind: its record and socket. */
export function removeObserverFiles(files: ObserverFiles, socket: string): void {
  rmSync(files.record, { force: true });
  rmSync(socket, { force: true });
}
