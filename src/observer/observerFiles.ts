import { lstatSync, mkdirSync, mkdtempSync, readdirSync, rmdirSync, unlinkSync, type Stats } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { sha256 } from '../core/digest.js';
import { VouchError } from '../core/errors.js';
import { processArgv, processStart, procAvailable } from '../fs/processStart.js';
import { isDirectory, ownedPrivately, parseRecord, uid, type ObserverRecord } from './observerRecord.js';
import { checkStateDir, ensureStateDir, ensureStateSubdir, openStateFile, readStateFile, writeStateFile } from '../store/stateDir.js';

/** Linux's sun_path holds 108 bytes, the terminating NUL included. */
const MAX_SOCKET_PATH = 107;

/** Where one observer keeps its record, log and socket. One checkout and config, one observer. */
export interface ObserverFiles {
  stateDir: string;
  configPath: string;
  dir: string;
  record: string;
  log: string;
  /** The socket's natural path; too long a one is replaced by socketPath() when the observer binds. */
  socket: string;
  /** Barrier cookies are created here; it must be inside the watched root. */
  cookiePrefix: string;
}

export type { ObserverRecord };

/** Pure paths: finding an observer creates nothing; clients take the socket's path from the record. */
export function observerFiles(stateDir: string, configPath: string): ObserverFiles {
  const id = sha256(configPath).slice(0, 12);
  const dir = join(stateDir, 'observer');
  return { stateDir, configPath, dir, record: join(dir, `${id}.json`), log: join(dir, `${id}.log`), socket: join(dir, `${id}.sock`), cookiePrefix: join(dir, `${id}.cookie-`) };
}

/** Where the observer binds: its natural path, or one in a private runtime dir when that is too long for sun_path. */
export function socketPath(files: Pick<ObserverFiles, 'socket'>, env: NodeJS.ProcessEnv): string {
  if (Buffer.byteLength(files.socket) <= MAX_SOCKET_PATH) return files.socket;
  const name = fallbackName(files);
  for (const dir of runtimeDirs(env)) {
    if (Buffer.byteLength(join(dir, name)) <= MAX_SOCKET_PATH) return join(dir, name);
  }
  throw new VouchError('socket-path-too-long', `no private directory gives a socket path under ${MAX_SOCKET_PATH} bytes; set XDG_RUNTIME_DIR to a short directory only you can enter, or use a shorter --state-dir`);
}

function fallbackName(files: Pick<ObserverFiles, 'socket'>): string {
  return `${sha256(files.socket).slice(0, 16)}.sock`;
}

/**
 * Directories only this user can enter, for sockets whose natural path is too
 * long, best first. A runtime dir (XDG Base Directory spec:
 * https://specifications.freedesktop.org/basedir-spec/latest/) is the user's
 * alone. In the shared temp dir any fixed name can be taken first by another
 * user, so there the directory has a random name (mkdtemp), and the first of
 * this user's own is used again: a client that recomputes the path finds it.
 */
function* runtimeDirs(env: NodeJS.ProcessEnv): Generator<string> {
  const runtime = env.XDG_RUNTIME_DIR && isAbsolute(env.XDG_RUNTIME_DIR) ? env.XDG_RUNTIME_DIR : !env.XDG_RUNTIME_DIR && privateDir(`/run/user/${uid()}`) ? `/run/user/${uid()}` : null;
  if (runtime !== null && runtime.length < 60) {
    const dir = join(runtime, `vouch-${uid()}`);
    try {
      mkdirSync(dir, { mode: 0o700 });
    } catch {
      // there already, or the runtime dir is not writable: checked below either way
    }
    if (privateDir(dir)) yield dir;
  }
  const own = ownTempDir();
  if (own !== null) yield own;
}

function ownTempDir(): string | null {
  const base = tmpdir();
  const prefix = `vouch-${uid()}-`;
  const existing = () => {
    let names: string[];
    try {
      names = readdirSync(base);
    } catch {
      return null;
    }
    const name = names.filter((candidate) => candidate.startsWith(prefix) && TEMP_NAME.test(candidate.slice(prefix.length))).sort().find((candidate) => privateDir(join(base, candidate)));
    return name === undefined ? null : join(base, name);
  };
  const found = existing();
  if (found !== null) return found;
  let made: string;
  try {
    made = mkdtempSync(join(base, prefix));
  } catch {
    return null;
  }
  // Two processes racing may each make one: both settle on the first in order, and the other goes.
  const chosen = existing();
  if (chosen !== made) {
    try {
      rmdirSync(made);
    } catch {
      // in use after all: harmless, it is private
    }
  }
  return chosen;
}

