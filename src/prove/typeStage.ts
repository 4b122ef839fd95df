import { join, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Issue } from '../core/claim.js';
import { ClaimError } from '../core/claimError.js';
import type { Inspection, StageInstance, Tool } from './stage.js';
import { installedVersion } from './workspaceTool.js';
import type { TypeReply, TypeRequest, TypeWorkerData } from './typeWorker.js';

/** Distributes Omit over the request union, so each kind keeps its own fields. */
type Unsent<T> = T extends unknown ? Omit<T, 'id'> : never;

interface Pending {
  kind: TypeRequest['kind'];
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/**
 * The type stage: the workspace's own TypeScript (5.x or 6.x) as a resident
 * builder program per tsconfig, in a worker thread. Each inspection checks the
 * whole program with the drafts overlaid and compares it with a baseline of
 * the disk as it is, so a draft that breaks its importers is the claimant's.
 */
export class TypeStage implements StageInstance {
  readonly stage = 'type' as const;
  readonly #workspace: string;
  readonly #pending = new Map<number, Pending>();
  #worker: Worker | undefined;
  #nextId = 1;
  #progress = 0;
  #destroyed = false;
  /** The installed typescript version warm() saw; undefined before warm(). */
  #warmed: string | null | undefined;

  constructor(workspace: string) {
    this.#workspace = resolve(workspace);
  }

  /**
   * Loads the workspace's TypeScript. With a project (a tsconfig, relative to
   * the workspace or absolute), also builds that project's program and takes
   * its baseline now, so the first inspection does not pay the full check.
   */
  async warm(project?: string): Promise<Tool> {
    const installed = installedVersion(this.#workspace, 'typescript');
    const request: Unsent<TypeRequest> = project === undefined ? { kind: 'warm' } : { kind: 'warm', project: this.#absolute(project) };
    const tool = (await this.#send(request)) as Tool;
    this.#warmed = installed;
    return tool;
  }

  /**
   * Compares the `typescript` package installed now with the one there at
   * warm(), not with the tool's version: with TypeScript 7 the compiler that
   * judges is `@typescript/typescript6`, but either upgrade means a new one.
   */
  stale(): boolean {
    return this.#warmed !== undefined && installedVersion(this.#workspace, 'typescript') !== this.#warmed;
  }

  async inspect(inspection: Inspection): Promise<Issue[]> {
    const declared = [...inspection.drafts, inspection.test].map((draft): [string, string] => [join(this.#workspace, draft.path), draft.path]);
    return (await this.#send({
      kind: 'inspect',
      project: this.#absolute(inspection.project),
      files: [...inspection.overlay.files],
      declared,
      test: join(this.#workspace, inspection.test.path),
    })) as Issue[];
  }

  /**
   * A digest of the project's effective compiler options, every absolute path
   * made workspace-relative, so two checkouts of one commit digest the same.
   */
  async optionsDigest(project: string): Promise<string> {
    return (await this.#send({ kind: 'optionsDigest', project: this.#absolute(project) })) as string;
  }

  progress(): number {
    return this.#progress;
  }

  async destroy(): Promise<void> {
    this.#destroyed = true;
    const worker = this.#worker;
    this.#worker = undefined;
    this.#settleAll(() => new ClaimError('instrument', 'destroyed', 'the type stage was destroyed before it answered'));
    if (worker !== undefined) await worker.terminate();
  }

  #absolute(project: string): string {
    return resolve(this.#workspace, project);
  }

  #send(request: Unsent<TypeRequest>): Promise<unknown> {
    if (this.#destroyed) return Promise.reject(new ClaimError('instrument', 'destroyed', 'the type stage was destroyed; make a new one'));
    const worker = this.#ensureWorker();
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { kind: request.kind, resolve, reject });
      // Only a stage with work in flight keeps the process alive.
      worker.ref();
      worker.postMessage({ ...request, id });
    });
  }

  /** Starts the worker on first use, and again after a crash: a crash fails one inspection, not the stage. */
  #ensureWorker(): Worker {
    if (this.#worker !== undefined) return this.#worker;
    const data: TypeWorkerData = { workspace: this.#workspace };
    // stdout/stderr are not piped to this process's: on an MCP stdio transport a stray line corrupts the protocol.
    const worker = new Worker(new URL('./typeWorker.js', import.meta.url), { workerData: data, stdout: true, stderr: true });
    worker.stdout.resume();
    worker.stderr.resume();
    worker.on('message', (reply: TypeReply) => this.#receive(reply));
    worker.on('error', (error) => this.#crashed(worker, `the TypeScript worker crashed: ${error.message}`));
    worker.on('exit', (code) => this.#crashed(worker, `the TypeScript worker exited (code ${code}) before it answered`));
    this.#worker = worker;
    return worker;
  }

  #receive(reply: TypeReply): void {
    if (reply.kind === 'progress') {
      this.#progress += 1;
      return;
    }
    const pending = this.#pending.get(reply.id);
    if (pending === undefined) return;
    this.#pending.delete(reply.id);
    if (this.#pending.size === 0) this.#worker?.unref();
    if (reply.kind === 'result') pending.resolve(reply.value);
    else if (reply.kind === 'claimError') pending.reject(new ClaimError(reply.origin, reply.code, reply.detail));
    else if (pending.kind === 'inspect') pending.resolve([instrumentIssue(`the type check did not complete: ${firstLine(reply.message)}`)]);
    else pending.reject(new Error(`the type stage failed: ${reply.message}`));
  }

  #crashed(worker: Worker, message: string): void {
    // A terminated worker's exit after destroy(), or an old worker's, concerns nobody pending now.
    if (this.#worker !== worker) return;
    this.#worker = undefined;
    this.#settleAll(() => new ClaimError('instrument', 'destroyed', message), message);
  }

  /** Every pending request ends: an inspection with an instrument issue (when there is a message for it), the rest rejected. */
  #settleAll(error: () => ClaimError, inspectionMessage?: string): void {
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const request of pending) {
      if (request.kind === 'inspect' && inspectionMessage !== undefined) request.resolve([instrumentIssue(inspectionMessage)]);
      else request.reject(error());
    }
  }
}

export function createTypeStage(workspace: string): TypeStage {
  return new TypeStage(workspace);
}

function instrumentIssue(message: string): Issue {
  return { origin: 'instrument', stage: 'type', message };
}

function firstLine(text: string): string {
  return text.split('\n', 1)[0] ?? text;
}
