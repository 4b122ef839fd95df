import { mkdirSync, readdirSync, readFileSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { VouchError } from '../../core/errors.js';
import type { FileChange } from './changePlan.js';

/**
 * Writes each planned file. Each file is first checked to still hold the
 * bytes the plan was made from, so an edit made while the user read the
 * diff is never overwritten.
 */
export function applyChanges(changes: readonly FileChange[]): void {
  for (const change of changes) {
    let now: string | null;
    try {
      now = readFileSync(change.absolutePath, 'utf8');
    } catch {
      now = null;
    }
    if (now !== change.before) {
      throw new VouchError('agent-file-changed', `${change.absolutePath} changed while vouch was planning; nothing was written. Run the command again to see the new plan`);
    }
  }
  for (const change of changes) {
    try {
      for (const dir of change.createDirs) mkdirSync(dir, { recursive: true });
      if (change.after === null) rmSync(change.absolutePath, { force: true });
      else writeFileSync(change.absolutePath, change.after);
      for (const dir of change.removeDirs) {
        if (isEmptyDir(dir)) rmdirSync(dir);
      }
    } catch (error) {
      throw new VouchError('agent-write-failed', `cannot write ${change.absolutePath} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); fix its permissions and run the command again`);
    }
  }
}

function isEmptyDir(dir: string): boolean {
  try {
    return readdirSync(dir).length === 0;
  } catch {
    return false;
  }
}
