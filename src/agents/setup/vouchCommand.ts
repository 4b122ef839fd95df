import { spawnSync } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { hookClientPath } from '../hookProgram.js';
import { shellQuote } from '../shellQuote.js';

/** What a login shell answered to `command -v vouch`. */
export interface CommandLookup {
  shell: string;
  /** The path the shell printed, or null when it found no vouch. */
  found: string | null;
  /** `found` with symlinks resolved, or null. */
  resolved: string | null;
  /** Why the lookup itself failed (no shell, a timeout), or null. */
  error: string | null;
}

/** How the agent's hooks and instructions call vouch, and why. */
export interface VouchCommand {
  /** The entry script of the vouch running now, symlinks resolved. */
  thisInstall: string;
  /** The Node that runs it. */
  node: string;
  lookup: CommandLookup;
  /** The login shell's vouch is this install. */
  sameInstall: boolean;
  /** The program words, ready for a shell: `vouch`, or this install by absolute path. */
  program: string;
  /** The same words unquoted, for hosts that spawn a program with no shell (MCP servers). */
  argv: string[];
  /**
   * The program words of the hook handlers: the native client of this install
   * (build/Release/vouch_hook, native/hookClient.c) before this Node and
   * entry script, when it is built and runs here; else `program`.
   */
  hookProgram: string;
  /** The native client in hookProgram, or null. */
  hookClient: string | null;
}

export type LookupFn = (env: NodeJS.ProcessEnv) => CommandLookup;

/**
 * Asks a login shell, because agents start their hooks with the user's PATH
 * as the login profile sets it, not with the PATH of the terminal that ran
 * setup. Slow (it runs the profile), so only setup and doctor call it.
 */
export function loginShellLookup(env: NodeJS.ProcessEnv): CommandLookup {
  const shell = env.SHELL && env.SHELL.length > 0 ? env.SHELL : '/bin/sh';
  const result = spawnSync(shell, ['-l', '-c', 'command -v vouch'], { env, encoding: 'utf8', timeout: 10_000, stdio: ['ignore', 'pipe', 'pipe'] });
  if (result.error) return { shell, found: null, resolved: null, error: `${shell} -l could not run: ${result.error.message}` };
  // Profiles may print banners; the answer is the last line.
  const lines = result.stdout.split('\n').map((line) => line.trim()).filter((line) => line.length > 0);
  const found = result.status === 0 ? (lines.at(-1) ?? null) : null;
  if (found === null || !found.startsWith('/')) return { shell, found: found, resolved: null, error: null };
  return { shell, found, resolved: realOrNull(found), error: null };
}

export function resolveVouchCommand(entry: string, node: string, env: NodeJS.ProcessEnv, lookup: LookupFn = loginShellLookup): VouchCommand {
  const thisInstall = realOrNull(entry) ?? entry;
  const answer = lookup(env);
  const sameInstall = answer.resolved !== null && answer.resolved === thisInstall;
  const argv = sameInstall ? ['vouch'] : [node, thisInstall];
  const program = argv.map(shellQuote).join(' ');
  const client = hookClientOf(thisInstall);
  return { thisInstall, node, lookup: answer, sameInstall, program, argv, hookProgram: client === null ? program : [client, node, thisInstall].map(shellQuote).join(' '), hookClient: client };
}

/**
 * The native hook client beside this install's entry script (dist/bin/main.js
 * → build/Release/vouch_hook), when it exists and runs: called with no
 * arguments it prints its usage and exits 0. Null otherwise, and where it is
 * not built (only Linux has it).
 */
export function hookClientOf(entry: string): string | null {
  if (process.platform !== 'linux') return null;
  const client = hookClientPath(entry);
  if (!existsSync(client)) return null;
  const probe = spawnSync(client, [], { encoding: 'utf8', timeout: 5_000, stdio: ['ignore', 'pipe', 'pipe'] });
  return probe.status === 0 && probe.stderr.includes('vouch_hook') ? client : null;
}

export function realOrNull(path: string): string | null {
  try {
    return realpathSync(path);
  } catch {
    return null;
  }
}
