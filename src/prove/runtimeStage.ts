import { basename, dirname, join, relative, sep } from 'node:path';
import { PassThrough } from 'node:stream';
import type { TestModule, TestProject, Vitest } from 'vitest/node';
import type { Issue } from '../core/claim.js';
import { ClaimError } from '../core/claimError.js';
import { leftoverName } from './draftPaths.js';
import { locateError, type RuntimeError } from './errorLocation.js';
import { OVERLAY_PLUGIN_NAME, OverlayServer } from './overlayPlugin.js';
import { stackFrames } from './stackFrames.js';
import type { Inspection, StageInstance, Tool } from './stage.js';
import { serveTestFile } from './testFileReads.js';
import { holdVitest3Workers, terminateVitest3Workers } from './vitest3Workers.js';
import { DiskModules, configIdentity, loadedFiles } from './vitestModules.js';
import { importPackageEntry, installedPackage, packageChanged, packageEntry, type InstalledPackage } from './workspaceTool.js';

type VitestNode = typeof import('vitest/node');
type SerializedError = ReturnType<TestModule['errors']>[number];

/**
 * Vite keeps one unresolved URL per specification path it has seen, and every
 * inspection uses a fresh path; replacing the instance now and then bounds
 * that growth (RSS ~120 → 190 MB over 80 runs, measured).
 */
const RUNS_PER_INSTANCE = 64;

/** How long destroy() lets a Vitest 3 run cancel itself before it terminates the run's threads. */
const CANCEL_GRACE_MS = 500;

/**
 * Vitest's logger adds these to the host process. Its SIGINT/SIGTERM handlers
 * force-exit about 1 ms after the signal, and its unhandledRejection handler
 * calls process.exit(): any stray rejection in vouch would end the server.
 */
const VITEST_LISTENER_EVENTS = ['SIGINT', 'SIGTERM', 'exit', 'unhandledRejection'] as const;

export interface RuntimeStageOptions {
  /** Inspections one Vitest instance serves before it is replaced; tests lower it to exercise the recycle. */
  runsPerInstance?: number;
}

export function createRuntimeStage(workspace: string, options: RuntimeStageOptions = {}): StageInstance {
  return new RuntimeStage(workspace, options.runsPerInstance ?? RUNS_PER_INSTANCE);
}

/** One resident Vitest, built from the workspace's own config. */
interface Resident {
  vitest: Vitest;
  config: string;
  runs: number;
  /** Vitest 3: it reads the test file from disk before its run, and its worker threads need vouch's care. */
  vitest3: boolean;
}

/**
 * The runtime stage: the workspace's own Vitest, resident, judging each
 * claim's test against the drafts served from memory by an overlay plugin.
 * Nothing is written into the workspace: the test runs at a fresh path that
 * exists only in the overlay, so no answer can be a cached one.
 */
class RuntimeStage implements StageInstance {
  readonly stage = 'runtime' as const;
  readonly #workspace: string;
  readonly #runsPerInstance: number;
  readonly #overlay: OverlayServer;
  readonly #disk = new DiskModules();
  #module: Promise<LoadedVitest> | undefined;
  #resident: Promise<Resident> | undefined;
  #destroyed = false;
  #progress = 0;
  /** The Vitest package warm() loaded; another version or folder installed since makes the stage stale. */
  #warmed: InstalledPackage | undefined;
  /** The test path of the run in flight: queued-hook progress counts only for it. */
  #running: string | undefined;
  /** Paths served in the previous inspection: their modules hold that inspection's text until invalidated. */
  #previous: string[] = [];
  /** Rejects when the stage is destroyed, so an inspection in flight does not outlive it. */
  readonly #aborted: Promise<never>;
  #abort: (error: Error) => void = () => {};
  /** Held while this stage has a Vitest 3: its workers' output is kept off vouch's stdout, and they can be ended. */
  #releaseThreads: (() => void) | undefined;

