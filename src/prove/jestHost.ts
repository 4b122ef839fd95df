/**
 * The Jest stage's host: a child process of vouch that keeps the
 * workspace's Jest loaded and runs one claim's test at a time in band.
 *
 * Jest reads sources itself, with `fs`: jest-runner reads the test file,
 * jest-runtime each module, ts-jest's language service what the test
 * imports. This process's `fs` is patched, before Jest is loaded (its
 * graceful-fs copies `fs` when it loads), so that reads and stats of the
 * claim's paths answer from memory. Only this process is patched; vouch
 * kills it on destroy, and on a test that never ends.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { JestError, JestLoad, JestOutcome, JestReply, JestRequest, JestRun } from './jestProtocol.js';
import { JEST_OVERLAY, type JestOverlayHook } from './jestResolver.js';

const real = {
  readFileSync: fs.readFileSync,
  readFile: fs.readFile,
  promisesReadFile: fs.promises.readFile,
  statSync: fs.statSync,
  lstatSync: fs.lstatSync,
  stat: fs.stat,
  lstat: fs.lstat,
  existsSync: fs.existsSync,
  realpathSync: fs.realpathSync,
  realpathSyncNative: fs.realpathSync.native,
};

/** The claim's files for the run in flight, by absolute path. */
let files = new Map<string, string>();
/** The claim's paths read during the run in flight: the first read of each is progress. */
const read = new Set<string>();
/** The private cache directory, with a trailing separator, once loaded. */
let cacheRoot = '\0';
/** The fresh test path of the run in flight. */
let test: string | undefined;

/**
 * What reads returned since ts-jest's language services were last dropped:
 * the claim's texts by path (fresh test paths aside, which no later run
 * reads), and the disk files read, by their stats.
 */
const seen = { served: new Map<string, string>(), disk: new Map<string, string | null>(), runs: 0 };

/** Runs after which ts-jest starts afresh anyway: each run's test is a root of its program from then on. */
const TS_JEST_RUNS = 16;

function send(reply: JestReply): void {
  process.send?.(reply);
}

function absolute(path: unknown): string | undefined {
  if (typeof path === 'string') return resolve(path);
  if (path instanceof URL && path.protocol === 'file:') return fileURLToPath(path);
  return undefined;
}

function served(path: unknown): { path: string; text: string } | undefined {
  if (files.size === 0) return undefined;
  const abs = absolute(path);
  const text = abs === undefined ? undefined : files.get(abs);
  if (abs === undefined || text === undefined) return undefined;
  if (!read.has(abs)) {
    read.add(abs);
    send({ kind: 'progress' });
  }
  if (abs !== test) seen.served.set(abs, text);
  return { path: abs, text };
}

/** A disk file's identity, by its stats; null when it is not there. */
function identity(path: string): string | null {
  try {
    const stat = real.statSync(path, { bigint: true, throwIfNoEntry: false });
    return stat === undefined ? null : `${stat.ino}:${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}`;
  } catch {
    return null;
  }
}

/** Records a disk file read during a run, for ts-jest's sake (tsJestStale). */
function noteDiskRead(path: unknown): void {
  if (files.size === 0) return;
  const abs = absolute(path);
  // Jest's own cache files change under it on every run; they are not sources.
  if (abs !== undefined && !seen.disk.has(abs) && !abs.startsWith(cacheRoot)) seen.disk.set(abs, identity(abs));
}

function onDisk(path: string): boolean {
  try {
    return real.statSync(path, { throwIfNoEntry: false })?.isFile() === true;
  } catch {
    // ENOTDIR (a file where a folder would be), EACCES: no file there to read.
    return false;
  }
}

function encodingOf(options: unknown): BufferEncoding | undefined {
  if (typeof options === 'string') return options as BufferEncoding;
  const encoding = (options as { encoding?: unknown } | null | undefined)?.encoding;
  return typeof encoding === 'string' ? (encoding as BufferEncoding) : undefined;
}

function content(text: string, options: unknown): string | Buffer {
  const encoding = encodingOf(options);
  const buffer = Buffer.from(text, 'utf8');
  return encoding === undefined ? buffer : buffer.toString(encoding);
}

/**
 * The stats of a claim's path: a regular file's (the disk's when it is
 * there, with the draft's size), with a modification time taken from the
 * text, in January 1970, where no file on disk is. Jest caches each
 * transformed module for the life of the process by path and mtime
 * (getScriptCacheKey in https://github.com/jestjs/jest/blob/v30.0.0/packages/jest-transform/src/ScriptTransformer.ts):
 * the disk's mtime would hand a draft's transform to a later run that reads the disk.
 */
