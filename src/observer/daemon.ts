import { chmodSync, existsSync, lstatSync, readdirSync, rmSync } from 'node:fs';
import { basename, isAbsolute, join, relative } from 'node:path';
import type { Server } from 'node:net';
import type { AsyncSubscription, Event } from '@parcel/watcher';
import { VouchError } from '../core/errors.js';
import { processStart } from '../fs/processStart.js';
import { envKey } from '../store/envKey.js';
import { openStore, readConsistently, reopenIfReplaced, storeGeneration } from '../store/openStore.js';
import { latestReceipt } from '../store/receipts.js';
import { loadStatCache, saveStatCache } from '../store/statCacheTable.js';
import { Barrier } from './barrier.js';
import { callObserver } from './client.js';
import { ensureObserverDir, observerFiles, removeObserverFiles, socketPath, writeRecord } from './observerFiles.js';
import type { FaultKind, GapCode, GapReason, ObserveParams, ObserveResult, ObservedInputs, ObserverInfo, PingResult } from './protocol.js';
import { PROTOCOL } from './protocol.js';
import { InvalidParams, rpcServer } from './rpcServer.js';
import { maxQueuedEvents, unwatchedDirectories, watchCount, watchTree } from './treeWatcher.js';
import { ObserverBusy, WarmIndex, type Snapshot } from './warmIndex.js';
import { QuietPaths } from './quietPaths.js';
import { outsideRuleFiles } from './ruleFiles.js';
import { Rewatch } from './rewatch.js';

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
  // Not opened to read on a full disk: that connection would lock every other vouch process
  // out for as long as the observer lives. It fails to start instead, and commands scan directly.
  const store = openStore(options.stateDir, { readWhenFull: false });
  const statCache = loadStatCache(store.db);
  // The same key the CLI uses: the daemon runs as the same user, with the environment "vouch start" had.
  const key = envKey({ root: options.root, stateDir: options.stateDir }, options.env);
  const tellStoreNotices = () => {
    for (const notice of store.notices.splice(0)) options.log(notice);
  };
  tellStoreNotices();
  const index = new WarmIndex(
    options.root,
    options.excluded,
    statCache,
    (error) => options.log(`a rescan failed: ${error.message}`),
    // After the answer that may be waiting on this scan: a question checks coverage itself, and
    // until git has been asked again every path is loud, which is only slower.
    (snapshot) =>
      setImmediate(() => {
        if (stopping) return;
        if (subscription !== null && !rewatch.pending) uncovered(snapshot);
        quiet.learn(snapshot.directories, installedGlobs());
      }),
    outsideRuleFiles(options.root, options.env),
  );
  const quiet = new QuietPaths(options.root);
  const rootPrefix = `${options.root}/`;
  const installedGlobs = () => [...new Set(index.checks().flatMap((check) => check.installed))];
  const barrier = new Barrier(cookiePrefix(options.root, options.stateDir, files.cookiePrefix));
  const ownFiles = new Set([files.log, files.record]);
  // Only vouch writes in the state dir, and nothing there is an input. Its
  // writes are few and cannot fill the kernel queue, so they need no rescan.
  // Its .gitignore is the exception: without it git lists the state dir, which
  // the scan flags (state-dir-in-git), so its change must reach the index.
  const statePrefix = `${options.stateDir}/`;
  const stateGitignore = `${statePrefix}.gitignore`;
  const counters = { events: 0, foreign: 0, overflows: 0 };
  let burst = { start: 0, count: 0, previous: 0, flagged: false };
  let subscription: AsyncSubscription | null = null;
  let rootIdentity = '';
  let failNextSubscribe: FaultKind | null = null;
  let blindCreates = false;
  let retryTimer: NodeJS.Timeout | null = null;
  let readyMs: number | null = null;
  let stopping = false;
  let bound = false;

  const gap = (code: GapCode, message: string, lasting: boolean) => {
    options.log(`${code}: ${message}`);
    index.raise({ code, message }, lasting);
  };

  const onEvents = (events: Event[]) => {
    const cookies: string[] = [];
    const foreign: Event[] = [];
    for (const event of events) {
      if (barrier.isCookie(event.path)) cookies.push(event.path);
      else if (!ownFiles.has(event.path) && (!event.path.startsWith(statePrefix) || event.path === stateGitignore)) foreign.push(event);
    }
    const relative = (path: string) => path.slice(rootPrefix.length);
    if (foreign.some((event) => quiet.decidesRules(relative(event.path)))) quiet.forget();
    let loud = 0;
    for (const event of foreign) {
      if (quiet.quiet(relative(event.path))) continue;
      loud++;
      if (event.type === 'create' && !blindCreates && !rewatch.queued && hasSubdirectory(event.path)) {
        rewatch.request(`${event.path} arrived with directories inside`);
      }
    }
    counters.events += events.length;
    counters.foreign += foreign.length;
    if (foreign.length > 0) {
      const now = Date.now();
      // Two windows back to back, so a burst that straddles their boundary is still counted whole.
      if (now - burst.start > BURST_WINDOW_MS) {
        // A window already flagged has had its renewal; its changes do not count again.
        const previous = burst.flagged || now - burst.start > 2 * BURST_WINDOW_MS ? 0 : burst.count;
        burst = { start: now, count: 0, previous, flagged: false };
      }
      // Quiet paths count here too: an overflow drops events whatever their paths.
      burst.count += foreign.length;
      if (burst.count + burst.previous >= overflowAt && !burst.flagged) {
        burst.flagged = true;
        overflow(`${burst.count + burst.previous} changes within 10 s, enough to have overflowed the kernel's event queue`);
      } else if (loud > 0) {
        index.touched();
      }
      checkRoot();
    }
    for (const cookie of cookies) barrier.seen(cookie);
  };
  // The kernel counts events, the watcher reports paths: one path written in a burst is one to a
  // few events (create, modify, attrib), so a quarter of the queue's length is already suspect.
  const overflowAt = Math.ceil(maxQueuedEvents() / 4);

  /** Events may have been dropped, the creation of a directory among them, which then stays unwatched. */
  const overflow = (why: string) => {
    counters.overflows++;
    gap('observer-overflow', `${why}; watching again and rescanning`, false);
    rewatch.request(why);
  };

  const onError = (error: Error) => {
    if (stopping) return;
    gap('observer-watcher-error', `the file watcher failed (${error.message}); watching again`, true);
    rewatch.request('the watcher failed');
  };

  const subscribe = async () => {
    const fault = failNextSubscribe;
    failNextSubscribe = null;
    if (fault === 'watch-limit') throw Object.assign(new Error('inotify_add_watch: No space left on device'), { code: 'ENOSPC' });
    const stats = lstatSync(options.root, { bigint: true });
    rootIdentity = `${stats.dev}:${stats.ino}`;
    subscription = await watchTree(options.root, { onEvents, onError });
  };

  /**
   * Subscribes afresh, so every directory that exists now is watched. After a
   * failure a lasting gap stays and this retries. The scan that follows
   * begins once the new watches are in place, so it covers whatever changed
   * while there were none.
   */
  const renew = async (why: string) => {
    options.log(`watching again: ${why}`);
    if (retryTimer) clearTimeout(retryTimer);
    retryTimer = null;
    const old = subscription;
    subscription = null;
    await old?.unsubscribe().catch(() => undefined);
    if (stopping) return;
    try {
      await subscribe();
      for (const code of WATCHER_GAPS) index.settle(code);
      index.touched('rewatch');
    } catch (error) {
      const limit = /ENOSPC|No space left/i.test(String((error as Error).message)) || (error as NodeJS.ErrnoException).code === 'ENOSPC';
      if (limit) {
        gap('observer-watch-limit', 'the inotify watch limit is reached; raise it (sysctl fs.inotify.max_user_watches) or stop other watchers. Retrying', true);
      } else if (!existsRoot()) {
        gap('observer-root-moved', `the root ${options.root} is gone; waiting for it to come back`, true);
      } else {
        gap('observer-watcher-error', `the file watcher could not start (${(error as Error).message}); retrying`, true);
      }
      if (readyMs !== null && !existsSync(files.record)) {
        // The state dir went with the root: no client can find this observer any more.
        options.log('the state dir is gone; exiting');
        void stop();
        return;
      }
      retryTimer = setTimeout(() => {
        retryTimer = null;
        rewatch.request('retrying');
      }, RETRY_MS);
    }
  };
  const rewatch = new Rewatch(renew);

  const existsRoot = () => {
    const stats = lstatSync(options.root, { bigint: true, throwIfNoEntry: false });
    return stats !== undefined && `${stats.dev}:${stats.ino}` === rootIdentity;
  };

  /** A deleted or moved root raises no reliable event of its own: its identity is checked instead. */
  const checkRoot = (): boolean => {
    if (subscription === null || existsRoot()) return true;
    gap('observer-root-moved', `the root ${options.root} was deleted or moved; waiting for it to come back`, true);
    rewatch.request('the root was deleted or moved');
    return false;
  };

  const observe = async (params: ObserveParams): Promise<ObserveResult> => {
    const checks = validChecks(params);
    const deadline = Date.now() + ANSWER_DEADLINE_MS;
    // No answer while the watcher is being renewed: a change made meanwhile raises no event.
    await rewatch.idle();
    if (params.mode === 'sync' && subscription !== null) {
      const renewals = rewatch.started;
      const synced = await barrier.sync(BARRIER_TIMEOUT_MS);
      if (!synced && barrier.available && rewatch.started === renewals) {
        // The cookie's event was lost: so may others have been. Watch again and rescan before answering.
        gap('observer-barrier-timeout', `a barrier event did not arrive within ${BARRIER_TIMEOUT_MS} ms`, false);
        rewatch.request('a barrier event was lost');
      } else if (!synced) {
        // No place for a cookie in the tree, or the watcher was renewed meanwhile:
        // only a scan begun now reflects every earlier write.
        index.touched();
      }
      await rewatch.idle();
    }
    checkRoot();
    const unhealthy = (reasons: GapReason[]): ObserveResult => ({ healthy: false, reasons, envKey: key, observedAt: Date.now(), checks: [] });
    if (index.reasons().length > 0 && !index.reasons().every((reason) => transient(reason.code))) return unhealthy(index.reasons());
    let answer;
    for (let attempt = 1; ; attempt++) {
      try {
        answer = await index.current(checks, deadline);
      } catch (error) {
        if (error instanceof ObserverBusy) return unhealthy([{ code: 'observer-busy', message: error.message }]);
        throw error;
      }
      const unwatched = uncovered(answer.snapshot);
      if (unwatched.length === 0) break;
      const what = `${unwatched.length} ${unwatched.length === 1 ? 'directory' : 'directories'} holding inputs ${unwatched.length === 1 ? 'is' : 'are'} not watched (${unwatched[0] || '.'})`;
      if (attempt > 1) return unhealthy([{ code: 'observer-watcher-error', message: `${what}, even after watching again` }]);
      rewatch.request(what);
      await rewatch.idle();
    }
    if (!index.healthy) return unhealthy(index.reasons());
    // Another process may have found the file damaged and kept it aside: this connection
    // would still read the old file's receipts, which are no longer evidence.
    reopenIfReplaced(store.db);
    const generation = storeGeneration(store.db);
    const receipts = readConsistently(store.db, () => checks.map((check) => latestReceipt(store.db, check.name)));
    if (storeGeneration(store.db) !== generation) {
      // A damaged page, found here: the file was kept aside and a fresh store started. This one
      // answer says so, and the command that asked scans directly; later questions are answered.
      const notices = store.notices.splice(0);
      for (const notice of notices) options.log(notice);
      return unhealthy([{ code: 'observer-store-recovered', message: notices.join(' ') || 'the receipts database was replaced' }]);
    }
    tellStoreNotices();
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
          receipt: receipts[position] ?? null,
        };
      }),
    };
  };

  /**
   * Whether the watcher covers every directory that holds an input, checked
   * once per scan (in the background after it, when nothing waits). The
   * check costs about 50 ms at 60k files, so it is skipped when the
   * directories are those last found covered and too few events arrived
   * since for any to have been lost.
   */
  const coverage = new WeakMap<Snapshot, string[]>();
  let covered: { directories: Set<string>; foreign: number } | null = null;
  const uncovered = (snapshot: Snapshot): string[] => {
    let missing = coverage.get(snapshot);
    if (missing !== undefined) return missing;
    if (covered && counters.foreign - covered.foreign < overflowAt / 4 && sameSet(covered.directories, snapshot.directories)) {
      missing = [];
    } else {
      missing = unwatchedDirectories(options.root, snapshot.directories);
      covered = missing.length === 0 ? { directories: snapshot.directories, foreign: counters.foreign } : null;
      if (missing.length > 0) options.log(`unwatched directories holding inputs: ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', ...' : ''}`);
    }
    coverage.set(snapshot, missing);
    return missing;
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
    } else if (kind === 'blind-creates') {
      // Stands for a lost creation event: only the coverage check is left to notice the unwatched directories.
      blindCreates = true;
    } else throw new InvalidParams('kind must be overflow, watcher-error, watch-limit or blind-creates');
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
    rewatch.dispose();
    index.dispose();
    server.close();
    await subscription?.unsubscribe().catch(() => undefined);
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
  const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  for (const signal of SIGNALS) process.on(signal, onSignal);

  try {
    await listen(server, socket);
    bound = true;
    // Cookies a killed observer left behind; only once the socket is ours, so a loser cannot sweep a live one's.
    barrier.sweep();
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
  // lstat: a .git that is a link (a worktree's .git is a file) may lead outside the root.
  return lstatSync(git, { throwIfNoEntry: false })?.isDirectory() ? join(git, `vouch-${basename(inStateDir)}`) : null;
}

/**
 * A directory that arrives whole (mkdir -p, cp -r, a checkout, a move) gets
 * one watch from @parcel/watcher, not one for each directory inside it: its
 * inotify backend is not recursive there (parcel-bundler/watcher#97), so edits
 * deeper down would raise no event. Such a directory needs a fresh subscription.
 */
function hasSubdirectory(path: string): boolean {
  if (!lstatSync(path, { throwIfNoEntry: false })?.isDirectory()) return false;
  try {
    return readdirSync(path, { withFileTypes: true }).some((entry) => entry.isDirectory());
  } catch {
    return false;
  }
}

function sameSet(a: Set<string>, b: Set<string>): boolean {
  if (a.size !== b.size) return false;
  for (const item of a) if (!b.has(item)) return false;
  return true;
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
