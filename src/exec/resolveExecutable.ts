import { isSkippedPath } from '../core/systemPaths.js';
import { accessSync, constants, realpathSync, statSync } from 'node:fs';
import { delimiter, dirname, isAbsolute, join, resolve } from 'node:path';
import type { ExecutableIdentity } from '../core/context.js';

/**
 * The PATH a check runs with: node_modules/.bin of the root and of every
 * directory above it, then the caller's PATH, as npm gives its scripts. So a
 * "command" check finds the same tools a "script" check would.
 */
export function checkPath(root: string, env: NodeJS.ProcessEnv): string {
  const bins: string[] = [];
  for (let dir = root; ; dir = dirname(dir)) {
    bins.push(join(dir, 'node_modules', '.bin'));
    if (dirname(dir) === dir) break;
  }
  return [...bins, env.PATH ?? ''].filter(Boolean).join(delimiter);
}

/** Finds a program the way the child's exec will, and returns the real file's path. */
export function resolveExecutable(name: string, root: string, path: string): string | null {
  if (name.includes('/')) {
    const candidate = isAbsolute(name) ? name : resolve(root, name);
    return executable(candidate) ? candidate : null;
  }
  for (const dir of path.split(delimiter)) {
    if (!dir) continue;
    const candidate = join(isAbsolute(dir) ? dir : resolve(root, dir), name);
    if (executable(candidate)) return candidate;
  }
  return null;
}

function executable(path: string): boolean {
  try {
    // Most of PATH's directories lack the name: a stat that returns undefined, not an error
    // thrown for each, which costs a status about a millisecond on a long PATH.
    return statSync(path, { throwIfNoEntry: false })?.isFile() === true && (accessSync(path, constants.X_OK), true);
  } catch {
    return false;
  }
}

/** Path as found and the identity of the file it leads to, so a replaced binary or link target is seen. */
export function executableIdentity(path: string, traced = false): ExecutableIdentity {
  const real = realpathSync.native(path);
  const stats = statSync(real, { bigint: true });
  const mode = (stats.mode & 0o7777n).toString(8);
  // A traced run's evidence holds the executable's bytes (it was executed and read), unless it is
  // a system file the evidence leaves out; its identity then keeps only what the bytes do not
  // say. Its inode's ctime moves whenever a pnpm store gains or loses a link to it, which must
  // not make a traced check STALE.
  if (traced && !isSkippedPath(real, [])) return { path: real, identity: `mode:${mode}` };
  return {
    path: real,
    identity: [stats.dev, stats.ino, stats.size, mode, stats.mtimeNs, stats.ctimeNs].join(':'),
  };
}
