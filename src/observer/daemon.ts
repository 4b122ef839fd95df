import { chmodSync, existsSync, lstatSync, rmSync } from 'node:fs';
import { basename, isAbsolute, join, relative } from 'node:path';
import type { Server } from 'node:net';
import { VouchError } from '../core/errors.js';
import { processStart } from '../fs/processStart.js';
import { envKey } from '../store/envKey.js';
import { openStore } from '../store/openStore.js';
import { loadStatCache, saveStatCache } from '../store/statCacheTable.js';
import { Barrier } from './barrier.js';
import { allowBlockingObserverCalls } from './callMode.js';
import { callObserver } from './client.js';
import { ensureObserverDir, observerFiles, removeObserverFiles, socketPath, writeRecord } from './observerFiles.js';
import type { ObserveParams, ObservedInputs } from './protocol.js';
import { ObserverService } from './observerService.js';
import { answerHere, stopAnsweringHere } from './localCalls.js';
import { rpcServer, type Handler } from './rpcServer.js';
import { outsideRuleFiles } from './ruleFiles.js';
import { nativeTreeWatcher, nativeWatcherAvailable } from './nativeTreeWatcher.js';
import { treeWatcher, type Watcher } from './treeWatcher.js';
import { QueueWatch } from './queueWatch.js';
import { WarmIndex } from './warmIndex.js';
import { WatchSession } from './watchSession.js';

export interface ObserverOptions {
  root: string;
  configPath: string;
  stateDir: string;
  excluded: string[];
  checks: ObservedInputs[];
  version: string;
  build: string;
  idleTimeoutMs: number;
  /** Accept the "fault" method, for tests of failures that cannot be caused on demand. */
  faults: boolean;
  env: NodeJS.ProcessEnv;
  onReady(ready: ObserverReady): void;
  log(message: string): void;
  /** Methods its composer adds (the CLI's served status); they cannot replace the observer's own. */
  methods?: Record<string, Handler>;
  /** The file watcher; @parcel/watcher unless a test feeds its own events. */
  watcher?: Watcher;
  /** How often the stat cache's changes are written while it runs (SAVE_STAT_CACHE_MS unless a test sets it). */
  statCacheSaveMs?: number;
}

export interface ObserverReady {
  pid: number;
  readyMs: number;
  indexFiles: number;
  socket: string;
}

const FIRST_INDEX_DEADLINE_MS = 30_000;
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
/** Fewer changes than this stay in the stat cache's map of changes: folding costs a copy of its columns. */
const FOLD_CHANGES = 1024;
/**
 * The stat cache's changes are written this often while the observer runs, not only when it stops:
 * the set of changed paths stays bounded, and a kill -9 loses at most this long's hashing. An entry
 * is trusted only while its identity matches the file, so one written late never answers for a
 * newer file; it only costs a read.
 */
const SAVE_STAT_CACHE_MS = 60_000;

/**
 * Runs the observer until it is stopped (by "stop", a signal, or the idle
 * timeout). Resolves once everything it created is removed. This is the
 * process's lifecycle: its files, its socket, its timers and signals; the
 * watch session and the service it composes do the observing and answering.
 */
