import type { Readable } from 'node:stream';
import type { Worker } from 'node:worker_threads';

/*
 * The workers Vitest 3 starts in and under this process, and what vouch must
 * do about them that Vitest 4 does itself.
 *
 * Output: Vitest 3's pool (tinypool) creates its worker threads without
 * `stdout: true`, so Node pipes their stdout and stderr into this process's
 * own (https://nodejs.org/api/worker_threads.html#new-workerfilename-options),
 * and pipes its forked workers' output there too. A test's
 * `process.stdout.write` would land in vouch's verdict, or in an MCP stdio
 * transport. Vitest 4 pipes both into its own streams, which vouch drains.
 *
 * Termination: Vitest 3.2's pool asks each worker to tear down and waits for
 * its answer before terminating it (`teardown` in its tinypool options); a
 * worker spinning in the claimant's `while (true) {}` never answers, so
 * neither cancelling nor closing Vitest ever finishes, and the worker spins on.
 */

/** Worker threads Vitest 3 started, until they exit. */
const threads = new Set<Worker>();
/** Streams that were piped into this process's stdout or stderr while held, and were unpiped. */
const unpiped = new WeakSet<Readable>();
let holders = 0;

/** Whatever is piped into vouch's stdout or stderr while a Vitest 3 lives is a worker's output: vouch pipes nothing there. */
function onPipe(this: NodeJS.WriteStream, source: Readable): void {
  source.unpipe(this);
  source.resume();
  unpiped.add(source);
}

/** A worker thread whose output Node piped into this process's is Vitest's: vouch creates its own with `stdout: true`. */
function adopt(worker: Worker): void {
  if (!unpiped.has(worker.stdout)) return;
  threads.add(worker);
  worker.once('exit', () => threads.delete(worker));
}

/**
 * Takes over the workers Vitest 3 starts from now on, until the returned
 * release is called (by every holder). Node pipes a worker's output and
 * emits `worker` before the worker can have written anything
 * (https://nodejs.org/api/process.html#event-worker).
 */
export function holdVitest3Workers(): () => void {
  if (holders === 0) {
    process.stdout.on('pipe', onPipe);
    process.stderr.on('pipe', onPipe);
    process.on('worker', adopt);
  }
  holders += 1;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    holders -= 1;
    if (holders === 0) {
      process.stdout.off('pipe', onPipe);
      process.stderr.off('pipe', onPipe);
      process.off('worker', adopt);
    }
  };
}

/**
 * Terminates every Vitest 3 worker thread still running, the other runtime
 * lane's too: a deadline has already failed the prove they serve. A forked
 * worker (the `forks` pool) is left alone: killing it from outside makes
 * tinypool throw from an event listener (it still forwards messages to the
 * dead child), which would end vouch's process.
 */
export async function terminateVitest3Workers(): Promise<void> {
  await Promise.allSettled([...threads].map((worker) => worker.terminate()));
}
