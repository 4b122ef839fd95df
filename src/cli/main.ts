#!/usr/bin/env node
import { createRequire } from 'node:module';
import { main } from './dispatch.js';
import { fdOutput } from './fdOutput.js';
import type { CliIo } from './io.js';

/** The process's own io; dispatch.ts runs a command on any (the tests run it in-process). */
const io: CliIo = {
  cwd: process.cwd(),
  env: process.env,
  stdout: fdOutput(1),
  stderr: fdOutput(2),
  // Only prove asks, and node:tty loads net: asked lazily.
  get isTty() {
    return (createRequire(import.meta.url)('node:tty') as typeof import('node:tty')).isatty(1);
  },
};
main(process.argv.slice(2), io).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    io.stderr.write(`vouch: internal error: ${String(error)}\n`);
    process.exitCode = 70;
  },
);
