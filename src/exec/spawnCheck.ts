import { spawn } from 'node:child_process';
import type { Output } from '../core/output.js';
import { startGroupReaper } from './groupReaper.js';
import type { RunLog } from './runLog.js';

export interface SpawnOutcome {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** A signal that reached vouch and was forwarded to the check. */
  interruptedBy: NodeJS.Signals | null;
  spawnError: string | null;
  /** Why the log is incomplete (an errno code such as ENOSPC), or null when all of it was written. */
  logFailure: string | null;
}

export interface SpawnRequest {
  executable: string;
  argv: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  log: RunLog;
  /** The log's path: a check started by another process writes the log there itself. */
  logPath: string;
  /** Where the check's own stdout goes live; with --json it goes to stderr, keeping stdout parseable. */
  stdout: Output;
  stderr: Output;
  /** The check's process group, as soon as it exists, so a later run can end it if vouch dies. */
  onGroup(pgid: number): void;
}

/** How a check's process is started: here by default, or by the native client of a resident server (cli/runServer.ts). */
export type CheckSpawner = (request: SpawnRequest) => Promise<SpawnOutcome>;

const FORWARDED: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/**
 * Runs the check with no shell, in its own process group, streaming its output
 * live and into its log. The group is what a signal to vouch reaches, and what
 * vouch's death ends: the check's own children (a package manager's script, a
 * test runner's workers) go with it.
 */
export function spawnCheck(request: SpawnRequest): Promise<SpawnOutcome> {
  return new Promise((resolve) => {
    const { log } = request;
    let interruptedBy: NodeJS.Signals | null = null;
    let spawnError: string | null = null;
    const reaper = startGroupReaper();
    const child = spawn(request.executable, request.argv.slice(1), {
      cwd: request.cwd,
      env: request.env,
      // No terminal on stdin: a runner that would otherwise start in watch mode (vitest) runs once.
      stdio: ['ignore', 'pipe', 'pipe'],
      argv0: request.argv[0],
      // setsid(2): the check leads a new process group (and session), so the whole group can be signalled.
      detached: true,
    });
    const pgid = child.pid;
    if (pgid !== undefined) {
      reaper.arm(pgid);
      request.onGroup(pgid);
    }
    const signalGroup = (signal: NodeJS.Signals) => {
      try {
        if (pgid !== undefined) process.kill(-pgid, signal);
      } catch {
        // the group has ended
      }
    };
    // Out of the terminal's foreground group, the check no longer hears Ctrl-C itself: vouch passes it on.
    const forward = (signal: NodeJS.Signals) => {
      interruptedBy ??= signal;
      signalGroup(signal);
    };
    for (const signal of FORWARDED) process.on(signal, forward);
    // Ctrl-Z stops the terminal's foreground group, which the check has left: vouch stops it too, then
    // itself (SIGTSTP's default action, which a listener replaces), and continues it on SIGCONT (fg, bg).
    const suspend = () => {
      signalGroup('SIGSTOP');
      process.kill(process.pid, 'SIGSTOP');
    };
    const resume = () => signalGroup('SIGCONT');
    process.on('SIGTSTP', suspend);
    process.on('SIGCONT', resume);
    child.stdout.on('data', (chunk: Buffer) => {
      request.stdout.write(chunk);
      log.write(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      request.stderr.write(chunk);
      log.write(chunk);
    });
    child.on('error', (error) => {
      spawnError = error.message;
      log.write(`vouch: cannot start ${request.argv[0]}: ${error.message}\n`);
    });
    child.on('close', (exitCode, signal) => {
      reaper.disarm();
      for (const name of FORWARDED) process.off(name, forward);
      process.off('SIGTSTP', suspend);
      process.off('SIGCONT', resume);
      const logFailure = log.close();
      resolve({ exitCode: spawnError ? 127 : exitCode, signal, interruptedBy, spawnError, logFailure });
    });
  });
}