function stats(path: string, text: string, original: typeof fs.statSync): fs.Stats {
  let disk: fs.Stats | undefined;
  try {
    disk = original(path, { throwIfNoEntry: false });
  } catch {
    // Not a file on disk: the draft's own stats below.
  }
  const time = createHash('sha256').update(text).digest().readUInt32BE(0) % 2_000_000_000;
  const date = new Date(time);
  const fields = disk?.isFile() === true ? { ...disk } : { dev: 0, ino: 0, mode: 0o100644, nlink: 1, uid: 0, gid: 0, rdev: 0, blksize: 4096, blocks: 1, atimeMs: time, ctimeMs: time, birthtimeMs: time, atime: date, ctime: date, birthtime: date };
  return Object.assign(Object.create(fs.Stats.prototype) as fs.Stats, fields, { size: Buffer.byteLength(text), mtimeMs: time, mtime: date });
}

type Callback = (error: NodeJS.ErrnoException | null, value?: unknown) => void;

function patchFs(): void {
  const mutable = fs as unknown as Record<string, unknown>;
  mutable.readFileSync = function readFileSync(path: unknown, options?: unknown) {
    const hit = served(path);
    if (hit !== undefined) return content(hit.text, options);
    noteDiskRead(path);
    return Reflect.apply(real.readFileSync, fs, [path, options]);
  };
  mutable.readFile = function readFile(path: unknown, ...rest: unknown[]) {
    const hit = served(path);
    if (hit === undefined) return Reflect.apply(real.readFile, fs, [path, ...rest]);
    const callback = rest.at(-1) as Callback;
    process.nextTick(callback, null, content(hit.text, rest.length > 1 ? rest[0] : undefined));
  };
  fs.promises.readFile = async function readFile(path: unknown, options?: unknown) {
    const hit = served(path);
    return hit === undefined ? Reflect.apply(real.promisesReadFile, fs.promises, [path, options]) : content(hit.text, options);
  } as typeof fs.promises.readFile;
  for (const name of ['statSync', 'lstatSync'] as const) {
    const original = real[name];
    mutable[name] = function statSync(path: unknown, options?: unknown) {
      const hit = served(path);
      return hit === undefined ? Reflect.apply(original, fs, [path, options]) : stats(hit.path, hit.text, original);
    };
  }
  for (const name of ['stat', 'lstat'] as const) {
    const original = real[name];
    mutable[name] = function stat(path: unknown, ...rest: unknown[]) {
      const hit = served(path);
      if (hit === undefined) return Reflect.apply(original, fs, [path, ...rest]);
      process.nextTick(rest.at(-1) as Callback, null, stats(hit.path, hit.text, real.statSync));
    };
  }
  mutable.existsSync = function existsSync(path: unknown) {
    return served(path) !== undefined || Reflect.apply(real.existsSync, fs, [path]);
  };
  const realpath = (original: (...args: unknown[]) => unknown) =>
    function realpathSync(path: unknown, options?: unknown) {
      const hit = served(path);
      if (hit === undefined || onDisk(hit.path)) return Reflect.apply(original, fs, [path, options]);
      return hit.path;
    };
  const patched = realpath(real.realpathSync as never) as typeof fs.realpathSync;
  patched.native = realpath(real.realpathSyncNative as never) as typeof fs.realpathSync.native;
  mutable.realpathSync = patched;
}

interface RunCliResult {
  results: {
    runExecError?: { message: string };
    testResults: Array<{
      testFilePath: string;
      testExecError?: { message?: string; stack?: string | null };
      testResults: Array<{ fullName: string; status: string; failureDetails?: unknown[]; failureMessages?: string[] }>;
    }>;
  };
}

interface LoadedJest {
  load: JestLoad;
  runCLI: (argv: Record<string, unknown>, projects: string[]) => Promise<RunCliResult>;
  readConfigs: (argv: Record<string, unknown>, projects: string[]) => Promise<{ configs: Array<{ rootDir: string; resolver?: string | null; snapshotResolver?: string | null }> }>;
  /** vouch's snapshot resolver, written at load (SNAPSHOT_RESOLVER). */
  snapshotResolver: string;
  /** @jest/core's SearchSource, which says which paths a project's config admits as tests. */
  SearchSource: new (context: { config: unknown }) => { isTestFilePath(path: string): boolean };
  clearResolverCache: () => void;
}

let loaded: LoadedJest | undefined;
/** Runs one at a time: the overlay and Jest's in-band state are this process's. */
let queue: Promise<unknown> = Promise.resolve();

/** The resolver hook vouch's resolver module reads (src/prove/jestResolver.ts). */
const hook: JestOverlayHook = {
  files: new Map(),
  userResolvers: new Map(),
  onDisk,
};
(globalThis as Record<symbol, unknown>)[JEST_OVERLAY] = hook;

