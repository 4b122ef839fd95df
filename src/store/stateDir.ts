import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { VouchError } from '../core/errors.js';
import { diskFull, isDiskFull } from './diskFull.js';

/** Creates the state dir with its own .gitignore, so the user's is left alone. */
export function ensureStateDir(stateDir: string): void {
  try {
    mkdirSync(join(stateDir, 'logs'), { recursive: true });
    const gitignore = join(stateDir, '.gitignore');
    if (!existsSync(gitignore)) writeFileSync(gitignore, '*\n');
  } catch (error) {
    throw notWritable(stateDir, error);
  }
}

export function notWritable(stateDir: string, error: unknown): VouchError {
  // A full disk is not a permission problem: telling the user to fix permissions sends them the wrong way.
  if (isDiskFull(error)) return diskFull(stateDir, error);
  const code = (error as NodeJS.ErrnoException).code ?? String(error);
  return new VouchError(
    'state-dir-not-writable',
    `the state dir ${stateDir} is not writable (${code}); fix its permissions, or keep state elsewhere with --state-dir DIR`,
  );
}

