import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Issue } from '../core/claim.js';
import { ClaimError } from '../core/claimError.js';
import { leftoverName } from './draftPaths.js';
import type { JestLoad, JestOutcome, JestReply, JestRun } from './jestProtocol.js';
import { jestIssues } from './jestResults.js';
import { RUNNER_CONFIGS } from './judgeConfig.js';
import type { Inspection, StageInstance, Tool } from './stage.js';
import { installedPackage, packageChanged, packageEntry, type InstalledPackage } from './workspaceTool.js';

/** Runs one host serves before it is replaced, bounding what Jest's module caches hold across runs. */
const RUNS_PER_HOST = 64;

export interface JestStageOptions {
  /** Inspections one host process serves before it is replaced; tests lower it to exercise the recycle. */
  runsPerHost?: number;
}

export function createJestStage(workspace: string, options: JestStageOptions = {}): StageInstance {
  return new JestStage(workspace, options.runsPerHost ?? RUNS_PER_HOST);
}

/** A host process with the workspace's Jest loaded. */
interface Host {
  child: ChildProcess;
  /** configIdentity() when the host started: Node caches a required config, so a changed one needs a new host. */
  config: string;
  loaded: Promise<void>;
  runs: number;
  /** The run in flight: its reply, or the host's exit, settles it. */
  pending: Map<number, { resolve: (outcome: JestOutcome) => void; reject: (error: Error) => void }>;
}

/**
 * The runtime stage on the workspace's own Jest (29 or later), resident in a
 * child process (src/prove/jestHost.ts) that serves the claim's drafts and
 * its test from memory. The test runs in band at a fresh path that exists
 * only there, with the workspace's config and transformer, and Jest's caches
 * in a private directory: nothing is written into the workspace.
 */
export class JestStage implements StageInstance {
  readonly stage = 'runtime' as const;
  readonly #workspace: string;
  readonly #runsPerHost: number;
  #host: Host | undefined;
  #cacheDirectory: string | undefined;
  #warmed: InstalledPackage | undefined;
  #progress = 0;
  #nextId = 1;
  #destroyed = false;

  constructor(workspace: string, runsPerHost: number) {
    this.#workspace = workspace;
    this.#runsPerHost = runsPerHost;
  }

  progress(): number {
    return this.#progress;
  }

  stale(): boolean {
    return this.#warmed !== undefined && packageChanged(this.#workspace, this.#warmed);
  }

  async warm(): Promise<Tool> {
    const pkg = this.#package();
    await this.#loaded(this.#start(pkg));
    this.#warmed = pkg;
    return { name: 'jest', version: pkg.version };
  }

