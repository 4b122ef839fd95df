import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';

/** How much of a server's stderr is kept, to explain a death; the rest is drained and dropped. */
const STDERR_TAIL = 4096;

/** A request the server did not answer in time: slow, not broken; the stage decides what that means. */
export class LspTimeout extends Error {
  readonly method: string;
  readonly ms: number;

  constructor(method: string, ms: number) {
    super(`the language server did not answer ${method} within ${ms} ms`);
    this.name = 'LspTimeout';
    this.method = method;
    this.ms = ms;
  }
}

type Pending = { resolve: (result: unknown) => void; reject: (error: Error) => void; timer: NodeJS.Timeout };

/**
 * JSON-RPC over a child's stdio with LSP's `Content-Length` framing, written
 * by hand: an LSP body has no trailing newline, so a line reader never
 * delivers it (the probe campaign measured exactly that hang).
 */
export class LspConnection {
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #pending = new Map<number, Pending>();
  #nextId = 1;
  #buffer: Buffer = Buffer.alloc(0);
  #stderr = '';
  #death: Error | null = null;
  #exitCode: number | null = null;
  #onNotification: (method: string, params: unknown) => void = () => {};
  #onDeath: (error: Error) => void = () => {};

  /** `env` replaces the child's environment; by default it inherits this process's. */
  constructor(executable: string, args: readonly string[], cwd: string, env?: NodeJS.ProcessEnv) {
    this.#child = spawn(executable, args, { cwd, stdio: ['pipe', 'pipe', 'pipe'], ...(env === undefined ? {} : { env }) });
    this.#child.stdout.on('data', (chunk: Buffer) => this.#receive(chunk));
    // Drained always: a server blocked on a full stderr pipe would look like one that never answers.
    this.#child.stderr.on('data', (chunk: Buffer) => {
      this.#stderr = (this.#stderr + chunk.toString('utf8')).slice(-STDERR_TAIL);
    });
    // A write to a dead child raises EPIPE on stdin; the exit handler reports the death.
    this.#child.stdin.on('error', () => {});
    this.#child.on('error', (error) => this.#die(new Error(`cannot start ${args[0] ?? executable}: ${error.message}`)));
    this.#child.on('exit', (code, signal) => {
      this.#exitCode = code;
      const tail = this.#stderr.trim();
      this.#die(new Error(`the language server exited (${signal ?? `code ${code}`})${tail ? `: ${tail}` : ''}`));
    });
  }

  get pid(): number | undefined {
    return this.#child.pid;
  }

  /** The server's exit code once it exited by itself, else null (running, or ended by a signal). */
  get exitCode(): number | null {
    return this.#exitCode;
  }

  /** Why the server is gone, or null while it runs. */
  get death(): Error | null {
    return this.#death;
  }

  /** Server-to-client notifications (publishDiagnostics, showMessage, ...). */
  onNotification(handler: (method: string, params: unknown) => void): void {
    this.#onNotification = handler;
  }

  /** Called once when the child dies or cannot start; every pending request has been rejected by then. */
  onDeath(handler: (error: Error) => void): void {
    this.#onDeath = handler;
  }

  request(method: string, params: unknown, timeoutMs: number): Promise<unknown> {
    if (this.#death) return Promise.reject(this.#death);
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new LspTimeout(method, timeoutMs));
      }, timeoutMs);
      this.#pending.set(id, { resolve, reject, timer });
      this.#send({ jsonrpc: '2.0', id, method, params });
    });
  }

  notify(method: string, params: unknown): void {
    if (this.#death) throw this.#death;
    this.#send({ jsonrpc: '2.0', method, params });
  }

  /** SIGKILL at once: used by destroy(), and after a bounded shutdown that went unanswered. */
  kill(): Promise<void> {
    const gone = this.#child.pid === undefined || this.#child.exitCode !== null || this.#child.signalCode !== null;
    if (gone) return Promise.resolve();
    const exited = new Promise<void>((resolve) => this.#child.once('exit', () => resolve()));
    this.#child.kill('SIGKILL');
    return exited;
  }

  /** Asks politely (shutdown, exit), waits at most `timeoutMs`, then kills. */
  async close(timeoutMs: number): Promise<void> {
    if (this.#death) return;
    const exited = new Promise<void>((resolve) => this.#child.once('exit', () => resolve()));
    try {
      await this.request('shutdown', null, timeoutMs);
      this.notify('exit', null);
    } catch {
      // Unanswered or already dying: the kill below settles it.
    }
    const timer = setTimeout(() => void this.kill(), timeoutMs);
    await exited;
    clearTimeout(timer);
  }

  #send(message: object): void {
    const body = Buffer.from(JSON.stringify(message), 'utf8');
    this.#child.stdin.write(Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`, 'ascii'), body]));
  }

  #receive(chunk: Buffer): void {
    this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
    for (;;) {
      const headerEnd = this.#buffer.indexOf('\r\n\r\n');
      if (headerEnd < 0) return;
      const header = this.#buffer.subarray(0, headerEnd).toString('ascii');
      const length = /^content-length:\s*(\d+)\s*$/im.exec(header);
      if (length === null) {
        this.#die(new Error(`the language server sent a frame without Content-Length: ${JSON.stringify(header.slice(0, 200))}`));
        void this.kill();
        return;
      }
      const start = headerEnd + 4;
      const end = start + Number(length[1]);
      if (this.#buffer.length < end) return;
      const body = this.#buffer.subarray(start, end).toString('utf8');
      this.#buffer = this.#buffer.subarray(end);
      let message: { id?: number | string; method?: string; params?: unknown; result?: unknown; error?: { message?: string } };
      try {
        message = JSON.parse(body);
      } catch {
        this.#die(new Error(`the language server sent a body that is not JSON: ${JSON.stringify(body.slice(0, 200))}`));
        void this.kill();
        return;
      }
      this.#dispatch(message);
    }
  }

  #dispatch(message: { id?: number | string; method?: string; params?: unknown; result?: unknown; error?: { message?: string } }): void {
    if (message.method !== undefined && message.id !== undefined) {
      // A request from the server (configuration, capability registration): answering null keeps it from waiting on us.
      this.#send({ jsonrpc: '2.0', id: message.id, result: null });
      return;
    }
    if (message.method !== undefined) {
      this.#onNotification(message.method, message.params);
      return;
    }
    const pending = typeof message.id === 'number' ? this.#pending.get(message.id) : undefined;
    if (pending === undefined) return;
    this.#pending.delete(message.id as number);
    clearTimeout(pending.timer);
    if (message.error) pending.reject(new Error(`the language server refused: ${message.error.message ?? JSON.stringify(message.error)}`));
    else pending.resolve(message.result);
  }

  #die(error: Error): void {
    if (this.#death) return;
    this.#death = error;
    for (const pending of this.#pending.values()) {
      clearTimeout(pending.timer);
      pending.reject(error);
    }
    this.#pending.clear();
    this.#onDeath(error);
  }
}