function argv(load: JestLoad, test: string | undefined, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    _: test === undefined ? [] : [test],
    $0: 'vouch',
    runInBand: true,
    runTestsByPath: true,
    watch: false,
    watchAll: false,
    watchman: false,
    cache: true,
    cacheDirectory: load.cacheDirectory,
    // Snapshots are compared, never written: a missing one fails (https://jestjs.io/docs/cli#--ci).
    ci: true,
    coverage: false,
    silent: true,
    // No reporter at all: the results come back from runCLI.
    reporters: [],
    passWithNoTests: true,
    ...overrides,
  };
}

/**
 * Jest's snapshot resolver (https://jestjs.io/docs/configuration#snapshotresolver-string)
 * as vouch runs it: the fresh test path's snapshot is the declared path's,
 * where Jest's default keeps it, so a test that matches snapshots compares
 * them with the ones on disk. The declared name is the fresh one without its
 * `.vouch-<pid>-<hex>` marker (leftoverName in src/prove/draftPaths.ts):
 * Jest may load the resolver inside the test's realm, where nothing of this
 * process's globals is to be seen. Written as CommonJS into the private cache
 * directory at load: Jest loads it through the project's transformers, which
 * leave a `.cjs` file outside node_modules alone under their default patterns.
 */
const SNAPSHOT_RESOLVER = `'use strict';
const path = require('node:path');
const declared = (testPath) => path.join(path.dirname(testPath), path.basename(testPath).replace(/\\.vouch-[1-9][0-9]{0,9}-[0-9a-f]{12}(?=\\.)/, ''));
module.exports = {
  resolveSnapshotPath: (testPath, extension) => path.join(path.dirname(testPath), '__snapshots__', path.basename(declared(testPath)) + extension),
  resolveTestPath: (snapshotPath, extension) => path.join(path.dirname(snapshotPath), '..', path.basename(snapshotPath, extension)),
  testPathForConsistencyCheck: path.posix.join('consistency_check', '__tests__', 'example.test.js'),
};
`;

async function onLoad(load: JestLoad): Promise<void> {
  cacheRoot = join(load.cacheDirectory, sep);
  const requireJest = createRequire(load.entry);
  const jest = requireJest(load.entry) as { runCLI?: LoadedJest['runCLI'] };
  if (typeof jest.runCLI !== 'function') throw new Error(`${load.entry} exports no runCLI`);
  const requireCore = createRequire(requireJest.resolve('@jest/core'));
  const { SearchSource } = requireCore('@jest/core') as { SearchSource: LoadedJest['SearchSource'] };
  const { readConfigs } = requireCore('jest-config') as { readConfigs: LoadedJest['readConfigs'] };
  const requireRuntime = createRequire(requireCore.resolve('jest-runtime'));
  const resolveModule = requireRuntime('jest-resolve') as { default?: { clearDefaultResolverCache?: () => void } };
  const clearResolverCache = () => resolveModule.default?.clearDefaultResolverCache?.();
  const snapshotResolver = join(load.cacheDirectory, 'vouch-snapshot-resolver.cjs');
  fs.writeFileSync(snapshotResolver, SNAPSHOT_RESOLVER);
  loaded = { load, runCLI: jest.runCLI, readConfigs, SearchSource, clearResolverCache, snapshotResolver };
  // The config is read now, so a broken one is the workspace's before any claim.
  try {
    await readConfigs(argv(load, undefined), [load.workspace]);
  } catch (error) {
    throw new ConfigError(`the workspace's Jest config could not be loaded: ${describe(error)}`);
  }
}

/**
 * Whether a file read since ts-jest last started afresh may read otherwise
 * in the coming run: a claim's text that changed or is no longer drafted, a
 * disk file now drafted or changed on disk, or a drafted file new to the
 * disk (the language service may remember that it was not there).
 */
function tsJestStale(next: ReadonlyMap<string, string>, nextTest: string): boolean {
  if (seen.runs >= TS_JEST_RUNS) return true;
  for (const [path, text] of seen.served) if (next.get(path) !== text) return true;
  for (const path of next.keys()) {
    if (path === nextTest || seen.served.has(path)) continue;
    if (seen.disk.has(path) || identity(path) === null) return true;
  }
  for (const [path, was] of seen.disk) if (identity(path) !== was) return true;
  return false;
}

/**
 * ts-jest keeps one TypeScript language service per config for the life of
 * the process, with every file it has read: a module drafted in one claim,
 * or edited on disk since, would be type-checked from its older text.
 * Dropping its cached configs makes the next run build a fresh one, which
 * costs about half a second; tsJestStale says when it is needed.
 * https://github.com/kulshekhar/ts-jest/blob/v29.4.0/src/legacy/ts-jest-transformer.ts
 */
