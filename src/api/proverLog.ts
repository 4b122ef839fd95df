import { closeSync, fstatSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { ensureStateDir, openStateFile } from '../store/stateDir.js';

/** A log past this size is started over when a prover opens it; one prover writes at most this much into it. */
const LOG_LIMIT = 1 << 20;

/** Where a prover's third-party output goes: `<state dir>/logs/prove.log`. */
export function proverLogPath(stateDir: string): string {
  return join(stateDir, 'logs', 'prove.log');
}

type Write = typeof process.stderr.write;

/**
 * The prover's log: what the workspace's tools, loaded into vouch's process,
 * write to stderr while a prover is open (a dependency of the Vitest config
 * warning that browserslist's data is old, an ESLint plugin's deprecation
 * notice). It is not about the claim, and on the user's terminal it reads as
 * if vouch said it, or lands in the middle of an MCP host's log.
 *
 * Opened on the first write only, so a quiet prove leaves nothing behind. A
 * log that cannot be opened (a read-only state dir) gives the text back to
 * stderr: hidden output would be worse than noisy output.
 */
export class ProverLog {
  readonly path: string;
  readonly #stateDir: string;
  readonly #fallback: Write;
  #fd: number | null = null;
  #failed = false;
  #written = 0;
  #full = false;

  constructor(stateDir: string, fallback: Write) {
    this.#stateDir = stateDir;
    this.path = proverLogPath(stateDir);
    this.#fallback = fallback;
  }

  write(chunk: string | Uint8Array): void {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const fd = this.#open();
    if (fd === null) {
      this.#fallback.call(process.stderr, bytes);
      return;
    }
    if (this.#full) return;
    if (this.#written + bytes.length > LOG_LIMIT) {
      this.#full = true;
      this.#append(fd, Buffer.from(`\nvouch: this prover wrote ${LOG_LIMIT} bytes here; the rest of its output was dropped\n`));
      return;
    }
    this.#written += bytes.length;
    this.#append(fd, bytes);
  }

  close(): void {
    if (this.#fd !== null) closeSync(this.#fd);
    this.#fd = null;
  }

  #open(): number | null {
    if (this.#fd !== null || this.#failed) return this.#fd;
    try {
      ensureStateDir(this.#stateDir);
      let fd = openStateFile(this.path, 'append', this.#stateDir);
      if (fstatSync(fd).size > LOG_LIMIT) {
        closeSync(fd);
        fd = openStateFile(this.path, 'truncate', this.#stateDir);
      }
      this.#fd = fd;
      this.#append(fd, Buffer.from(`--- vouch prover, pid ${process.pid}, ${new Date().toISOString()}: what the workspace's tools wrote to stderr ---\n`));
    } catch {
      this.#failed = true;
    }
    return this.#fd;
  }

  #append(fd: number, bytes: Buffer): void {
    try {
      for (let offset = 0; offset < bytes.length; ) offset += writeSync(fd, bytes, offset);
    } catch {
      // A full disk: the rest of the noise is dropped, never thrown into the tool that wrote it.
    }
  }
}

/** The logs of open provers, newest last: process.stderr writes go to the newest while any is open. */
const diverting: ProverLog[] = [];
let original: Write | null = null;

/**
 * Sends everything written to process.stderr (console.warn and console.error
 * included, and a worker thread's stderr, which Node pipes into it) to a
 * prover log, until the returned function is called. vouch's own messages do
 * not go through process.stderr (they are written to the descriptor), so
 * they still reach the terminal. Child processes that inherit descriptor 2
 * are not diverted: the stages give theirs pipes of their own.
 */
export function divertStderr(stateDir: string): () => void {
  original ??= process.stderr.write;
  const log = new ProverLog(stateDir, original);
  diverting.push(log);
  if (diverting.length === 1) {
    process.stderr.write = function divert(chunk: string | Uint8Array, encoding?: unknown, callback?: unknown): boolean {
      diverting.at(-1)?.write(typeof chunk === 'string' && typeof encoding === 'string' ? Buffer.from(chunk, encoding as BufferEncoding) : chunk);
      const done = typeof encoding === 'function' ? encoding : callback;
      if (typeof done === 'function') queueMicrotask(() => (done as (error?: Error | null) => void)(null));
      return true;
    } as Write;
  }
  let restored = false;
  return () => {
    if (restored) return;
    restored = true;
    diverting.splice(diverting.indexOf(log), 1);
    log.close();
    if (diverting.length === 0 && original !== null) {
      process.stderr.write = original;
      original = null;
    }
  };
}
