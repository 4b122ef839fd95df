import { execFileSync, spawn } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterAll, expect, it } from 'vitest';
import { fdOutput } from '../../src/cli/fdOutput.js';
import { CLI, cleanEnv } from '../helpers/project.js';

/*
 * The command line writes to its descriptors directly (src/cli/fdOutput.ts).
 * Nothing may be lost to a full pipe or a partial write, and a reader that
 * went away must end the output quietly, not crash the command.
 */

const dir = mkdtempSync(join(tmpdir(), 'vouch-fd-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let count = 0;
/** A named pipe, opened at both ends without blocking: a write to it fails with EAGAIN once its 64 KiB are full. */
function fifo(): { reader: number; writer: number } {
  const path = join(dir, `${++count}.fifo`);
  execFileSync('mkfifo', [path]);
  const reader = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  const writer = openSync(path, constants.O_WRONLY | constants.O_NONBLOCK);
  return { reader, writer };
}

// Reads `expected` bytes from a non-blocking descriptor, slowly, and hands them back.
const SLOW_READER = `
const { readSync } = require('node:fs');
const { parentPort, workerData } = require('node:worker_threads');
const { fd, expected } = workerData;
const pause = new Int32Array(new SharedArrayBuffer(4));
const chunks = [];
let total = 0;
while (total < expected) {
  const chunk = Buffer.alloc(16 * 1024);
  let read = 0;
  try { read = readSync(fd, chunk); } catch (error) { if (error.code !== 'EAGAIN') throw error; }
  if (read > 0) { chunks.push(chunk.subarray(0, read)); total += read; }
  Atomics.wait(pause, 0, 0, read > 0 ? 1 : 2);
}
parentPort.postMessage(Buffer.concat(chunks));
`;

it('writes everything to a full non-blocking pipe, waiting instead of dropping', async () => {
  const { reader, writer } = fifo();
  const text = Array.from({ length: 40_000 }, (_, line) => `line ${line} ✓\n`).join('');
  const bytes = Buffer.from(text);
  expect(bytes.length).toBeGreaterThan(8 * 64 * 1024);
  const worker = new Worker(SLOW_READER, { eval: true, workerData: { fd: reader, expected: bytes.length * 2 } });
  const received = new Promise<Uint8Array>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  const output = fdOutput(writer);
  expect(output.write(text)).toBe(true);
  expect(output.write(bytes)).toBe(true);
  expect(Buffer.from(await received).equals(Buffer.concat([bytes, bytes]))).toBe(true);
  await worker.terminate();
  closeSync(reader);
  closeSync(writer);
});

it('ends quietly once nobody reads', () => {
  const { reader, writer } = fifo();
  closeSync(reader);
  const output = fdOutput(writer);
  expect(output.write('lost\n')).toBe(false);
  expect(output.write('also lost\n')).toBe(false);
  closeSync(writer);
});

it('a command whose reader went away exits cleanly (vouch --help | true)', async () => {
  const child = spawn(process.execPath, [CLI, '--help'], { env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  // Closed long before Node has started, so vouch's write meets a pipe without a reader.
  child.stdout.destroy();
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  expect(stderr).toBe('');
  expect(code).toBe(0);
});
