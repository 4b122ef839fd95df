#!/usr/bin/env node
import { main } from './dispatch.js';
import { fdOutput } from './fdOutput.js';
import type { CliIo } from './io.js';

/** The process's own io; dispatch.ts runs a command on any (the tests run it in-process). */
const io: CliIo = {
  cwd: process.cwd(),
  env: process.env,
  stdout: fdOutput(1),
  stderr: fdOutput(2),
  isTty: async () => (await import('node:tty')).isatty(1),
};
const argv = process.argv.slice(2);
const entry = process.argv[1];

/**
 * A status the running observer answers whole costs this process no more than finding it
 * (cli/servedStatus.ts), and it exits as soon as the answer is written (synchronously, fdOutput.ts):
 * nothing else was started, and a collection or a timer left to run would only delay the exit.
 */
async function answer(): Promise<number> {
  if (argv[0] === 'status' && entry !== undefined) {
    const served = (await import('./servedStatus.js')).servedStatus(argv.slice(1), io, entry);
    if ('code' in served) process.exit(served.code);
    if (served.unavailable !== undefined) io.observerUnavailable = served.unavailable;
  }
  return main(argv, io);
}

answer().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    io.stderr.write(`vouch: internal error: ${String(error)}\n`);
    process.exitCode = 70;
  },
);
