import { join } from 'node:path';
import type { ObserverOptions } from '../../src/observer/daemon.js';
import type { TreeEvents, Watcher, WatchEvent, WatchSubscription } from '../../src/observer/treeWatcher.js';
import { cleanEnv } from './project.js';

/**
 * A watcher the test drives: it delivers the events and errors the test
 * feeds it, fails the next subscriptions on request, and reports whatever
 * coverage the test sets. Everything else (the root, the state dir, the
 * store) stays real.
 */
export class FakeWatcher implements Watcher {
  /** Subscriptions made so far, the first included. */
  subscriptions = 0;
  /** Subscriptions ended so far. */
  unsubscriptions = 0;
  /** Errors the next subscribe calls throw, in order. */
  failures: Error[] = [];
  /** What unwatchedDirectories answers, whatever it is asked. */
  unwatched: string[] = [];
  /** Directories passed to unwatchedDirectories, one set per call. */
  coverageChecks: string[][] = [];
  /** What unwatchedTree answers, one answer per call (then nothing is unwatched). */
  unwatchedTrees: string[][] = [];
  treeChecks = 0;
  watches = 3;
  private handlers: TreeEvents | null = null;

  constructor(private readonly queueLength = 16_384) {}

  get subscribed(): boolean {
    return this.handlers !== null;
  }

  /** Makes the next subscribe wait until the returned function is called, as a slow watcher start would. */
  holdNextSubscribe(): () => void {
    let release: () => void = () => undefined;
    this.held = new Promise<void>((resolve) => (release = resolve));
    return release;
  }
  private held: Promise<void> | null = null;

  async subscribe(_root: string, handlers: TreeEvents): Promise<WatchSubscription> {
    const held = this.held;
    this.held = null;
    if (held) await held;
    const failure = this.failures.shift();
    if (failure) throw failure;
    this.subscriptions++;
    this.handlers = handlers;
    return {
      unsubscribe: async () => {
        this.unsubscriptions++;
        if (this.handlers === handlers) this.handlers = null;
      },
    };
  }

  unwatchedDirectories(_root: string, directories: Iterable<string>): string[] {
    this.coverageChecks.push([...directories].sort());
    return this.unwatched;
  }

  unwatchedTree(): string[] {
    this.treeChecks++;
    return this.unwatchedTrees.shift() ?? [];
  }

  watchCount(): number {
    return this.watches;
  }

  maxQueuedEvents(): number {
    return this.queueLength;
  }

  /** Delivers a batch to the live subscription, as @parcel/watcher would. */
  emit(events: WatchEvent[]): void {
    if (!this.handlers) throw new Error('no subscription to deliver events to');
    this.handlers.onEvents(events);
  }

  fail(error: Error): void {
    if (!this.handlers) throw new Error('no subscription to fail');
    this.handlers.onError(error);
  }
}

/** Resolves once the condition holds; fails the test with the message after the timeout. */
export async function eventually(condition: () => boolean, message: string, timeoutMs = 5_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error(`timed out: ${message}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** An in-process observer of one `check` over `src/**` at `root`, on a fake watcher; its log lines go to `logs`. */
export function fakeObserverOptions(root: string, extra: Partial<ObserverOptions> = {}): ObserverOptions & { logs: string[] } {
  const logs: string[] = [];
  return {
    root,
    configPath: join(root, 'vouch.config.json'),
    stateDir: join(root, '.vouch'),
    excluded: [],
    checks: [{ name: 'check', inputs: ['src/**'], installed: [] }],
    version: '9.9.9',
    build: 'b1',
    idleTimeoutMs: 60_000,
    faults: false,
    env: cleanEnv(),
    onReady: () => undefined,
    log: (message) => logs.push(message),
    watcher: new FakeWatcher(),
    logs,
    ...extra,
  };
}
