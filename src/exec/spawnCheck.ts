import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import type { Output } from '../core/output.js';

export interface SpawnOutcome {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** A signal that reached vouch and was forwarded to the check. */
  interruptedBy: NodeJS.Signals | null;
  spawnError: string | null;
}

export interface SpawnRequest {
  executable: string;
  argv: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  logPath: string;
  /** Where the check's own stdout goes live; with --json it goes to stderr, keeping stdout parseable. */
  stdout: Output;
  stderr: Output;
}

const FORWARDED: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/** Runs the check with no shell, streaming its output live and into its log. */
export function spawnCheck(request: SpawnRequest): Promise<SpawnOutcome> {
  return new Promise((resolve) => {
    const log = createWriteStream(request.logPath, { flags: 'w' });
    let interruptedBy: NodeJS.Signals | null = null;
    let spawnError: string | null = null;
    const child = spawn(request.executable, request.argv.slice(1), {
      cwd: request.cwd,
      env: request.env,
      // No terminal on stdin: a runner that would otherwise start in watch mode (vitest) runs once.
      stdio: ['ignore', 'pipe', 'pipe'],
      argv0: request.argv[0],
    });
    const forward = (signal: NodeJS.Signals) => {
      interruptedBy ??= signal;
      child.kill(signal);
    };
    for (const signal of FORWARDED) process.on(signal, forward);
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
      for (const name of FORWARDED) process.off(name, forward);
      log.end(() => resolve({ exitCode: spawnError ? 127 : exitCode, signal, interruptedBy, spawnError }));
    });
  });
}