/** mkdtemp's six random characters. */
const TEMP_NAME = /^[A-Za-z0-9]{6}$/;

/** A real directory (not a link) of this user's that nobody else can enter. */
function privateDir(dir: string): boolean {
  return ownedPrivately(dir, isDirectory);
}

/**
 * Whether a socket path (from a record, which a repository can plant) is one
 * vouch itself would bind for these files: the natural path, or the fallback
 * name in a private runtime dir of this user's. Nothing else is connected to
 * or removed.
 */
export function trustedSocket(files: ObserverFiles, socket: string): boolean {
  if (socket === files.socket) return true;
  if (basename(socket) !== fallbackName(files)) return false;
  const dir = dirname(socket);
  const name = basename(dir);
  const prefix = `vouch-${uid()}`;
  return (name === prefix || (name.startsWith(`${prefix}-`) && TEMP_NAME.test(name.slice(prefix.length + 1)))) && privateDir(dir);
}

/**
 * Whether the observer dir exists, checked without creating anything: a
 * state dir or observer dir that is a link, not a directory, or someone
 * else's is refused (state-dir-unsafe).
 */
export function checkObserverDir(files: ObserverFiles): boolean {
  if (!checkStateDir(files.stateDir)) return false;
  let stats: Stats;
  try {
    stats = lstatSync(files.dir);
  } catch {
    return false;
  }
  if (stats.isSymbolicLink() || !stats.isDirectory() || stats.uid !== uid()) {
    // The same checks, and the same message, as when the observer starts.
    ensureStateSubdir(files.stateDir, 'observer');
  }
  return true;
}

/** The state dir and the observer's own directory: mode 0700, checked by lstat, since the socket in it answers questions about the tree. */
export function ensureObserverDir(files: ObserverFiles): void {
  ensureStateDir(files.stateDir);
  ensureStateSubdir(files.stateDir, 'observer');
}

/** The observer's log, appended to, never through a link. Returns the descriptor. */
export function openObserverLog(files: ObserverFiles): number {
  return openStateFile(files.log, 'append', files.stateDir);
}

export function readRecord(files: ObserverFiles): ObserverRecord | null {
  return parseRecord(readStateFile(files.record));
}

/** Written whole or not at all: a reader never sees half a record, and a link at its path is replaced, not followed. */
export function writeRecord(files: ObserverFiles, record: ObserverRecord): void {
  writeStateFile(files.record, JSON.stringify(record, null, 2) + '\n', files.stateDir);
}

/**
 * Removes what an observer leaves behind: its record, and its socket when the
 * record names one vouch would use and a socket is there (lstat, so a link is
 * never followed). Any other path a record names is left alone.
 */
export function removeObserverFiles(files: ObserverFiles, socket: string): void {
  unlinkQuietly(files.record);
  if (!trustedSocket(files, socket)) return;
  if (lstatSync(socket, { throwIfNoEntry: false })?.isSocket()) unlinkQuietly(socket);
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // gone already, or not ours to remove
  }
}

/**
 * Whether the recorded process is this observer: its kernel start time
 * matches the record and /proc/<pid>/cmdline shows vouch's hidden daemon
 * command for this config and state dir (or a foreground "vouch start").
 * "unknown" where there is no /proc: then vouch sends no signal at all.
 */
export function observerIdentity(record: ObserverRecord, files: ObserverFiles): 'verified' | 'not-it' | 'unknown' {
  if (!procAvailable()) return 'unknown';
  if (record.processStart === null || processStart(record.pid) !== record.processStart) return 'not-it';
  const argv = processArgv(record.pid);
  if (argv === null) return 'not-it';
  const daemon = argv.indexOf('__observe');
  if (daemon >= 0) {
    const value = (flag: string) => {
      const at = argv.indexOf(flag, daemon);
      return at < 0 ? undefined : argv[at + 1];
    };
    return value('--config') === files.configPath && value('--state-dir') === files.stateDir ? 'verified' : 'not-it';
  }
  const start = argv.indexOf('start');
  return start >= 0 && argv.includes('--foreground', start) ? 'verified' : 'not-it';
}
