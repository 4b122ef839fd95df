import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, constants, fchmodSync, fstatSync, fsyncSync, linkSync, lstatSync, mkdirSync, openSync, readFileSync, realpathSync, unlinkSync, writeSync } from 'node:fs';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { checkStateDir, ensureStateDir, openStateFile, readStateFile, writeStateFile } from './stateDir.js';
import { isInside } from '../core/pathInside.js';

/**
 * The key environment values are digested with (HMAC). It is kept apart from
 * the digests: a copied state.db alone cannot be tested against a dictionary.
 * One key per user, in the user's config dir, so every checkout and every
 * vouch process of that user (the CLI, the observer) digests alike.
 */
export const ENV_KEY_FILE = 'env-key';
const KEY = /^[0-9a-f]{64}$/;

export interface EnvKeyPlace {
  root: string;
  stateDir: string;
}

/**
 * The user's key, `$XDG_CONFIG_HOME/vouch/env-key` (default
 * `~/.config/vouch/env-key`), made on first use. Where that cannot be used (no
 * HOME, a read-only home in a sandbox, or a config dir inside the project,
 * where the key could be committed), the key is `<stateDir>/env-key`.
 */
export function envKey(place: EnvKeyPlace, env: NodeJS.ProcessEnv): string {
  const dir = userKeyDir(place.root, env);
  return (dir !== null ? userKey(dir) : null) ?? stateDirKey(place.stateDir);
}

/** `<config dir>/vouch`, or null when there is none or it lies inside the project. */
export function userKeyDir(root: string, env: NodeJS.ProcessEnv): string | null {
  // The XDG Base Directory spec: a relative XDG_CONFIG_HOME is invalid and ignored
  // (https://specifications.freedesktop.org/basedir-spec/latest/).
  const base = env.XDG_CONFIG_HOME && isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : env.HOME && isAbsolute(env.HOME) ? join(env.HOME, '.config') : null;
  if (base === null) return null;
  const dir = join(base, 'vouch');
  return isInside(resolved(root), resolved(dir)) ? null : dir;
}

function userKey(dir: string): string | null {
  const path = join(dir, ENV_KEY_FILE);
  try {
    const existing = readUserKey(path);
    if (existing !== undefined) return existing;
    mkdirSync(dirname(dir), { recursive: true });
    try {
      mkdirSync(dir, { mode: 0o700 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const stats = lstatSync(dir);
    if (!stats.isDirectory() || stats.uid !== process.getuid?.()) return null;
    if ((stats.mode & 0o077) !== 0) chmodSync(dir, 0o700);
    publish(path, (temporary) => openSync(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600));
    return readUserKey(path) ?? null;
  } catch {
    // Not writable (a read-only home, EACCES, ENOSPC): the state dir keeps the key instead.
    return null;
  }
}

/**
 * The key in the user's file; undefined when there is none yet, null when it
 * cannot be used (not a key, or someone else's: its owner could test guesses).
 */
function readUserKey(path: string): string | null | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile() || stats.uid !== process.getuid?.()) return null;
    if ((stats.mode & 0o077) !== 0) fchmodSync(fd, 0o600);
    const key = readFileSync(fd, 'utf8').trim();
    return KEY.test(key) ? key : null;
  } finally {
    closeSync(fd);
  }
}

/** The fallback: `<stateDir>/env-key`, never through a link. */
function stateDirKey(stateDir: string): string {
  const path = join(stateDir, ENV_KEY_FILE);
  const existing = readStateFile(path)?.trim();
  if (existing !== undefined && KEY.test(existing)) return existing;
  if (!checkStateDir(stateDir)) ensureStateDir(stateDir);
  if (existing === undefined) {
    publish(path, (temporary) => openStateFile(temporary, 'exclusive', stateDir));
  } else {
    // Not a key (truncated, or not vouch's): replaced whole.
    writeStateFile(path, `${randomBytes(32).toString('hex')}\n`, stateDir);
  }
  const key = readStateFile(path)?.trim();
  if (key === undefined || !KEY.test(key)) throw new Error(`unreachable: ${path} holds no key after it was written`);
  return key;
}

/**
 * Makes a key file at `path` unless one is there: written whole to a new
 * temporary file, then hard-linked into place. link(2) fails when the name
 * exists, so of two processes racing, one key wins and the other re-reads it.
 */
function publish(path: string, open: (temporary: string) => number): void {
  const temporary = join(dirname(path), `.${basename(path)}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`);
  const fd = open(temporary);
  try {
    try {
      writeSync(fd, `${randomBytes(32).toString('hex')}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    linkSync(temporary, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    try {
      unlinkSync(temporary);
    } catch {
      // already gone
    }
  }
}

/** The real path of `path`, through its nearest existing ancestor: links in it lead where they lead. */
function resolved(path: string): string {
  const rest: string[] = [];
  let at = path;
  for (;;) {
    try {
      return join(realpathSync(at), ...rest.reverse());
    } catch {
      const parent = dirname(at);
      if (parent === at) return path;
      rest.push(basename(at));
      at = parent;
    }
  }
}
