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

/** The streams a prover's log can take the place of. */
export type DivertedStream = 'stdout' | 'stderr';

/**
 * The prover's log: what the workspace's tools, loaded into vouch's process,
 * write to stderr (and, where vouch's own output does not use it, stdout)
 * while a prover is open: a dependency of the Vitest config warning that
 * browserslist's data is old, an ESLint plugin's deprecation notice. It is
 * not about the claim; on the user's terminal it reads as if vouch said it,
 * and on stdout it would corrupt `--json`.
 *
 * Opened on the first write only, so a quiet prove leaves nothing behind. A
 * log that cannot be opened (a read-only state dir) gives the text back to
 * the stream it was written to: hidden output would be worse than noise.
 */
export class ProverLog {
  readonly path: string;
  readonly #stateDir: string;
  #fd: number | null = null;
  #failed = false;
  #written = 0;
  #full = false;

  constructor(stateDir: string) {
    this.#stateDir = stateDir;
    this.path = proverLogPath(stateDir);
  }

  /** Appends `bytes`; answers false when the log cannot be opened, so the caller gives them back. */
  write(bytes: Buffer): boolean {
    const fd = this.#open();
    if (fd === null) return false;
    if (this.#full) return true;
    if (this.#written + bytes.length > LOG_LIMIT) {
      this.#full = true;
      this.#append(fd, Buffer.from(`\nvouch: this prover wrote ${LOG_LIMIT} bytes here; the rest of its output was dropped\n`));
      return true;
    }
    this.#written += bytes.length;
    this.#append(fd, bytes);
    return true;
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
      this.#append(fd, Buffer.from(`--- vouch prover, pid ${process.pid}, ${new Date().toISOString()}: what the workspace's tools printed ---\n`));
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

/** Per stream: the logs of open provers, newest last (writes go to the newest), and the write they replaced. */
const diversions: Record<DivertedStream, { logs: ProverLog[]; original: Write | null }> = {
  stdout: { logs: [], original: null },
  stderr: { logs: [], original: null },
};

function bytesOf(chunk: string | Uint8Array, encoding: unknown): Buffer {
  if (typeof chunk === 'string') return Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
  return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
}

/**
 * Sends what is written to process.stderr (console.warn and console.error
 * included, and a worker thread's stderr, which Node pipes into it), and to
 * process.stdout when asked, to a prover log, until the returned function is
 * called. vouch's own CLI output does not go through process.stdout or
 * process.stderr (it is written to the descriptors), so it still reaches the
 * terminal. The MCP server's protocol is written through process.stdout, so
 * it must not ask for stdout. Child processes that inherit a descriptor are
 * not diverted: the stages give theirs pipes of their own.
 */
export function divertOutput(stateDir: string, streams: readonly DivertedStream[]): () => void {
  const log = new ProverLog(stateDir);
  for (const name of streams) {
    const diversion = diversions[name];
    const stream = process[name];
    diversion.logs.push(log);
    if (diversion.original !== null) continue;
    const original = stream.write;
    diversion.original = original;
    stream.write = function divert(chunk: string | Uint8Array, encoding?: unknown, callback?: unknown): boolean {
      const bytes = bytesOf(chunk, encoding);
      const logged = diversion.logs.at(-1)?.write(bytes) ?? false;
      const done = (typeof encoding === 'function' ? encoding : callback) as ((error?: Error | null) => void) | undefined;
      if (!logged) return (original as (chunk: Uint8Array, callback?: (error?: Error | null) => void) => boolean).call(stream, bytes, done);
      if (typeof done === 'function') queueMicrotask(() => done(null));
      return true;
    } as Write;
  }
  let restored = false;
  return () => {
    if (restored) return;
    restored = true;
    log.close();
    for (const name of streams) {
      const diversion = diversions[name];
      diversion.logs.splice(diversion.logs.indexOf(log), 1);
      if (diversion.logs.length === 0 && diversion.original !== null) {
        process[name].write = diversion.original;
        diversion.original = null;
      }
    }
  };
}
