import { chmodSync, existsSync, lstatSync, rmSync, statSync } from 'node:fs';
import { basename, isAbsolute, join, relative } from 'node:path';
import type { Server } from 'node:net';
import type { AsyncSubscription, Event } from '@parcel/watcher';
import { VouchError } from '../core/errors.js';
import { processStart } from '../fs/processStart.js';
import { envKey, openStore } from '../store/openStore.js';
import { latestReceipt } from '../store/receipts.js';
import { loadStatCache, saveStatCache } from '../store/statCacheTable.js';
import { Barrier } from './barrier.js';
import { callObserver } from './client.js';
import { ensureObserverDir, observerFiles, removeObserverFiles, socketPath, writeRecord } from './observerFiles.js';
import type { FaultKind, GapCode, GapReason, ObserveParams, ObserveResult, ObservedInputs, ObserverInfo, PingResult } from './protocol.js';
import { PROTOCOL } from './protocol.js';
import { InvalidParams, rpcServer } from './rpcServer.js';
import { maxQueuedEvents, watchCount, watchTree } from './treeWatcher.js';
import { ObserverBusy, WarmIndex } from './warmIndex.js';

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
}

export interface ObserverReady {
  pid: number;
  readyMs: number;
  indexFiles: number;
  socket: string;
}

const BARRIER_TIMEOUT_MS = 2_000;
const ANSWER_DEADLINE_MS = 30_000;
const RETRY_MS = 2_000;
const BURST_WINDOW_MS = 5_000;
/** Lasting gaps that end when the watcher is subscribed again. */
const WATCHER_GAPS: GapCode[] = ['observer-watcher-error', 'observer-watch-limit', 'observer-root-moved'];

/**
 * Runs the observer until it is stopped (by "stop", a signal, or the idle
 * timeout). Resolves once everything it created is removed.
 */
