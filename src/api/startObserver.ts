import { setTimeout as delay } from 'node:timers/promises';
import { isVouchError } from '../core/errors.js';
import { callObserver, findObserver } from '../observer/client.js';
import type { ObserverOptions, ObserverReady } from '../observer/daemon.js';
import type { Handler } from '../observer/rpcServer.js';
import { launchObserver, stopObserver as stopRunning } from '../observer/launch.js';
import { observerFiles } from '../observer/observerFiles.js';
import { buildId, type Build } from './buildId.js';
import { observerInfo } from './observer.js';
import type { Project } from './project.js';

export const DEFAULT_IDLE_TIMEOUT_MS = 8 * 60 * 60 * 1000;
const START_TIMEOUT_MS = 5 * 60 * 1000;

export interface StartOptions {
  build: Build;
  idleTimeoutMs: number;
  env: NodeJS.ProcessEnv;
  foreground: boolean;
  onReady?(ready: ObserverReady, action: StartOutcome['action']): void;
  log?(message: string): void;
  /** Methods the observer answers besides its own, where it serves in this process (ObserverOptions.methods). */
  methods?: Record<string, Handler>;
}

export type StartOutcome = { action: 'started' | 'replaced' | 'already-running'; pid: number; readyMs: number | null; indexFiles: number; socket: string };

/**
 * Starts the checkout's observer and returns once its first index is ready. A
 * running one of the same build is left alone; one from another build, or one
 * that does not answer, is replaced.
 */
export async function startObserver(project: Project, options: StartOptions): Promise<StartOutcome> {
  const build = buildId(options.build);
  let replaced = false;
  const found = findObserver(project.stateDir, project.configPath);
  if (found) {
    const info = await callObserver(found.record.socket, 'info', {}, 2_000).catch(() => null);
    if (info && info.version === options.build.version && info.build === build) {
      return { action: 'already-running', pid: info.pid, readyMs: info.readyMs, indexFiles: info.indexFiles, socket: info.socket };
    }
    await stopRunning(project.stateDir, project.configPath);
    replaced = true;
  }
  const action = replaced ? 'replaced' : 'started';
  if (options.foreground) {
    let outcome: StartOutcome | null = null;
    await serve({
      ...daemonOptions(project, options, build),
      onReady: (ready) => {
        outcome = { action, ...ready };
        options.onReady?.(ready, action);
      },
      log: options.log ?? (() => undefined),
    });
    if (!outcome) throw new Error('unreachable: serveObserver resolves only after it was ready');
    return outcome;
  }
  const files = observerFiles(project.stateDir, project.configPath);
  try {
    const ready = await launchObserver({
      files,
      entry: options.build.entry,
      args: [
        '__observe',
        '--config',
        project.configPath,
        '--state-dir',
        project.stateDir,
        // The daemon loads the project again: a root chosen on the command line must reach it.
        ...(project.rootFromCommandLine ? ['--root', project.root] : []),
        '--idle-timeout-ms',
        String(options.idleTimeoutMs),
      ],
      env: options.env,
      timeoutMs: START_TIMEOUT_MS,
    });
    return { action, ...ready };
  } catch (error) {
    // Another start won the race: that one is the observer, once its first index is ready.
    if (isVouchError(error) && error.code === 'observer-running') {
      const until = Date.now() + START_TIMEOUT_MS;
      while (Date.now() < until) {
        const info = await observerInfo(project, options.env).catch(() => null);
        if (info) return { action: 'already-running', pid: info.pid, readyMs: info.readyMs, indexFiles: info.indexFiles, socket: info.socket };
        await delay(100);
      }
    }
    throw error;
  }
}

/** The daemon's own entry: serves until stopped. */
export async function serveDaemon(project: Project, options: StartOptions): Promise<void> {
  await serve({
    ...daemonOptions(project, options, buildId(options.build)),
    onReady: (ready) => options.onReady?.(ready, 'started'),
    log: options.log ?? (() => undefined),
  });
}

function daemonOptions(project: Project, options: StartOptions, build: string) {
  return {
    root: project.root,
    configPath: project.configPath,
    stateDir: project.stateDir,
    excluded: project.excluded,
    checks: project.definitions.map(({ name, inputs, installed }) => ({ name, inputs, installed })),
    version: options.build.version,
    build,
    idleTimeoutMs: options.idleTimeoutMs,
    faults: options.env.VOUCH_OBSERVER_FAULTS === '1',
    env: options.env,
    ...(options.methods ? { methods: options.methods } : {}),
  };
}

/** Loaded here and only here: the daemon brings the watcher, the input scanner and SQLite, which the client side never needs. */
async function serve(options: ObserverOptions): Promise<void> {
  const { serveObserver } = await import('../observer/daemon.js');
  await serveObserver(options);
}
