import { existsSync, rmSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isVouchError } from '../../src/core/errors.js';
import { callObserver } from '../../src/observer/client.js';
import { serveObserver, type ObserverOptions, type ObserverReady } from '../../src/observer/daemon.js';
import { observerFiles, readRecord } from '../../src/observer/observerFiles.js';
import { eventually, fakeObserverOptions, FakeWatcher } from '../helpers/fakeWatcher.js';
import { rpcExchange } from '../helpers/observer.js';
import { tempProject, type TempProject } from '../helpers/project.js';

/*
 * The daemon's lifecycle, in process: its files, its socket, its idle timer,
 * its signals and its shutdown, with a fake watcher under it. What it
 * answers is the service's, tested on its own.
 */

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

interface Running {
  done: Promise<void>;
  ready: ObserverReady;
  logs: string[];
  watcher: FakeWatcher;
}

const projects: TempProject[] = [];
const running: Running[] = [];
let umask = 0;
beforeEach(() => {
  umask = process.umask();
});
afterEach(async () => {
  for (const observer of running.splice(0)) {
    await callObserver(observer.ready.socket, 'stop', {}, 2_000).catch(() => undefined);
    await observer.done.catch(() => undefined);
  }
  for (const project of projects.splice(0)) project.remove();
  // The daemon sets its own process's umask; the other tests in this worker keep theirs.
  process.umask(umask);
});

function project(): TempProject {
  const made = tempProject('observer-daemon', { 'vouch.config.json': '{}\n', 'src/a.ts': 'export const a = 1;\n', '.gitignore': '.vouch/\n' });
  projects.push(made);
  return made;
}

function options(p: TempProject, extra: Partial<ObserverOptions> = {}): ObserverOptions & { logs: string[] } {
  return fakeObserverOptions(p.root, extra);
}

async function serve(opts: ObserverOptions & { logs: string[] }): Promise<Running> {
  let resolveReady: (ready: ObserverReady) => void = () => undefined;
  const readied = new Promise<ObserverReady>((resolve) => (resolveReady = resolve));
  const done = serveObserver({ ...opts, onReady: resolveReady });
  const ready = await Promise.race([readied, done.then(() => Promise.reject(new Error('stopped before it was ready')))]);
  const observer = { done, ready, logs: opts.logs, watcher: opts.watcher as FakeWatcher };
  running.push(observer);
  return observer;
}

/** The paths the store's stat cache holds now, read as another process would. */
function storedStatCache(stateDir: string): string[] {
  const db = new Database(join(stateDir, 'state.db'), { readonly: true, fileMustExist: true });
  try {
    return db.prepare('SELECT path FROM stat_cache ORDER BY path').pluck().all() as string[];
  } finally {
    db.close();
  }
}

describe('the stat cache', () => {
  it('is written while the observer runs, not only when it stops', async () => {
    const hashed = (saveMs?: number) => {
      const p = project();
      // Past the racy window, so the first index caches the file's digest.
      const old = new Date(Date.now() - 3_600_000);
      utimesSync(join(p.root, 'src/a.ts'), old, old);
      return options(p, saveMs === undefined ? {} : { statCacheSaveMs: saveMs });
    };
    const observe = (ready: ObserverReady) => callObserver(ready.socket, 'observe', { checks: [{ name: 'check', inputs: ['src/**'], installed: [] }], mode: 'sync' }, 5_000);
    // With the default interval nothing is written this soon: what the next look finds is the periodic save's.
    const later = hashed();
    await observe((await serve(later)).ready);
    await delay(300);
    expect(storedStatCache(later.stateDir)).toEqual([]);

    const soon = hashed(50);
    await observe((await serve(soon)).ready);
    await eventually(() => storedStatCache(soon.stateDir).includes('src/a.ts'), 'the stat cache written by a running observer');
  });
});

