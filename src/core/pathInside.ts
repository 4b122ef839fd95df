import { isAbsolute, relative, sep } from 'node:path';

/** Whether `path` is `dir` or below it, as written: resolve links first where they could lead out. */
export function isInside(dir: string, path: string): boolean {
  const rel = relative(dir, path);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}
