import { accessSync, constants, realpathSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { shellQuote } from './shellQuote.js';

/*
 * The program text a rewrite puts in the agent's command line, so that the
 * rewritten `PROGRAM run CHECK --if-due` runs this same vouch install.
 *
 * Plain `vouch` when the first `vouch` on the hook's PATH is this install
 * (same real path as the script this process runs); otherwise the node that
 * runs this hook and the real path of this script, each shell-quoted: the
 * same program text `vouch agent setup` writes into the hook entries.
 *
 * The hook's PATH stands in for the agent shell's PATH: both hosts pass their
 * own environment to hooks, and their shell tool starts from the same login
 * environment. Spawning a login shell on every hook call would cost more than
 * the whole decision. The fallback is always correct: an absolute node and
 * script need no PATH and no exec bit (the bundled bin is not executable in a
 * checkout). `vouch agent doctor` checks the real login-shell lookup.
 *
 * A hook reached through the native client (`client`) writes the client, the
 * node and the script: the client is known to run, and it asks a resident
 * server to run the check, which costs no Node start.
 */
export function hookProgram(env: NodeJS.ProcessEnv, entry: string | undefined, execPath: string = process.execPath, client = false): string {
  if (entry === undefined || entry === '') return 'vouch';
  const self = realPath(resolve(entry));
  const script = self ?? resolve(entry);
  // Reached through the native client, which runs: the rewrite's run goes through it too, and a
  // resident server answers it without a Node start (docs/hooks.md, "A run let through").
  if (client) return [hookClientPath(script), execPath, script].map(shellQuote).join(' ');
  const found = findOnPath('vouch', env.PATH);
  if (self !== null && found !== null && realPath(found) === self) return 'vouch';
  return `${shellQuote(execPath)} ${shellQuote(script)}`;
}

/** Where an install's native hook client is built, beside its entry script: dist/bin/main.js → build/Release/vouch_hook. */
export function hookClientPath(entry: string): string {
  return join(dirname(dirname(dirname(entry))), 'build', 'Release', 'vouch_hook');
}

/** The first executable file named `name` on PATH, as a POSIX shell would find it; relative entries are skipped (they depend on the shell's cwd). */
export function findOnPath(name: string, path: string | undefined): string | null {
  for (const dir of (path ?? '').split(':')) {
    if (dir === '' || !isAbsolute(dir)) continue;
    const candidate = join(dir, name);
    try {
      if (!statSync(candidate).isFile()) continue;
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here, or not executable: the shell would go on looking too
    }
  }
  return null;
}

function realPath(path: string): string | null {
  try {
    return realpathSync(path);
  } catch {
    return null;
  }
}