export async function serveObserver(options: ObserverOptions): Promise<void> {
  const started = Date.now();
  process.umask(0o077);
  const files = observerFiles(options.stateDir, options.configPath);
  ensureObserverDir(files);
  const socket = socketPath(files, options.env);
  const store = openStore(options.stateDir);
  const statCache = loadStatCache(store.db);
  const key = envKey(store.db);
  const index = new WarmIndex(options.root, options.excluded, statCache, (error) => options.log(`a rescan failed: ${error.message}`));
  const barrier = new Barrier(cookiePrefix(options.root, options.stateDir, files.cookiePrefix));
  barrier.sweep();
  const ownFiles = new Set([files.log, files.record]);
  // Only vouch writes in the state dir, and nothing there is an input. Its
  // writes are few and cannot fill the kernel queue, so they need no rescan.
  const statePrefix = `${options.stateDir}/`;
  const counters = { events: 0, overflows: 0 };
  let burst = { start: 0, count: 0, flagged: false };
  let subscription: AsyncSubscription | null = null;
  let rootIdentity = '';
  let failNextSubscribe: FaultKind | null = null;
  let retryTimer: NodeJS.Timeout | null = null;
  let readyMs: number | null = null;
  let stopping = false;

  const gap = (code: GapCode, message: string, lasting: boolean) => {
    options.log(`${code}: ${message}`);
    index.raise({ code, message }, lasting);
  };

  const onEvents = (events: Event[]) => {
    let foreign = 0;
    const cookies: string[] = [];
    for (const event of events) {
      if (barrier.isCookie(event.path)) cookies.push(event.path);
      else if (!ownFiles.has(event.path) && !event.path.startsWith(statePrefix)) foreign++;
    }
    counters.events += events.length;
    if (foreign > 0) {
      const now = Date.now();
      if (now - burst.start > BURST_WINDOW_MS) burst = { start: now, count: 0, flagged: false };
      burst.count += foreign;
      if (burst.count >= maxQueued && !burst.flagged) {
        burst.flagged = true;
        overflow(`${burst.count} changes within 5 s, enough to overflow the kernel's event queue`);
      } else {
        index.touched();
      }
      checkRoot();
    }
    for (const cookie of cookies) barrier.seen(cookie);
  };
  const maxQueued = maxQueuedEvents();

  const overflow = (why: string) => {
    counters.overflows++;
    gap('observer-overflow', `${why}; rescanning`, false);
  };

  const onError = (error: Error) => {
    if (stopping) return;
    gap('observer-watcher-error', `the file watcher failed (${error.message}); watching again`, true);
    void resubscribe();
  };

  const subscribe = async () => {
    const fault = failNextSubscribe;
    failNextSubscribe = null;
    if (fault === 'watch-limit') throw Object.assign(new Error('inotify_add_watch: No space left on device'), { code: 'ENOSPC' });
    const stats = lstatSync(options.root, { bigint: true });
    rootIdentity = `${stats.dev}:${stats.ino}`;
    subscription = await watchTree(options.root, { onEvents, onError });
  };

  /** Watch again after a failure; a lasting gap stays until the watcher is back. */
  const resubscribe = async () => {
    if (retryTimer || stopping) return;
    const old = subscription;
    subscription = null;
    await old?.unsubscribe().catch(() => undefined);
    try {
      await subscribe();
      for (const code of WATCHER_GAPS) index.settle(code);
    } catch (error) {
      const limit = /ENOSPC|No space left/i.test(String((error as Error).message)) || (error as NodeJS.ErrnoException).code === 'ENOSPC';
      if (limit) {
        gap('observer-watch-limit', 'the inotify watch limit is reached; raise it (sysctl fs.inotify.max_user_watches) or stop other watchers. Retrying', true);
      } else if (!existsRoot()) {
        gap('observer-root-moved', `the root ${options.root} is gone; waiting for it to come back`, true);
      }
      if (readyMs !== null && !existsSync(files.record)) {
        // The state dir went with the root: no client can find this observer any more.
        options.log('the state dir is gone; exiting');
        void stop();
        return;
      }
      retryTimer = setTimeout(() => {
        retryTimer = null;
        void resubscribe();
      }, RETRY_MS);
    }
  };

  const existsRoot = () => {
    const stats = lstatSync(options.root, { bigint: true, throwIfNoEntry: false });
    return stats !== undefined && `${stats.dev}:${stats.ino}` === rootIdentity;
  };

  /** A deleted or moved root raises no reliable event of its own: its identity is checked instead. */
  const checkRoot = (): boolean => {
    if (subscription === null || existsRoot()) return true;
    gap('observer-root-moved', `the root ${options.root} was deleted or moved; waiting for it to come back`, true);
    void resubscribe();
    return false;
  };

  const observe = async (params: ObserveParams): Promise<ObserveResult> => {
    const checks = validChecks(params);
    const deadline = Date.now() + ANSWER_DEADLINE_MS;
    if (params.mode === 'sync' && subscription !== null) {
      const synced = await barrier.sync(BARRIER_TIMEOUT_MS);
      if (!synced && barrier.available) {
        // The cookie's event was lost: so may others have been. Rescan before answering.
        gap('observer-barrier-timeout', `a barrier event did not arrive within ${BARRIER_TIMEOUT_MS} ms`, false);
      } else if (!synced) {
        // No place for a cookie in the tree: only a scan begun now reflects every earlier write.
        index.touched();
      }
    }
    checkRoot();
    const unhealthy = (reasons: GapReason[]): ObserveResult => ({ healthy: false, reasons, envKey: key, observedAt: Date.now(), checks: [] });
    if (index.reasons().length > 0 && !index.reasons().every((reason) => transient(reason.code))) return unhealthy(index.reasons());
    let answer;
    try {
      answer = await index.current(checks, deadline);
    } catch (error) {
      if (error instanceof ObserverBusy) return unhealthy([{ code: 'observer-busy', message: error.message }]);
      throw error;
    }
    if (!index.healthy) return unhealthy(index.reasons());
    return {
      healthy: true,
      reasons: [],
      envKey: key,
      observedAt: answer.snapshot.observedAt,
      checks: checks.map((check, position) => {
        const observation = answer.observations[position];
        if (!observation) throw new Error('unreachable: one observation per check');
        return {
          name: check.name,
          manifestDigest: observation.manifest.digest,
          inputCount: observation.manifest.entries.length,
          problems: observation.problems,
          ...(params.entries ? { entries: observation.manifest.entries } : {}),
          receipt: latestReceipt(store.db, check.name),
        };
      }),
    };
  };

  const ping = async (): Promise<PingResult> => ({ protocol: PROTOCOL, version: options.version, build: options.build, pid: process.pid, ready: index.ready });

  const info = async (): Promise<ObserverInfo> => ({
    ...(await ping()),
    uptimeMs: Date.now() - started,
    healthy: index.healthy,
    reasons: index.reasons(),
    watchedPaths: watchCount(),
    indexFiles: index.files,
    memoryRssBytes: process.memoryUsage.rss(),
    events: counters.events,
    overflows: counters.overflows,
    rescans: index.rescans,
    lastRescan: index.lastRescan,
    readyMs,
    socket,
    root: options.root,
  });

  const fault = async (params: unknown) => {
    const kind = (params as { kind?: unknown }).kind;
    if (kind === 'overflow') overflow('an overflow was injected');
    else if (kind === 'watcher-error') onError(new Error('an injected watcher error'));
    else if (kind === 'watch-limit') {
      failNextSubscribe = 'watch-limit';
      onError(new Error('an injected watch limit'));
    } else throw new InvalidParams('kind must be overflow, watcher-error or watch-limit');
    return { injected: kind };
  };

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
  const server: Server = rpcServer(
    {
      ping,
      observe: (params) => observe(params as ObserveParams),
      info,
      stop: async () => {
        setImmediate(() => void stop());
        return { stopping: true };
      },
      ...(options.faults ? { fault } : {}),
    },
    resetIdle,
  );

  const stop = async () => {
    if (stopping) return;
    stopping = true;
    if (idleTimer) clearTimeout(idleTimer);
    if (retryTimer) clearTimeout(retryTimer);
    index.dispose();
    server.close();
    await subscription?.unsubscribe().catch(() => undefined);
    removeObserverFiles(files, socket);
    barrier.sweep();
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
  const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  for (const signal of SIGNALS) process.on(signal, onSignal);

  try {
    await listen(server, socket);
    index.track(options.checks);
    await subscribe();
    await index.current(options.checks, Date.now() + ANSWER_DEADLINE_MS);
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
  return statSync(git, { throwIfNoEntry: false })?.isDirectory() ? join(git, `vouch-${basename(inStateDir)}`) : null;
}

/** Gaps a rescan clears by itself; the index waits for that rescan rather than answer unhealthy. */
function transient(code: GapCode): boolean {
  return code === 'observer-overflow' || code === 'observer-barrier-timeout';
}

function validChecks(params: ObserveParams): ObservedInputs[] {
  const strings = (value: unknown) => Array.isArray(value) && value.every((item) => typeof item === 'string');
  if (!params || !Array.isArray(params.checks) || (params.mode !== 'sync' && params.mode !== 'cached')) {
    throw new InvalidParams('expected {"checks": [{"name", "inputs", "installed"}], "mode": "sync" | "cached"}');
  }
  for (const check of params.checks) {
    if (!check || typeof check.name !== 'string' || !strings(check.inputs) || !strings(check.installed)) {
      throw new InvalidParams('each check needs "name" (string), "inputs" and "installed" (arrays of globs)');
    }
  }
  return params.checks.map((check) => ({ name: check.name, inputs: check.inputs, installed: check.installed }));
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