describe('lifecycle', () => {
  it('binds its socket and writes its record once the first index is ready, and removes both when asked to stop', async () => {
    const p = project();
    const opts = options(p);
    const files = observerFiles(opts.stateDir, opts.configPath);
    const { ready, done, watcher } = await serve(opts);
    expect(ready).toMatchObject({ pid: process.pid, indexFiles: 1 });
    expect(readRecord(files)).toMatchObject({ schema: 1, pid: process.pid, socket: ready.socket, version: '9.9.9', build: 'b1', root: p.root, log: files.log });
    await expect(callObserver(ready.socket, 'ping', {}, 2_000)).resolves.toEqual({ protocol: 1, version: '9.9.9', build: 'b1', pid: process.pid, ready: true });
    await expect(callObserver(ready.socket, 'info', {}, 2_000)).resolves.toMatchObject({ watchedPaths: 3, readyMs: ready.readyMs, socket: ready.socket });
    await expect(callObserver(ready.socket, 'stop', {}, 2_000)).resolves.toEqual({ stopping: true });
    await done;
    expect(existsSync(ready.socket)).toBe(false);
    expect(existsSync(files.record)).toBe(false);
    expect(watcher.subscribed).toBe(false);
  });

  it('answers only its own methods, named in their order; "fault" only when faults are on', async () => {
    const quiet = await serve(options(project()));
    await expect(rpcExchange(quiet.ready.socket, '{"jsonrpc":"2.0","id":1,"method":"fault","params":{"kind":"overflow"}}\n')).resolves.toEqual({
      jsonrpc: '2.0',
      id: 1,
      error: { code: -32601, message: 'no method "fault"; the observer answers ping, observe, info, stop' },
    });
    const faulty = await serve(options(project(), { faults: true }));
    await expect(rpcExchange(faulty.ready.socket, '{"jsonrpc":"2.0","id":2,"method":"nope"}\n')).resolves.toMatchObject({
      error: { message: 'no method "nope"; the observer answers ping, observe, info, stop, fault' },
    });
    await expect(rpcExchange(faulty.ready.socket, '{"jsonrpc":"2.0","id":3,"method":"fault","params":{"kind":"overflow"}}\n')).resolves.toEqual({
      jsonrpc: '2.0',
      id: 3,
      result: { injected: 'overflow' },
    });
  });

  it('exits by itself after the idle timeout, and cleans up', async () => {
    const opts = options(project(), { idleTimeoutMs: 300 });
    const { ready, done, logs } = await serve(opts);
    await done;
    expect(logs).toContain('idle for 300 ms; exiting');
    expect(existsSync(ready.socket)).toBe(false);
  });

  it('stops on SIGTERM, renews no watcher after, and takes its signal handlers away', async () => {
    const before = SIGNALS.map((signal) => process.listeners(signal));
    const { ready, done, watcher } = await serve(options(project()));
    const added = process.listeners('SIGTERM').filter((listener) => !before[1]!.includes(listener));
    expect(added).toHaveLength(1);
    // A renewal is queued when the signal comes: it must not subscribe again once stopped.
    watcher.fail(new Error('late'));
    added[0]!('SIGTERM');
    await done;
    await delay(100);
    expect(watcher.subscriptions).toBe(1);
    expect(watcher.subscribed).toBe(false);
    expect(existsSync(ready.socket)).toBe(false);
    expect(SIGNALS.map((signal) => process.listeners(signal))).toEqual(before);
  });

  it('refuses to start beside a live observer of the same files, and leaves that one alone', async () => {
    const p = project();
    const first = await serve(options(p));
    const files = observerFiles(join(p.root, '.vouch'), join(p.root, 'vouch.config.json'));
    const second = serveObserver(options(p));
    const error = await second.then(
      () => null,
      (caught: unknown) => caught,
    );
    expect(isVouchError(error) && error.code).toBe('observer-running');
    expect((error as Error).message).toBe(`an observer already answers at ${first.ready.socket}; stop it with "vouch stop"`);
    await expect(callObserver(first.ready.socket, 'ping', {}, 2_000)).resolves.toMatchObject({ pid: process.pid });
    expect(readRecord(files)).toMatchObject({ socket: first.ready.socket });
  });

  it('stops and passes the error on when the watcher cannot start, leaving no socket and no record', async () => {
    const before = process.listeners('SIGTERM');
    const opts = options(project());
    (opts.watcher as FakeWatcher).failures.push(new Error('cannot watch'));
    const files = observerFiles(opts.stateDir, opts.configPath);
    await expect(serveObserver(opts)).rejects.toThrow('cannot watch');
    expect(existsSync(files.socket)).toBe(false);
    expect(existsSync(files.record)).toBe(false);
    expect(process.listeners('SIGTERM')).toEqual(before);
  });

  it('exits once its record is gone and the watcher cannot be renewed: no client could find it', async () => {
    const opts = options(project());
    const files = observerFiles(opts.stateDir, opts.configPath);
    const { done, logs, watcher } = await serve(opts);
    rmSync(files.record);
    watcher.failures.push(new Error('gone'));
    watcher.fail(new Error('boom'));
    await done;
    expect(logs).toContain('the state dir is gone; exiting');
    await eventually(() => !watcher.subscribed, 'the subscription ended');
  });
});
