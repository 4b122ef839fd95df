import { resolve } from 'node:path';

/** A path as the compiler spells it: absolute, '/'-separated. */
export function compilerPath(path: string): string {
  return resolve(path).replace(/\\/g, '/');
}
