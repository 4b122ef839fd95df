import { lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A run started in the test's process can begin within milliseconds of the test's last write,
 * where a file whose ctime is that close to the run's start counts as changed during the run (a
 * traced run's clock slack, 20 ms; the observer's tick, 50 ms). A CLI process starts a Node start
 * later. Tests that run in process first wait until their last write is older than this.
 */
export const SETTLE_MS = 60;

/** The newest ctime under `dir` (ms), links not followed; .git and .vouch at its top left out. */
export function newestChangeMs(dir: string, top = true): number {
  let newest = lstatSync(dir).ctimeMs;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (top && (entry.name === '.git' || entry.name === '.vouch')) continue;
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestChangeMs(path, false) : lstatSync(path).ctimeMs);
  }
  return newest;
}
