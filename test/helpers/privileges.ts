import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { expect } from 'vitest';
import { CLI, cleanEnv, type CliResult, type TempProject } from './project.js';

export const IS_ROOT = process.getuid?.() === 0;
const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv', '/usr/sbin/setpriv'].find((path) => existsSync(path));
// Root reads and writes through any mode bits: without setpriv to drop privileges there is no way
// to make a file unreadable to this process, so only then are the permission tests skipped.
export const CANNOT_DROP_PRIVILEGES = IS_ROOT && SETPRIV === undefined;
const NOBODY = 65534;

/** Runs the built CLI as the unprivileged "nobody", for permission tests that root would bypass. */
export function vouchUnprivileged(project: TempProject, args: string[], extra: NodeJS.ProcessEnv = {}): CliResult {
  if (!IS_ROOT) return project.vouch(args, { env: cleanEnv(extra) });
  const result = spawnSync(
    SETPRIV ?? 'setpriv',
    [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', process.execPath, CLI, ...args],
    // HOME inside the project: nobody cannot read root's git config.
    { cwd: project.root, env: cleanEnv({ HOME: project.root, ...extra }), encoding: 'utf8', timeout: 60_000 },
  );
  if (result.error) throw result.error;
  return { code: result.status, signal: result.signal, stdout: result.stdout, stderr: result.stderr };
}

/** Hands the whole project to nobody (git refuses a repository owned by someone else). */
export function giveToNobody(project: TempProject) {
  if (!IS_ROOT) return;
  const result = spawnSync('chown', ['-R', `${NOBODY}:${NOBODY}`, project.root]);
  expect(result.status, String(result.stderr)).toBe(0);
}
