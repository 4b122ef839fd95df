import { chmodSync, closeSync, constants, fchmodSync, fstatSync, lstatSync, mkdirSync, openSync, readFileSync, readlinkSync, renameSync, unlinkSync, writeSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { VouchError } from '../core/errors.js';
import { diskFull, isDiskFull } from './diskFull.js';

/**
 * The state dir is the one place vouch writes, and a cloned repository may
 * hold anything there: links to files outside it, a directory of someone
 * else's. So every directory in it is checked by lstat (a real directory,
 * owned by this user) and every file is opened without following links.
 * Modes are owner-only whatever the umask: logs hold the checks' output.
 */
const DIR_MODE = 0o700;
const FILE_MODE = 0o600;

/** The subdirectories vouch keeps in a state dir. */
export type StateSubdir = 'logs' | 'locks' | 'observer' | 'traces';

/** Creates, or checks, the state dir and its .gitignore, so the user's own .gitignore is left alone. */
export function ensureStateDir(stateDir: string): void {
  ensureOwnDir(stateDir, stateDir, true);
  ensureStateSubdir(stateDir, 'logs');
  try {
    const gitignore = join(stateDir, '.gitignore');
    const fd = openSync(gitignore, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, FILE_MODE);
    try {
      writeSync(fd, '*\n');
    } catch (error) {
      // An empty one (a full disk) would be kept for good and ignore nothing: made again next time.
      unlinkSync(gitignore);
      throw error;
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    // EEXIST also for a link there: O_EXCL never follows one, and nothing is written through it.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw notWritable(stateDir, error);
  }
}

/** Checks an existing state dir without creating anything: a link, a file, or someone else's is refused. */
export function checkStateDir(stateDir: string): boolean {
  let stats: Stats;
  try {
    stats = lstatSync(stateDir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw notWritable(stateDir, error);
  }
  refuseUnsafeDir(stateDir, stateDir, stats);
  return true;
}

/** `<stateDir>/<name>`, created owner-only, or checked to be a real directory of this user's. */
export function ensureStateSubdir(stateDir: string, name: StateSubdir): string {
  const dir = join(stateDir, name);
  ensureOwnDir(dir, stateDir, false);
  return dir;
}

function ensureOwnDir(dir: string, stateDir: string, makeParents: boolean): void {
  let stats: Stats;
  try {
    stats = lstatSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw notWritable(stateDir, error);
    try {
      // Parents, if any, are the user's own --state-dir path: made with the usual modes.
      if (makeParents) mkdirSync(join(dir, '..'), { recursive: true });
      mkdirSync(dir, { mode: DIR_MODE });
    } catch (made) {
      if ((made as NodeJS.ErrnoException).code !== 'EEXIST') throw notWritable(stateDir, made);
    }
    stats = lstatSync(dir);
    refuseUnsafeDir(dir, stateDir, stats);
    // mkdir's mode is filtered by the umask; the result must not depend on it.
    if ((stats.mode & 0o777) !== DIR_MODE) chmodSync(dir, DIR_MODE);
    return;
  }
  refuseUnsafeDir(dir, stateDir, stats);
  // A state dir made by an older vouch under umask 022 is world-readable: tighten vouch's own
  // subdirectories. The state dir itself may be a directory the user named, so it is left as is.
  if (dir !== stateDir && (stats.mode & 0o077) !== 0) chmodSync(dir, DIR_MODE);
}

function refuseUnsafeDir(dir: string, stateDir: string, stats: Stats): void {
  const what = dir === stateDir ? 'the state dir' : 'the state dir\'s';
  if (stats.isSymbolicLink()) {
    throw unsafe(`${what} ${dir} is a symbolic link (to ${linkTarget(dir)}); vouch keeps state only in a real directory, so a link cannot send its writes elsewhere. Remove the link, or keep state elsewhere with --state-dir DIR`);
  }
  if (!stats.isDirectory()) {
    throw unsafe(`${what} ${dir} is not a directory; move it away, or keep state elsewhere with --state-dir DIR`);
  }
  const uid = process.getuid?.();
  if (uid !== undefined && stats.uid !== uid) {
    throw unsafe(`${what} ${dir} belongs to uid ${stats.uid}, not to you (uid ${uid}); vouch keeps state only in a directory you own. Remove it, or keep state elsewhere with --state-dir DIR`);
  }
}

export type StateFileMode = 'truncate' | 'append' | 'exclusive';

/**
 * Opens a file in the state dir for writing, owner-only, never through a link
 * (O_NOFOLLOW), and never a file with other names (a hard link may be the name
 * of a file elsewhere). Returns the descriptor.
 */
export function openStateFile(path: string, mode: StateFileMode, stateDir: string): number {
  const how = mode === 'append' ? constants.O_APPEND : mode === 'exclusive' ? constants.O_EXCL : constants.O_TRUNC;
  let fd: number;
  try {
    fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW | how, FILE_MODE);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') throw linkRefused(path, stateDir);
    throw error;
  }
  const stats = fstatSync(fd);
  if (!stats.isFile() || stats.nlink > 1) {
    closeSync(fd);
    throw unsafe(`${path} is ${stats.isFile() ? 'a file with other names (hard links)' : 'not a regular file'}; vouch writes only files of its own in its state dir. Remove it, or keep state elsewhere with --state-dir DIR`);
  }
  // O_CREAT's mode is filtered by the umask, and an existing file (an older vouch's) keeps its own:
  // the owner reads and writes it, nobody else does.
  const wanted = (stats.mode & 0o700) | FILE_MODE;
  if ((stats.mode & 0o777) !== wanted) fchmodSync(fd, wanted);
  return fd;
}

/** Writes a whole file in the state dir: a reader sees the old one or the new one, and a link at `path` is replaced, not followed. */
export function writeStateFile(path: string, data: string, stateDir: string): void {
  // Unique by the pid among running processes (this write is synchronous); the random part only
  // steps past a leftover of a dead process with the same pid. O_EXCL and O_NOFOLLOW make any clash
  // an error, never a write elsewhere, so it needs no node:crypto, whose load costs the hook 2-3 ms.
  const temporary = `${path}.${process.pid}-${Math.random().toString(16).slice(2, 10)}.tmp`;
  const fd = openStateFile(temporary, 'exclusive', stateDir);
  try {
    writeSync(fd, data);
  } catch (error) {
    closeSync(fd);
    unlinkSync(temporary);
    throw error;
  }
  closeSync(fd);
  try {
    renameSync(temporary, path);
  } catch (error) {
    unlinkSync(temporary);
    throw error;
  }
}

/** A state file's text; null when it is missing, unreadable, or a link (which is never followed). */
export function readStateFile(path: string): string | null {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch {
    return null;
  }
  try {
    return readFileSync(fd, 'utf8');
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/**
 * Checks files in the state dir that a library opens itself (SQLite, which follows links): a
 * link among them is refused, and one that others may read (an older vouch's) is made owner-only.
 */
export function guardStateFiles(stateDir: string, names: readonly string[]): void {
  for (const name of names) {
    const path = join(stateDir, name);
    const stats = lstatSync(path, { throwIfNoEntry: false });
    if (stats === undefined) continue;
    if (stats.isSymbolicLink()) throw linkRefused(path, stateDir);
    if ((stats.mode & 0o077) !== 0) chmodSync(path, stats.mode & 0o700);
  }
}

function linkRefused(path: string, stateDir: string): VouchError {
  return unsafe(`${path} is a symbolic link (to ${linkTarget(path)}); vouch never writes through links in its state dir. Remove it (a repository should not carry ${stateDir}), or keep state elsewhere with --state-dir DIR`);
}

function linkTarget(path: string): string {
  try {
    return readlinkSync(path);
  } catch {
    return 'an unknown target';
  }
}

function unsafe(message: string): VouchError {
  return new VouchError('state-dir-unsafe', message);
}

export function notWritable(stateDir: string, error: unknown): VouchError {
  if (error instanceof VouchError) return error;
  // No room is not a permission problem, and telling the user to fix permissions sends them the wrong way.
  if (isDiskFull(error)) return diskFull(stateDir, error);
  const code = (error as NodeJS.ErrnoException).code ?? String(error);
  return new VouchError(
    'state-dir-not-writable',
    `the state dir ${stateDir} is not writable (${code}); fix its permissions, or keep state elsewhere with --state-dir DIR`,
  );
}