function forgetTsJest(): void {
  seen.served.clear();
  seen.disk.clear();
  seen.runs = 0;
  for (const [id, module] of Object.entries(createRequire(import.meta.url).cache)) {
    if (!/[\\/]ts-jest[\\/]dist[\\/]legacy[\\/]ts-jest-transformer\.js$/.test(id)) continue;
    const sets = (module?.exports as { TsJestTransformer?: { _cachedConfigSets?: unknown[] } } | undefined)?.TsJestTransformer?._cachedConfigSets;
    if (Array.isArray(sets)) sets.length = 0;
  }
}

function errorOf(value: unknown): JestError {
  if (typeof value === 'object' && value !== null) {
    const { name, message, stack } = value as { name?: unknown; message?: unknown; stack?: unknown };
    const error: JestError = { message: typeof message === 'string' ? message : String(value) };
    if (typeof name === 'string') error.name = name;
    if (typeof stack === 'string') error.stack = stack;
    return error;
  }
  return { message: String(value) };
}

async function onRun(run: JestRun): Promise<JestOutcome> {
  if (loaded === undefined) throw new Error('Jest is not loaded');
  const { load } = loaded;
  // The workspace's own resolvers, per project root, which vouch's resolver hands every request it does not answer.
  let configs: Awaited<ReturnType<LoadedJest['readConfigs']>>['configs'];
  try {
    ({ configs } = await loaded.readConfigs(argv(load, undefined), [load.workspace]));
  } catch (error) {
    throw new ConfigError(`the workspace's Jest config could not be loaded: ${describe(error)}`);
  }
  hook.userResolvers = new Map(configs.filter((config) => typeof config.resolver === 'string').map((config) => [config.rootDir, config.resolver as string]));
  // A project's own snapshot resolver is kept (its snapshots then follow the fresh path, and are not found).
  const ownSnapshots = configs.some((config) => typeof config.snapshotResolver === 'string');
  const next = new Map(run.files);
  if (tsJestStale(next, run.test)) forgetTsJest();
  seen.runs += 1;
  files = next;
  test = run.test;
  hook.files = files;
  read.clear();
  loaded.clearResolverCache();
  try {
    const overrides = { resolver: load.resolver, ...(ownSnapshots ? {} : { snapshotResolver: loaded.snapshotResolver }) };
    const { results } = await loaded.runCLI(argv(load, run.test, overrides), [load.workspace]);
    const file = results.testResults.find((result) => result.testFilePath === run.test);
    const outcome: JestOutcome = { found: file !== undefined, tests: [] };
    if (results.runExecError !== undefined) outcome.runError = results.runExecError.message;
    if (file === undefined) {
      // Its constructor reads only the config's roots, testMatch, testRegex and testPathIgnorePatterns.
      const SearchSource = loaded.SearchSource;
      outcome.declaredAdmitted = configs.some((config) => {
        try {
          return new SearchSource({ config }).isTestFilePath(run.declared);
        } catch {
          return false;
        }
      });
      return outcome;
    }
    if (file.testExecError !== undefined && file.testExecError !== null) outcome.execError = errorOf(file.testExecError);
    outcome.tests = file.testResults.map((test) => ({
      fullName: test.fullName,
      status: test.status,
      failures: (test.failureDetails ?? []).map((detail, index) => {
        const error = errorOf(detail);
        // A failure that is not an Error (a thrown string) has its text only in failureMessages.
        return error.message === '[object Object]' ? { message: test.failureMessages?.[index] ?? '' } : error;
      }),
    }));
    return outcome;
  } finally {
    files = new Map();
    hook.files = files;
  }
}

/** A config that no longer loads: the workspace's to fix, not the instrument's. */
class ConfigError extends Error {}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

patchFs();

process.on('message', (message: JestRequest) => {
  queue = queue.then(async () => {
    if (message.kind === 'load') {
      try {
        await onLoad(message);
        send({ kind: 'loaded' });
      } catch (error) {
        send({ kind: 'failed', origin: 'workspace', message: error instanceof ConfigError ? error.message : `the workspace's Jest could not be loaded: ${describe(error)}` });
      }
      return;
    }
    try {
      send({ kind: 'result', id: message.id, outcome: await onRun(message) });
    } catch (error) {
      if (error instanceof ConfigError) send({ kind: 'failed', id: message.id, origin: 'workspace', message: error.message });
      else send({ kind: 'failed', id: message.id, origin: 'instrument', message: `Jest could not run the test: ${describe(error)}` });
    }
  });
});
// Jest or a test may leave handles open; vouch ends this process, not the event loop.
process.on('disconnect', () => process.exit(0));
