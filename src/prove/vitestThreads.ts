import type { Readable } from 'node:stream';
import type { Worker } from 'node:worker_threads';

/**
 * The worker threads Vitest 3 started in this process. Vitest 3's pool
 * (tinypool) creates them without `stdout: true`, so Node pipes their
 * stdout and stderr into this process's own
 * (https://nodejs.org/api/worker_threads.html#new-workerfilename-options):
 * a test's `process.stdout.write` would land in vouch's verdict, or in an
 * MCP stdio transport. Vitest 4 pipes them into its own streams, which vouch
 * drains. vouch's own workers are created with `stdout: true` and are never
 * piped, so they are never taken for Vitest's.
 */
const threads = new Set<Worker>();
let holders = 0;

function adopt(worker: Worker): void {
  const piped = (stream: Readable, into: NodeJS.WriteStream): boolean => {
    const pipes = (stream as Readable & { _readableState?: { pipes?: unknown } })._readableState?.pipes;
    return Array.isArray(pipes) && pipes.includes(into);
  };
  if (!piped(worker.stdout, process.stdout)) return;
  worker.stdout.unpipe(process.stdout);
  worker.stdout.resume();
  worker.stderr.unpipe(process.stderr);
  worker.stderr.resume();
  threads.add(worker);
  worker.once('exit', () => threads.delete(worker));
}

/**
 * Takes over every worker thread Vitest 3 starts from now on, until the
 * returned release is called (by every holder). Node emits `worker` for each
 * new thread before the thread can have written anything
 * (https://nodejs.org/api/process.html#event-worker).
 */
export function holdVitestThreads(): () => void {
  if (holders === 0) process.on('worker', adopt);
  holders += 1;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    holders -= 1;
    if (holders === 0) process.off('worker', adopt);
  };
}

/**
 * Terminates every Vitest 3 thread still running. Vitest 3.2's pool asks each
 * worker to tear down and waits for its answer before terminating it
 * (`teardown` in its tinypool options); a worker spinning in the claimant's
 * `while (true) {}` never answers, so neither cancelling nor closing ever
 * finishes, and the thread spins on. Every such thread goes, the other
 * runtime lane's too: a deadline has already failed the prove they serve.
 */
export async function terminateVitestThreads(): Promise<void> {
  await Promise.allSettled([...threads].map((worker) => worker.terminate()));
}