  async destroy(): Promise<void> {
    this.#destroyed = true;
    const host = this.#host;
    this.#host = undefined;
    if (host !== undefined) this.#stop(host, new ClaimError('instrument', 'destroyed', 'the runtime stage was destroyed during the inspection'));
    if (this.#cacheDirectory !== undefined) rmSync(this.#cacheDirectory, { recursive: true, force: true });
  }

  async inspect(inspection: Inspection): Promise<Issue[]> {
    this.#assertAlive();
    let host = this.#host;
    if (host === undefined || host.runs >= this.#runsPerHost || host.config !== configIdentity(this.#workspace)) {
      if (host !== undefined) this.#stop(host, new Error('recycled'));
      host = this.#start(this.#warmed ?? this.#package());
    }
    await this.#loaded(host);

    const declared = join(this.#workspace, inspection.test.path);
    const fresh = freshTestPath(declared);
    const files = new Map<string, string>();
    const declaredPaths = new Map<string, string>([[fresh, inspection.test.path]]);
    for (const draft of inspection.drafts) {
      const path = join(this.#workspace, draft.path);
      files.set(path, inspection.overlay.files.get(path) ?? draft.text);
      declaredPaths.set(path, draft.path);
    }
    files.set(fresh, inspection.test.text);

    host.runs += 1;
    const id = this.#nextId++;
    const run: JestRun = { kind: 'run', id, files: [...files], test: fresh, declared };
    let outcome: JestOutcome;
    try {
      outcome = await new Promise<JestOutcome>((resolve, reject) => {
        host.pending.set(id, { resolve, reject });
        host.child.send(run);
      });
    } catch (error) {
      if (this.#destroyed) throw new ClaimError('instrument', 'destroyed', 'the runtime stage was destroyed during the inspection');
      // A config that stopped loading is not about this claim (the StageInstance contract).
      if (error instanceof RunFailure && error.origin === 'workspace') throw new ClaimError('workspace', 'malformed', error.message);
      return [{ origin: 'instrument', stage: 'runtime', message: describeError(error), path: inspection.test.path }];
    }
    return jestIssues(outcome, declaredPaths, inspection.test.path, this.#workspace);
  }

  /** The host's load; a host killed by destroy() says so, not that it exited. */
  async #loaded(host: Host): Promise<void> {
    try {
      await host.loaded;
    } finally {
      this.#assertAlive();
    }
  }

  #assertAlive(): void {
    if (this.#destroyed) throw new ClaimError('instrument', 'destroyed', 'the runtime stage was destroyed');
  }

  #package(): InstalledPackage {
    const pkg = installedPackage(this.#workspace, 'jest');
    if (pkg === null) throw new ClaimError('workspace', 'missing', `Jest is not installed in ${this.#workspace}; install jest to prove claims at the runtime stage`);
    return pkg;
  }

  #start(pkg: InstalledPackage): Host {
    // A stage destroyed before it started must not leave a process behind.
    this.#assertAlive();
    if (this.#host !== undefined) return this.#host;
    let entry: string;
    try {
      entry = packageEntry(pkg, '.');
    } catch {
      throw new ClaimError('workspace', 'missing', `the jest package in ${this.#workspace} has no entry point; reinstall jest`);
    }
    // Its real path: the host tells Jest's own cache files apart from sources by it.
    this.#cacheDirectory ??= realpathSync(mkdtempSync(join(tmpdir(), 'vouch-jest-')));
    const child = fork(fileURLToPath(new URL('./jestHost.js', import.meta.url)), [], {
      cwd: this.#workspace,
      // vouch's own flags (a loader, an inspector) are not the workspace's. Jest runs a test file as an ES module
      // only with vm modules (https://jestjs.io/docs/ecmascript-modules); CommonJS tests do not use them.
      execArgv: ['--experimental-vm-modules'],
      // jest-cli sets NODE_ENV to test when unset (https://jestjs.io/docs/environment-variables); runCLI does not.
      env: { ...process.env, NODE_ENV: process.env.NODE_ENV ?? 'test', FORCE_COLOR: '0' },
      // Nothing may reach vouch's own stdout: it may be an MCP stdio transport.
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      serialization: 'advanced',
    });
    child.stdout?.resume();
    child.stderr?.resume();
    const host: Host = { child, config: configIdentity(this.#workspace), loaded: Promise.resolve(), runs: 0, pending: new Map() };
    host.loaded = new Promise<void>((resolve, reject) => {
      child.on('message', (reply: JestReply) => {
        if (reply.kind === 'progress') this.#progress += 1;
        else if (reply.kind === 'loaded') resolve();
        else if (reply.kind === 'result') this.#settle(host, reply.id, (pending) => pending.resolve(reply.outcome));
        else if (reply.id === undefined) reject(new ClaimError(reply.origin, 'malformed', reply.message));
        else this.#settle(host, reply.id, (pending) => pending.reject(new RunFailure(reply.origin, reply.message)));
      });
      child.on('exit', (code, signal) => {
        const error = new ClaimError('instrument', 'refused', `the Jest host exited (${signal ?? `code ${code}`}) before it answered`);
        reject(error);
        this.#stop(host, error);
      });
      child.on('error', (error) => {
        reject(new ClaimError('instrument', 'refused', `the Jest host could not start: ${error.message}`));
        this.#stop(host, error);
      });
    });
    // A failed start is not kept: the next inspection starts again (the config may have been fixed).
    host.loaded.catch(() => this.#stop(host, new Error('the Jest host did not load')));
    const load: JestLoad = { kind: 'load', workspace: this.#workspace, entry, cacheDirectory: this.#cacheDirectory, resolver: fileURLToPath(new URL('./jestResolver.js', import.meta.url)) };
    child.send(load);
    this.#host = host;
    return host;
  }

  #settle(host: Host, id: number, settle: (pending: { resolve: (outcome: JestOutcome) => void; reject: (error: Error) => void }) => void): void {
    const pending = host.pending.get(id);
    if (pending === undefined) return;
    host.pending.delete(id);
    settle(pending);
  }

  /** Kills the host at once (a test may spin forever) and fails what it had in flight. */
  #stop(host: Host, error: Error): void {
    if (this.#host === host) this.#host = undefined;
    if (host.child.exitCode === null && host.child.signalCode === null) host.child.kill('SIGKILL');
    for (const pending of host.pending.values()) pending.reject(error);
    host.pending.clear();
  }
}

/**
 * One string that changes whenever a config the host has loaded may have:
 * Jest's, the transformers' (Babel, swc), package.json and tsconfig.json at
 * the root, by their stats (never their content: a link may lead out of
 * the workspace).
 */
function configIdentity(workspace: string): string {
  return [...RUNNER_CONFIGS, 'package.json', 'tsconfig.json']
    .map((name) => {
      try {
        const stat = statSync(join(workspace, name), { bigint: true });
        return `${stat.ino}:${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}`;
      } catch {
        return 'absent';
      }
    })
    .join('\n');
}

/** A path beside the declared test that no run has used: `<stem>.vouch-<pid>-<hex>.<ext>`. */
function freshTestPath(declared: string): string {
  const name = basename(declared);
  const dot = name.indexOf('.', 1);
  const [stem, ext] = dot === -1 ? [name, 'test.js'] : [name.slice(0, dot), name.slice(dot + 1)];
  return join(dirname(declared), leftoverName(stem, ext));
}

/** A run the host could not make, and whose it is to fix. */
class RunFailure extends Error {
  readonly origin: 'workspace' | 'instrument';
  constructor(origin: 'workspace' | 'instrument', message: string) {
    super(message);
    this.origin = origin;
  }
}

function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