export async function serveObserver(options: ObserverOptions): Promise<void> {
  const started = Date.now();
  // This process serves others until it stops, `vouch start --foreground` included: no call it
  // makes to an observer may block its thread.
  allowBlockingObserverCalls(false);
  process.umask(0o077);
  const files = observerFiles(options.stateDir, options.configPath);
  ensureObserverDir(files);
  const socket = socketPath(files, options.env);
  // Not opened to read on a full disk: that connection would lock every other vouch process
  // out for as long as the observer lives. It fails to start instead, and commands scan directly.
  const store = openStore(options.stateDir, { readWhenFull: false });
  const statCache = loadStatCache(store.db, true);
  // The same key the CLI uses: the daemon runs as the same user, with the environment "vouch start" had.
  const key = envKey({ root: options.root, stateDir: options.stateDir }, options.env);
  let readyMs: number | null = null;
  let stopping = false;
  let bound = false;

  // After a full scan the index it replaced is garbage, as large as the live heap, and V8 grows the
  // heap rather than collect it when nothing presses: 260 MB used against 79 MB live after three
  // rescans at 100k + 50k files. A full collection shortly after each scan (launch.ts passes
  // --expose-gc) gives that back; scans are rare once events patch the index.
  const gc = (globalThis as { gc?: () => void }).gc;
  let gcTimer: NodeJS.Timeout | null = null;
  const collectSoon = () => {
    if (!gc || gcTimer) return;
    gcTimer = setTimeout(() => {
      gcTimer = null;
      gc();
    }, 250);
    gcTimer.unref();
  };
  const watcher = options.watcher ?? (nativeWatcherAvailable(options.env) ? nativeTreeWatcher : treeWatcher);
  const lossesReported = watcher === nativeTreeWatcher;
  if (!options.watcher) options.log(`watching with ${lossesReported ? "vouch's own inotify watcher" : '@parcel/watcher'}`);
  // @parcel/watcher does not say when the kernel dropped events: the queue is sampled instead. A
  // watcher of the tests' own has no kernel queue to sample: its events never patch the index.
  const queue = options.watcher === undefined && !lossesReported ? QueueWatch.create() : null;
  const index = new WarmIndex(options.root, options.excluded, statCache, (error) => options.log(`a rescan failed: ${error.message}`), {
    onSnapshot: (snapshot) => {
      session.scanned(snapshot);
      collectSoon();
      // What the scan changed in the stat cache (every file on a first index without a store) is
      // folded into its columns, so each path is held once and no map of them lives on.
      setImmediate(() => statCache.fold(FOLD_CHANGES));
    },
    ruleFiles: outsideRuleFiles(options.root, options.env),
    ...(queue ? { queue } : {}),
    lossesReported,
    patch: options.env.VOUCH_OBSERVER_PATCH !== '0',
  });
  const saveStatCacheNow = () => {
    if (stopping || statCache.dirty.size === 0) return;
    try {
      if (!saveStatCache(store.db, statCache)) options.log('the stat cache was not saved: the disk is full');
    } catch (error) {
      // A busy store only delays it to the next turn.
      options.log(`the stat cache was not saved: ${(error as Error).message}`);
    }
  };
  const saveTimer = setInterval(saveStatCacheNow, options.statCacheSaveMs ?? SAVE_STAT_CACHE_MS);
  saveTimer.unref();
  const barrier = new Barrier(cookiePrefix(options.root, options.stateDir, files.cookiePrefix));
  const session = new WatchSession({
    root: options.root,
    stateDir: options.stateDir,
    ownFiles: [files.log, files.record],
    barrier,
    index,
    watcher,
    queue,
    lossesReported,
    log: options.log,
    orphaned: () => readyMs !== null && !existsSync(files.record),
    onOrphaned: () => void stop(),
  });
  const service = new ObserverService({
    root: options.root,
    version: options.version,
    build: options.build,
    socket,
    started,
    readyMs: () => readyMs,
    envKey: key,
    index,
    session,
    store,
    statCache,
    log: options.log,
  });
  service.tellStoreNotices();

  let idleTimer: NodeJS.Timeout | null = null;
  const resetIdle = () => {
    if (idleTimer) clearTimeout(idleTimer);
    idleTimer = setTimeout(() => {
      options.log(`idle for ${options.idleTimeoutMs} ms; exiting`);
      void stop();
    }, options.idleTimeoutMs);
    idleTimer.unref();
  };

  let resolveDone: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (resolveDone = resolve));
  const handlers: Record<string, Handler> = {
    ...options.methods,
    ping: () => service.ping(),
    observe: (params) => service.observe(params as ObserveParams),
    info: () => service.info(),
    stop: async () => {
      setImmediate(() => void stop());
      return { stopping: true };
    },
    ...(options.faults ? { fault: (params: unknown) => service.fault(params) } : {}),
  };
  const server: Server = rpcServer(handlers, resetIdle);

  const stop = async () => {
    if (stopping) return;
    stopping = true;
    if (idleTimer) clearTimeout(idleTimer);
    clearInterval(saveTimer);
    session.stop();
    index.dispose();
    server.close();
    stopAnsweringHere(socket);
    await session.close();
    // Only what this observer made: one that lost a race to start must not remove the winner's files.
    if (bound) {
      removeObserverFiles(files, socket);
      barrier.sweep();
    }
    try {
      saveStatCache(store.db, statCache);
    } catch {
      // A busy store only costs the next direct scan some hashing.
    }
    store.close();
    for (const signal of SIGNALS) process.off(signal, onSignal);
    resolveDone();
  };
  const onSignal = () => void stop();
  for (const signal of SIGNALS) process.on(signal, onSignal);

  try {
    await listen(server, socket);
    bound = true;
    answerHere(socket, handlers);
    // Cookies a killed observer left behind; only once the socket is ours, so a loser cannot sweep a live one's.
    barrier.sweep();
    index.track(options.checks);
    await session.start();
    await index.current(options.checks, Date.now() + FIRST_INDEX_DEADLINE_MS);
  } catch (error) {
    await stop();
    throw error;
  }
  readyMs = Date.now() - started;
  writeRecord(files, {
    schema: 1,
    pid: process.pid,
    processStart: processStart(process.pid),
    socket,
    version: options.version,
    build: options.build,
    root: options.root,
    configPath: options.configPath,
    stateDir: options.stateDir,
    startedAt: started,
    log: files.log,
  });
  resetIdle();
  options.onReady({ pid: process.pid, readyMs, indexFiles: index.files, socket });
  return done;
}

/**
 * Cookies must be made inside the watched root: in the state dir when it is
 * there, else in .git (as Watchman does). With neither, there is no barrier.
 */
function cookiePrefix(root: string, stateDir: string, inStateDir: string): string | null {
  const rel = relative(root, stateDir);
  if (rel !== '' && !rel.startsWith('..') && !isAbsolute(rel)) return inStateDir;
  const git = join(root, '.git');
  // lstat: a .git that is a link (a worktree's .git is a file) may lead outside the root.
  return lstatSync(git, { throwIfNoEntry: false })?.isDirectory() ? join(git, `vouch-${basename(inStateDir)}`) : null;
}

/** Binds the socket; one left by a dead observer is removed, one answered by a live observer is an error. */
async function listen(server: Server, socket: string): Promise<void> {
  const attempt = () =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(socket, () => {
        server.off('error', reject);
        resolve();
      });
    });
  try {
    await attempt();
    chmodSync(socket, 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    const alive = await callObserver(socket, 'ping', {}, 1_000).then(
      () => true,
      () => false,
    );
    if (alive) throw new VouchError('observer-running', `an observer already answers at ${socket}; stop it with "vouch stop"`);
    rmSync(socket, { force: true });
    await attempt();
    chmodSync(socket, 0o600);
  }
}
