import { lstatSync, mkdirSync } from 'node:fs';
import { basename, dirname, isAbsolute, join } from 'node:path';

/*
 * Where a resident hook server listens (agents/hookServer.ts), as the native
 * client computes it (native/hookClient.c): a directory only this user can
 * enter, and a name digested from the Node, the entry script and the whole
 * environment, so each environment has its own server.
 */

/** Linux's sun_path holds 108 bytes, the terminating NUL included. */
const MAX_SOCKET_PATH = 107;
export const HOOK_SOCKET_NAME = /^hook-[0-9a-f]{16}\.sock$/;

/**
 * Markers that keep the Node hook from starting servers that cannot serve
 * (agents/startHookServer.ts): beside a socket that could not be made, and in
 * the directory when it holds MAX_SERVERS already. Each counts for MARK_MS
 * from its mtime.
 */
export const FAILED_MARK = '.failed';
export const FULL_MARK = 'hook-servers.full';
export const MARK_MS = 60_000;

/** The directory: $XDG_RUNTIME_DIR/vouch, else $XDG_CACHE_HOME/vouch, else $HOME/.cache/vouch (absolute values only). */
export function hookSocketDir(env: NodeJS.ProcessEnv): string | null {
  const absolute = (value: string | undefined) => (value !== undefined && value.startsWith('/') ? value : undefined);
  const runtime = absolute(env.XDG_RUNTIME_DIR);
  if (runtime) return join(runtime, 'vouch');
  const cache = absolute(env.XDG_CACHE_HOME);
  if (cache) return join(cache, 'vouch');
  const home = absolute(env.HOME);
  return home ? join(home, '.cache', 'vouch') : null;
}

/** The socket for this node, entry script and environment; null where there can be none. */
export function hookSocketPath(env: NodeJS.ProcessEnv, node: string, entry: string): string | null {
  const dir = hookSocketDir(env);
  if (dir === null) return null;
  // Byte order, as the client's strcmp sorts environ.
  const entries = Object.entries(env).map(([key, value]) => Buffer.from(`${key}=${value}\0`));
  entries.sort(Buffer.compare);
  let hash = fnv1a(FNV_OFFSET, Buffer.from(`${node}\0${entry}\0`));
  for (const item of entries) hash = fnv1a(hash, item);
  const path = join(dir, `hook-${hash.toString(16).padStart(16, '0')}.sock`);
  return Buffer.byteLength(path) <= MAX_SOCKET_PATH ? path : null;
}

const FNV_OFFSET = 0xcbf29ce484222325n;
const FNV_PRIME = 0x100000001b3n;
const MASK = 0xffffffffffffffffn;

/** FNV-1a, 64 bits (http://www.isthe.com/chongo/tech/comp/fnv/): a name, not a secret. */
function fnv1a(start: bigint, bytes: Uint8Array): bigint {
  let hash = start;
  for (const byte of bytes) hash = ((hash ^ BigInt(byte)) * FNV_PRIME) & MASK;
  return hash;
}

/**
 * Checks a socket path handed to a new server (`vouch hook serve SOCKET`)
 * and makes its directory: a name the client would use, in a directory of
 * this user's that nobody else can enter. Returns why not, or null.
 */
export function prepareHookSocketDir(path: string): string | null {
  if (!isAbsolute(path) || !HOOK_SOCKET_NAME.test(basename(path)) || Buffer.byteLength(path) > MAX_SOCKET_PATH) return `${path} is not a hook server's socket path`;
  const dir = dirname(path);
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const stats = lstatSync(dir);
    if (!stats.isDirectory() || stats.uid !== process.getuid?.() || (stats.mode & 0o077) !== 0) return `${dir} is not a directory only this user can enter`;
  } catch (error) {
    return `${dir}: ${(error as Error).message}`;
  }
  return null;
}
