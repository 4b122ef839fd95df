import { accessSync, constants, realpathSync, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import type { ExecutableIdentity } from '../core/context.js';

/** The PATH a check runs with: the project's own tools first, as npm scripts have them. */
export function checkPath(root: string, env: NodeJS.ProcessEnv): string {
  return [join(root, 'node_modules', '.bin'), env.PATH ?? ''].filter(Boolean).join(delimiter);
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
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** Path as found and the identity of the file it leads to, so a replaced binary or link target is seen. */
export function executableIdentity(path: string): ExecutableIdentity {
  const real = realpathSync.native(path);
  const stats = statSync(real, { bigint: true });
  return {
    path: real,
    identity: [stats.dev, stats.ino, stats.size, (stats.mode & 0o7777n).toString(8), stats.mtimeNs, stats.ctimeNs].join(':'),
  };
}
