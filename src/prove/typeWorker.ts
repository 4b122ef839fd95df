import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import type { Issue, Origin } from '../core/claim.js';
import { ClaimError, isClaimError, type ClaimErrorCode } from '../core/claimError.js';
import type { Tool } from './stage.js';
import type { TypeScriptModule } from './typeBaseline.js';
import { workspacePath } from './typeBaseline.js';
import { compilerPath } from './compilerPath.js';
import { DiskFiles } from './diskFiles.js';
import { optionsDigest, readProjectConfig } from './projectConfig.js';
import { TypeProject } from './typeProject.js';
import { fullCollection, HeapKeeper } from './workerHeap.js';

/**
 * The type stage's worker thread: the compiler is synchronous and CPU-bound,
 * so it runs here, off the thread that serves the other stages, and
 * `terminate()` stops it at once even mid-check. Requests are answered in
 * order, one at a time.
 */

/** What the stage asks. Paths are absolute. */
export type TypeRequest =
  | { id: number; kind: 'warm'; project?: string }
  | { id: number; kind: 'optionsDigest'; project: string }
  | {
      id: number;
      kind: 'inspect';
      project: string;
      /** The overlay: absolute path → draft text. */
      files: Array<[string, string]>;
      /** Absolute path of each draft and of the test → its declared workspace-relative path. */
      declared: Array<[string, string]>;
      /** Absolute path of the test, which has no disk text to be matched against. */
      test: string;
    };

/** What the worker answers; `progress` precedes the result of an inspection once the claimant's input is being checked. */
export type TypeReply =
  | { id: number; kind: 'progress' }
  | { id: number; kind: 'result'; value: Tool | string | Issue[] }
  | { id: number; kind: 'claimError'; origin: Origin; code: ClaimErrorCode; detail: string }
  | { id: number; kind: 'failure'; message: string };

export interface TypeWorkerData {
  workspace: string;
}

/**
 * The workspace's own TypeScript, never vouch's. TS 7 (the native compiler)
 * has no JS compiler API; `@typescript/typescript6` beside it carries one.
 */
export function loadTypeScript(workspace: string): TypeScriptModule {
  const require = createRequire(join(workspace, 'package.json'));
  const version = installedVersion(require, 'typescript');
  if (version === undefined) {
    throw new ClaimError('workspace', 'missing', `typescript is not installed in the workspace ${workspace}; install it (npm install -D typescript@6) so the type stage can judge with the workspace's own compiler`);
  }
  const major = Number.parseInt(version, 10);
  if (major >= 7) {
    const companion = installedVersion(require, '@typescript/typescript6');
    if (companion !== undefined) return usable(require('@typescript/typescript6'), `@typescript/typescript6 ${companion}`);
    throw new ClaimError(
      'workspace',
      'missing',
      `the workspace's typescript is ${version}, the native compiler, which has no JS compiler API for the type stage; add @typescript/typescript6 beside it (npm install -D @typescript/typescript6) or use typescript 6.x`,
    );
  }
  if (!(major >= 5)) {
    throw new ClaimError('workspace', 'missing', `the workspace's typescript is ${version}; the type stage needs typescript 5.x or 6.x (npm install -D typescript@6)`);
  }
  return usable(require('typescript'), `typescript ${version}`);
}

function installedVersion(require: NodeJS.Require, name: string): string | undefined {
  try {
    return (require(`${name}/package.json`) as { version: string }).version;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'MODULE_NOT_FOUND') return undefined;
    // A package whose exports hide its manifest still says its version.
    if (code === 'ERR_PACKAGE_PATH_NOT_EXPORTED') return (require(name) as { version: string }).version;
    throw error;
  }
}

function usable(ts: TypeScriptModule, shown: string): TypeScriptModule {
  if (typeof ts.createSemanticDiagnosticsBuilderProgram !== 'function') {
    throw new ClaimError('workspace', 'missing', `the workspace's ${shown} has no createSemanticDiagnosticsBuilderProgram; the type stage needs the TypeScript 5.x or 6.x compiler API`);
  }
  return ts;
}

/** The resident state: the compiler, a program per project, and the disk versions they share. */
class TypeWorker {
  readonly #workspace: string;
  readonly #projects = new Map<string, TypeProject>();
  #ts: TypeScriptModule | undefined;
  #disk: DiskFiles | undefined;

  constructor(workspace: string) {
    this.#workspace = workspace;
  }

  answer(request: TypeRequest, post: (reply: TypeReply) => void): Tool | string | Issue[] {
    if (request.kind === 'warm') {
      const ts = this.#compiler();
      if (request.project !== undefined) this.#project(request.project).baseline();
      return { name: 'typescript', version: ts.version };
    }
    if (request.kind === 'optionsDigest') {
      const config = readProjectConfig(this.#compiler(), this.#workspace, request.project);
      return optionsDigest(this.#workspace, config.parsed.options);
    }
    const files = new Map(request.files.map(([path, text]) => [compilerPath(path), text]));
    const declared = new Map(request.declared.map(([path, shown]) => [compilerPath(path), shown]));
    const project = this.#project(request.project);
    const drafted = project.chain.filter((path) => files.has(path));
    if (drafted.length > 0) {
      post({ id: request.id, kind: 'progress' });
      return drafted.map((path) => ({
        origin: 'claimant',
        stage: 'type',
        path: declared.get(path) ?? workspacePath(this.#workspace, path),
        message: 'the type stage judges drafts under the project config as it is on disk; this draft is that config (the tsconfig or a file it extends), so commit the config change first or leave it out of the claim',
      }));
    }
    try {
      return project.inspect(files, declared, compilerPath(request.test), () => post({ id: request.id, kind: 'progress' }));
    } catch (error) {
      // A compiler that threw mid-check may have left its builder half-updated; the next inspection starts clean.
      this.#projects.delete(compilerPath(resolve(this.#workspace, request.project)));
      throw error;
    }
  }

  #compiler(): TypeScriptModule {
    if (this.#ts === undefined) {
      this.#ts = loadTypeScript(this.#workspace);
      const ts = this.#ts;
      this.#disk = new DiskFiles((path) => ts.sys.readFile(path));
    }
    return this.#ts;
  }

  /** The project's resident program, rebuilt when its config (or the extends chain) changed since the last use. */
  #project(tsconfig: string): TypeProject {
    const ts = this.#compiler();
    const config = readProjectConfig(ts, this.#workspace, resolve(this.#workspace, tsconfig));
    const current = this.#projects.get(config.tsconfig);
    if (current !== undefined && current.configKey === config.configKey) {
      current.refresh(config);
      return current;
    }
    const project = new TypeProject(ts, this.#workspace, this.#disk as DiskFiles, config);
    this.#projects.set(config.tsconfig, project);
    return project;
  }
}

if (parentPort !== null) {
  const port = parentPort;
  const worker = new TypeWorker((workerData as TypeWorkerData).workspace);
  const post = (reply: TypeReply) => port.postMessage(reply);
  const collect = fullCollection();
  const heap = collect === undefined ? undefined : new HeapKeeper(collect);
  port.on('message', (request: TypeRequest) => {
    try {
      post({ id: request.id, kind: 'result', value: worker.answer(request, post) });
    } catch (error) {
      if (isClaimError(error)) post({ id: request.id, kind: 'claimError', origin: error.origin, code: error.code, detail: error.detail });
      else post({ id: request.id, kind: 'failure', message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
    }
    // After the answer is posted: a collection then delays only this worker's next request.
    if (request.kind !== 'optionsDigest') heap?.settle();
  });
}