  constructor(workspace: string, runsPerInstance: number) {
    this.#workspace = workspace;
    this.#runsPerInstance = runsPerInstance;
    this.#overlay = new OverlayServer(workspace, () => {
      this.#progress += 1;
    });
    this.#aborted = new Promise<never>((_, reject) => (this.#abort = reject));
    this.#aborted.catch(() => undefined);
  }

  progress(): number {
    return this.#progress;
  }

  async warm(): Promise<Tool> {
    const { tool, pkg } = await this.#load();
    await this.#instance();
    this.#warmed = pkg;
    return tool;
  }

  stale(): boolean {
    return this.#warmed !== undefined && packageChanged(this.#workspace, this.#warmed);
  }

  async destroy(): Promise<void> {
    this.#destroyed = true;
    const resident = this.#resident;
    this.#resident = undefined;
    this.#overlay.use(new Map());
    this.#abort(new ClaimError('instrument', 'destroyed', 'the runtime stage was destroyed during the inspection'));
    const current = await resident?.catch(() => undefined);
    this.#releaseThreads?.();
    if (current === undefined) return;
    // A worker spinning in `while(true){}` never answers the pool's polite stop, and close() alone waits for
    // it. A cancel already in progress makes close()'s own cancel a forced one, which terminates the worker.
    const cancelled = current.vitest.cancelCurrentRun('keyboard-input').then(
      () => true,
      () => true,
    );
    if (current.vitest3 && !(await Promise.race([cancelled, delay(CANCEL_GRACE_MS, false)]))) {
      // Vitest 3 waits for the spinning worker's answer in both; only terminating the thread ends it.
      await terminateVitest3Workers();
      // Its pool then waits for a terminated thread's teardown answer forever; its Vite servers close meanwhile.
      current.vitest.close().catch(() => undefined);
      return;
    }
    await current.vitest.close();
  }

  async inspect(inspection: Inspection): Promise<Issue[]> {
    this.#assertAlive();
    let resident = await this.#instance();
    if (configIdentity(this.#workspace, resident.vitest) !== resident.config || resident.runs >= this.#runsPerInstance) {
      resident = await this.#rebuild(resident);
    }
    this.#assertAlive();
    const { vitest } = resident;

    const declared = join(this.#workspace, inspection.test.path);
    const projects = vitest.projects.filter((project) => project.matchesTestGlob(declared, () => inspection.test.text));
    if (projects.length === 0) {
      return [{ ...this.#issue('workspace', `the workspace's Vitest config does not include ${inspection.test.path} as a test file, so Vitest would not run it there`, inspection.test.path), unjudged: true }];
    }
    const unreached = projects.filter((project) => !project.vite.config.plugins.some((plugin) => plugin.name === OVERLAY_PLUGIN_NAME));
    if (unreached.length > 0) {
      const names = unreached.map((project) => project.name || '(root)').join(', ');
      return [{ ...this.#issue('workspace', `Vitest project ${names} is declared as a path string, so vouch cannot serve drafts into it`, inspection.test.path), unjudged: true }];
    }

    const fresh = freshTestPath(declared);
    const files = new Map<string, string>();
    const declaredPaths = new Map<string, string>([[fresh, inspection.test.path]]);
    for (const draft of inspection.drafts) {
      const path = join(this.#workspace, draft.path);
      files.set(path, inspection.overlay.files.get(path) ?? draft.text);
      declaredPaths.set(path, draft.path);
    }
    files.set(fresh, inspection.test.text);

    resident.runs += 1;
    this.#overlay.use(files);
    const release = resident.vitest3 ? serveTestFile(fresh, inspection.test.text) : () => {};
    const loaded = loadedFiles(vitest);
    const changed = this.#disk.changed(loaded);
    // A directory that gained or lost an entry may change what an unchanged module's imports resolve to.
    const stale = this.#disk.directoriesChanged(loaded) ? loaded : changed;
    this.#invalidate(vitest, [...this.#previous, ...files.keys(), ...stale]);
    this.#previous = [...files.keys()];

    const exitCode = process.exitCode;
    this.#running = fresh;
    const runStarted = Date.now();
    try {
      // Raced with destroy(): a run whose worker was terminated (Vitest 3) never settles by itself.
      const result = await Promise.race([vitest.runTestSpecifications(projects.map((project) => project.createSpecification(fresh)), false), this.#aborted]);
      this.#assertAlive();
      const modules = result.testModules.filter((module) => module.moduleId === fresh);
      const issues = [
        ...this.#unserved(projects, files, declaredPaths),
        ...modules.flatMap((module) => this.#moduleIssues(module, declaredPaths, inspection.test.path)),
        ...result.unhandledErrors.map((error) => this.#unhandledIssue(error as SerializedError, declaredPaths)),
      ];
      if (modules.length < projects.length) issues.push(this.#issue('instrument', 'Vitest returned no result for the test', inspection.test.path));
      this.#disk.noteAfterRun(loadedFiles(vitest), runStarted);
      return issues;
    } catch (error) {
      if (this.#destroyed) throw new ClaimError('instrument', 'destroyed', 'the runtime stage was destroyed during the inspection');
      return [this.#issue('instrument', `Vitest could not run the test: ${describeError(error)}`, inspection.test.path)];
    } finally {
      this.#running = undefined;
      release();
      process.exitCode = exitCode;
      this.#overlay.use(new Map());
      if (!this.#destroyed) evict(vitest, fresh, this.#workspace);
    }
  }

  #assertAlive(): void {
    if (this.#destroyed) throw new ClaimError('instrument', 'destroyed', 'the runtime stage was destroyed');
  }

  #load(): Promise<LoadedVitest> {
    this.#module ??= loadVitest(this.#workspace);
    return this.#module;
  }

  #instance(): Promise<Resident> {
    this.#resident ??= this.#start();
    const resident = this.#resident;
    // A failed start is not cached: the next call tries again (the config may have been fixed).
    resident.catch(() => {
      if (this.#resident === resident) this.#resident = undefined;
    });
    return resident;
  }

  async #rebuild(old: Resident): Promise<Resident> {
    this.#resident = undefined;
    await old.vitest.close();
    return this.#instance();
  }

  async #start(): Promise<Resident> {
    const { node, tool } = await this.#load();
    this.#assertAlive();
    const vitest3 = tool.version.startsWith('3.');
    if (vitest3) this.#releaseThreads ??= holdVitest3Workers();
    this.#disk.clear();
    this.#previous = [];
    const overlay = this.#overlay.plugin();
    const queued = (module: TestModule): void => {
      if (module.moduleId === this.#running) this.#progress += 1;
    };
    // Read before Vitest starts: a config edited while it loads must still differ from what is recorded.
    const before = configIdentity(this.#workspace, undefined);
    const listeners = snapshotListeners();
    let creating: Promise<Vitest>;
    try {
      creating = node.createVitest(
        'test',
        {
          root: this.#workspace,
          watch: false,
          run: true,
          // Vitest would otherwise write its results cache under <root>/node_modules/.vite after every run.
          cache: false,
          // A reporter with no output; its one hook counts progress when Vitest begins on the claim's test.
          reporters: [
            { onTestModuleQueued: queued },
          ],
        },
        {
          plugins: [
            overlay,
            {
              name: 'vouch:overlay-projects',
              enforce: 'post',
              // Plugins passed as overrides reach the root project only; inline and function projects get the overlay here.
              config(config) {
                const holder = config as { test?: { projects?: unknown[]; pool?: unknown } };
                const test = (holder.test ??= {});
                if (test.projects !== undefined) test.projects = test.projects.map((project) => instrumentProject(project, overlay));
                // A pool the workspace chose is kept. Left to Vitest's default (forks), each run would start a child
                // process, about twice the cost of a worker thread, on every inspection.
                test.pool ??= 'threads';
              },
            },
          ],
        },
        // Nothing may reach vouch's own stdout: it may be an MCP stdio transport.
        { stdout: drain(), stderr: drain() },
      );
    } finally {
      // Vitest adds its listeners synchronously inside createVitest, before its first await.
      releaseListeners(listeners);
    }
    let vitest: Vitest;
    try {
      vitest = await creating;
    } catch (error) {
      throw new ClaimError('workspace', 'malformed', `the workspace's Vitest config could not be loaded: ${describeError(error)}`);
    }
    if (this.#destroyed) {
      await vitest.close();
      throw new ClaimError('instrument', 'destroyed', 'the runtime stage was destroyed while warming');
    }
    const after = configIdentity(this.#workspace, vitest);
    // A config edited during the start: record nothing that could match, so the next inspection rebuilds.
    const config = before === configIdentity(this.#workspace, undefined) ? after : `changed:${after}`;
    return { vitest, config, runs: 0, vitest3 };
  }

  #invalidate(vitest: Vitest, paths: Iterable<string>): void {
    for (const path of new Set(paths)) {
      vitest.invalidateFile(path);
      // With `isolate: false` a worker keeps evaluated modules across files; this list tells it which to drop.
      vitest.watcher.invalidates.add(path);
    }
  }

  /** A draft Vitest holds a transform for (invalidated before the run, so loaded during it) that the overlay never served. */
  #unserved(projects: TestProject[], files: ReadonlyMap<string, string>, declaredPaths: ReadonlyMap<string, string>): Issue[] {
    const issues: Issue[] = [];
    for (const path of files.keys()) {
      if (this.#overlay.served.has(path)) continue;
      const loaded = projects.some((project) =>
        Object.values(project.vite.environments).some((environment) =>
          [...(environment.moduleGraph.getModulesByFile(path) ?? [])].some((module) => module.transformResult !== null),
        ),
      );
      if (loaded) {
        issues.push(this.#issue('instrument', 'Vitest loaded this module from disk instead of the draft', declaredPaths.get(path)));
      }
    }
    return issues;
  }

  #moduleIssues(module: TestModule, declaredPaths: ReadonlyMap<string, string>, testPath: string): Issue[] {
    const tests = [...module.children.allTests()];
    // Vitest words an empty file as a module error; say it in the claim's terms, at the declared path.
    const errors = module.errors().filter((error) => !(tests.length === 0 && error.message.startsWith('No test suite found')));
    const issues = errors.map((error) => this.#errorIssue(error, declaredPaths, 'could not load the test'));
    // A failing beforeAll/afterAll belongs to its suite, not to any one test.
    for (const suite of module.children.allSuites()) {
      for (const error of suite.errors()) issues.push(this.#errorIssue(error, declaredPaths, suite.fullName));
    }
    for (const test of tests) {
      const result = test.result();
      if (result.state !== 'failed') continue;
      for (const error of result.errors ?? []) issues.push(this.#errorIssue(error, declaredPaths, test.fullName));
    }
    if (issues.length > 0) return issues;
    const state = module.state();
    if (state === 'queued' || state === 'pending') return [this.#issue('instrument', `Vitest left the test ${state}`, testPath)];
    if (tests.length === 0) return [this.#issue('claimant', 'the test declares no tests', testPath)];
    if (!tests.some((test) => test.result().state === 'passed')) {
      return [this.#issue('claimant', 'no test ran: every test in the file is skipped or todo', testPath)];
    }
    if (state === 'failed') return [this.#issue('claimant', 'Vitest reported the test as failed', testPath)];
    return [];
  }

  /**
   * An error about the claim: located at the first stack frame in a draft or
   * the test, or, for a draft that does not parse, where the transform said,
   * and reported at its declared path.
   */
  #errorIssue(error: SerializedError, declaredPaths: ReadonlyMap<string, string>, context: string): Issue {
    // Vitest 3 hands the runner's errors over without parsed stacks: they are read from the stack text.
    const at = locateError({ ...(error as RuntimeError), stacks: error.stacks ?? stackFrames(error.stack) }, declaredPaths);
    const issue: Issue = { origin: 'claimant', stage: this.stage, message: `${context}: ${errorText(error, at?.message)}` };
    if (at !== undefined) {
      issue.path = at.path;
      issue.line = at.line;
      if (at.column !== undefined) issue.column = at.column;
    }
    return issue;
  }

  /**
   * An error thrown outside any test (a late timer, a rejection nobody awaited).
   * Vitest tags it with the test file that was running; its stack is not
   * source-mapped, so no line is claimed. One that no claim file owns
   * (a worker crash, say) is the instrument's.
   */
  #unhandledIssue(error: SerializedError, declaredPaths: ReadonlyMap<string, string>): Issue {
    const message = `unhandled error: ${errorText(error)}`;
    const owner = typeof error.VITEST_TEST_PATH === 'string' ? declaredPaths.get(error.VITEST_TEST_PATH) : undefined;
    const path = owner ?? [...declaredPaths].find(([file]) => error.stack?.includes(`${file}:`))?.[1];
    return path === undefined ? this.#issue('instrument', message) : this.#issue('claimant', message, path);
  }

  #issue(origin: Issue['origin'], message: string, path?: string): Issue {
    const issue: Issue = { origin, stage: this.stage, message };
    if (path !== undefined) issue.path = path;
    return issue;
  }
}

interface LoadedVitest {
  node: VitestNode;
  tool: Tool;
  pkg: InstalledPackage;
}

/** Loads `vitest/node` from the workspace's Vitest (never vouch's own copy), from the folder it resolves to now. */
async function loadVitest(workspace: string): Promise<LoadedVitest> {
  const pkg = installedPackage(workspace, 'vitest');
  let entry: string;
  try {
    if (pkg === null) throw new Error('not installed');
    entry = packageEntry(pkg, 'node');
  } catch {
    throw new ClaimError('workspace', 'missing', `neither Vitest nor Jest is installed in ${workspace}; install vitest (3.2 or later) or jest (29 or later) to prove claims at the runtime stage`);
  }
  const node = await importPackageEntry<VitestNode>(pkg, entry);
  return { node, tool: { name: 'vitest', version: pkg.version }, pkg };
}

/**
 * A path beside the declared test that no run has used: `<stem>.vouch-<pid>-<hex>.<ext>`.
 * Vitest caches by path, so a reused path could answer from an earlier run.
 */
function freshTestPath(declared: string): string {
  const name = basename(declared);
  const dot = name.indexOf('.', 1);
  const [stem, ext] = dot === -1 ? [name, 'test.ts'] : [name.slice(0, dot), name.slice(dot + 1)];
  return join(dirname(declared), leftoverName(stem, ext));
}

/** A project as declared in `test.projects`, with the overlay plugin added; a path string cannot be reached. */
function instrumentProject(project: unknown, overlay: object): unknown {
  if (typeof project === 'string') return project;
  const add = (config: { plugins?: unknown[] }) => ({ ...config, plugins: [...(config.plugins ?? []), overlay] });
  if (typeof project === 'function') {
    return async (environment: unknown) => add(await (project as (environment: unknown) => Promise<{ plugins?: unknown[] }>)(environment));
  }
  return Promise.resolve(project as { plugins?: unknown[] }).then(add);
}

/** Drops what Vitest evicts from nowhere: results accumulate across runs otherwise (every module run so far). */
function evict(vitest: Vitest, fresh: string, workspace: string): void {
  vitest.state.filesMap.delete(fresh);
  vitest.state.pathsSet.delete(fresh);
  for (const [id, task] of vitest.state.idMap) {
    const file = 'filepath' in task ? task.filepath : task.file.filepath;
    if (file === fresh) vitest.state.idMap.delete(id);
  }
  vitest.clearSpecificationsCache(fresh);
  for (const project of vitest.projects) {
    for (const environment of Object.values(project.vite.environments)) {
      const graph = environment.moduleGraph;
      for (const module of graph.getModulesByFile(fresh) ?? []) {
        for (const imported of module.importedModules) imported.importers.delete(module);
        if (module.id !== null) graph.idToModuleMap.delete(module.id);
        graph.urlToModuleMap.delete(module.url);
      }
      graph.fileToModulesMap.delete(fresh);
    }
  }
  vitest.cache.results.removeFromCache(relative(workspace, fresh).split(sep).join('/'));
}

type Listener = (...args: unknown[]) => void;

function snapshotListeners(): Map<string, Set<Listener>> {
  return new Map(VITEST_LISTENER_EVENTS.map((event) => [event, new Set(process.listeners(event as 'exit') as Listener[])]));
}

function releaseListeners(before: Map<string, Set<Listener>>): void {
  for (const [event, known] of before) {
    for (const listener of process.listeners(event as 'exit') as Listener[]) {
      if (!known.has(listener)) process.off(event as 'exit', listener as () => void);
    }
  }
}

function drain(): PassThrough {
  const stream = new PassThrough();
  stream.resume();
  return stream;
}

function errorText(error: SerializedError, message = error.message): string {
  const name = error.name !== undefined && error.name !== 'Error' && error.name !== 'AssertionError' ? `${error.name}: ` : '';
  return name + message;
}

function delay<T>(ms: number, value: T): Promise<T> {
  return new Promise((resolve) => setTimeout(resolve, ms, value));
}

function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
