import { lstatSync, readdirSync } from 'node:fs';
import type { Barrier } from './barrier.js';
import { ChangeLog, type Change } from './changeLog.js';
import type { FaultKind, GapCode, ObserveMode } from './protocol.js';
import { QuietPaths } from './quietPaths.js';
import type { QueueWatch } from './queueWatch.js';
import { Rewatch } from './rewatch.js';
import type { Watcher, WatchEvent, WatchSubscription } from './treeWatcher.js';
import type { Snapshot, WarmIndex } from './warmIndex.js';

/** What the session tells the index: it may be out of date, or it cannot be trusted until a gap is settled. */
export type WatchedIndex = Pick<WarmIndex, 'raise' | 'settle' | 'touched' | 'checks'>;

export interface WatchSessionOptions {
  root: string;
  stateDir: string;
  /** The observer's log and record: its own writes, which are no change to any input. */
  ownFiles: readonly string[];
  barrier: Barrier;
  index: WatchedIndex;
  watcher: Watcher;
  /** Samples the kernel's queues behind the watcher, so the index knows when events may be lost; none, and it never patches. */
  queue?: QueueWatch | null;
  /** The watcher reports every loss of events (the native one): only then may `changes` be trusted. */
  lossesReported?: boolean;
  log(message: string): void;
  /** True once no client can find this observer any more (its record went with the state dir). */
  orphaned(): boolean;
  /** Called when a failed renewal finds the observer orphaned: nothing is left to serve. */
  onOrphaned(): void;
}

const BARRIER_TIMEOUT_MS = 2_000;
const RETRY_MS = 2_000;
const BURST_WINDOW_MS = 5_000;
/** Renewals in a row that may find directories made during their own walk before the observer says it cannot keep up. */
const RENEWALS_UNVERIFIED = 3;
/** Lasting gaps that end when the watcher is subscribed again. */
const WATCHER_GAPS: GapCode[] = ['observer-watcher-error', 'observer-watch-limit', 'observer-root-moved'];

/**
 * The observer's subscription to its root: subscribing and renewing it, the
 * root's identity, the events it delivers (sorted into cookies, the
 * observer's own writes and real changes), bursts that may have overflowed
 * the kernel's queue, and whether every directory holding an input is
 * watched. Whatever it cannot vouch for, it raises on the index as a gap.
 */
export class WatchSession {
  /** Every path events named, for looks that trust them (keptEvidence.ts); voided whenever events may have been missed. */
  readonly changes = new ChangeLog();
  private subscription: WatchSubscription | null = null;
  private rootIdentity = '';
  private failNextSubscribe: FaultKind | null = null;
  private blindCreates = false;
  private retryTimer: NodeJS.Timeout | null = null;
  private stopping = false;
  private burst = { start: 0, count: 0, previous: 0, flagged: false };
  private readonly counters = { events: 0, foreign: 0, overflows: 0 };
  private readonly quiet: QuietPaths;
  private readonly rewatch: Rewatch;
  private readonly rootPrefix: string;
  private readonly ownFiles: Set<string>;
  // Only vouch writes in the state dir, and nothing there is an input. Its
  // writes are few and cannot fill the kernel queue, so they need no rescan.
  // Its .gitignore is the exception: without it git lists the state dir, which
  // the scan flags (state-dir-in-git), so its change must reach the index.
  private readonly statePrefix: string;
  private readonly stateGitignore: string;
  /** Git's own directory and the state dir, root-relative: no input lies there. */
  private readonly unverified: string[];
  private renewalsUnverified = 0;
  /**
   * The kernel counts events, the watcher reports paths: one path written in a burst is one to a
   * few events (create, modify, attrib), so a quarter of the queue's length is already suspect.
   */
  private readonly overflowAt: number;
  private readonly coverage = new WeakMap<Snapshot, string[]>();
  /**
   * The directories the kernel last found watched, those directories and every one above them
   * (`above`), and the events counted then. Forgotten when an event names any path in `above`, or
   * the watcher is renewed: a tree replaced in place keeps its paths, and on ext4 often the inode
   * numbers of its directories too, but its new directories may be unwatched.
   */
  private covered: { directories: Set<string>; above: Set<string>; foreign: number } | null = null;

  constructor(private readonly options: WatchSessionOptions) {
    this.quiet = new QuietPaths(options.root);
    this.rewatch = new Rewatch((why) => this.renew(why));
    this.rootPrefix = `${options.root}/`;
    this.ownFiles = new Set(options.ownFiles);
    this.statePrefix = `${options.stateDir}/`;
    this.stateGitignore = `${this.statePrefix}.gitignore`;
    this.unverified = ['.git', ...(options.stateDir.startsWith(this.rootPrefix) ? [options.stateDir.slice(this.rootPrefix.length)] : [])];
    this.overflowAt = Math.ceil(options.watcher.maxQueuedEvents() / 4);
  }

  /** Events delivered so far, and overflows suspected. */
  get events(): number {
    return this.counters.events;
  }

  get overflows(): number {
    return this.counters.overflows;
  }

  /** Inotify watches held now, by the kernel's count. */
  watchedPaths(): number {
    return this.options.watcher.watchCount();
  }

  /** The first subscription; a failure here is the observer's failure to start. */
  async start(): Promise<void> {
    await this.subscribe();
    this.changes.trust(this.options.lossesReported === true && this.subscription !== null);
  }

  /**
   * Waits until an answer may be given: no renewal queued or running (a change
   * made meanwhile raises no event), and for "sync", every event of a write
   * made before now delivered. Ends with the root's identity checked.
   */
  async synchronize(mode: ObserveMode): Promise<void> {
    await this.rewatch.idle();
    if (mode === 'sync' && this.subscription !== null) {
      const renewals = this.rewatch.started;
      const synced = await this.options.barrier.sync(BARRIER_TIMEOUT_MS);
      if (!synced) this.changes.lose();
      if (!synced && this.options.barrier.available && this.rewatch.started === renewals) {
        // The cookie's event was lost: so may others have been. Watch again and rescan before answering.
        this.gap('observer-barrier-timeout', `a barrier event did not arrive within ${BARRIER_TIMEOUT_MS} ms`, false);
        this.rewatch.request('a barrier event was lost');
      } else if (!synced) {
        // No place for a cookie in the tree, or the watcher was renewed meanwhile:
        // only a scan begun now reflects every earlier write.
        this.options.index.touched();
      }
      await this.rewatch.idle();
    }
    this.checkRoot();
  }

  /** Subscribes afresh, and resolves once that (and any renewal it queued behind) is done. */
  async watchAgain(why: string): Promise<void> {
    this.rewatch.request(why);
    await this.rewatch.idle();
  }

  /**
   * Runs after each scan, once a question waiting on it has had its answer: a
   * question checks coverage itself, and until git has been asked again every
   * path is loud, which is only slower.
   */
  scanned(snapshot: Snapshot): void {
    setImmediate(() => {
      if (this.stopping) return;
      if (this.subscription !== null && !this.rewatch.pending) this.uncovered(snapshot);
      this.quiet.learn(snapshot.directories, this.installedGlobs());
    });
  }

  /**
   * Of the directories that hold inputs, those the watcher does not cover,
   * checked once per snapshot, before it answers (and in the background after
   * a scan, when nothing waits). The kernel's list costs about 50 ms at 60k
   * files, so it is skipped when the directories are those last found
   * covered, no event named one of them or a directory above them since (so
   * none was deleted, moved or made again), the watcher was not renewed, too
   * few events arrived for any to have been lost, and the kernel's queue was
   * calm before the scan.
   */
  uncovered(snapshot: Snapshot): string[] {
    let missing = this.coverage.get(snapshot);
    if (missing !== undefined) return missing;
    const covered = this.covered;
    if (covered !== null && snapshot.calm !== false && this.counters.foreign - covered.foreign < this.overflowAt / 4 && sameSet(covered.directories, snapshot.directories)) {
      missing = [];
    } else {
      missing = this.options.watcher.unwatchedDirectories(this.options.root, snapshot.directories);
      this.covered = missing.length === 0 ? { directories: snapshot.directories, above: withParents(snapshot.directories), foreign: this.counters.foreign } : null;
      if (missing.length > 0) this.options.log(`unwatched directories holding inputs: ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', ...' : ''}`);
    }
    this.coverage.set(snapshot, missing);
    return missing;
  }

  /** Failures that cannot be caused on demand, for tests of the whole observer. */
  inject(kind: FaultKind): void {
    this.changes.lose();
    if (kind === 'overflow') this.overflow('an overflow was injected');
    else if (kind === 'watcher-error') this.onError(new Error('an injected watcher error'));
    else if (kind === 'watch-limit') {
      this.failNextSubscribe = 'watch-limit';
      this.onError(new Error('an injected watch limit'));
    } else {
      // Stands for a lost creation event: only the coverage check is left to notice the unwatched directories.
      this.blindCreates = true;
    }
  }

  /** Stops renewing; events and errors that still arrive are ignored. */
  stop(): void {
    this.stopping = true;
    this.changes.trust(false);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.rewatch.dispose();
  }

  /** Ends the subscription; after stop(). */
  async close(): Promise<void> {
    await this.subscription?.unsubscribe().catch(() => undefined);
  }

  private readonly onEvents = (events: WatchEvent[]): void => {
    this.record(events);
    const cookies: string[] = [];
    const foreign: WatchEvent[] = [];
    for (const event of events) {
      if (this.options.barrier.isCookie(event.path)) cookies.push(event.path);
      else if (!this.ownFiles.has(event.path) && (!event.path.startsWith(this.statePrefix) || event.path === this.stateGitignore)) foreign.push(event);
    }
    const relative = (path: string) => path.slice(this.rootPrefix.length);
    if (foreign.some((event) => this.quiet.decidesRules(relative(event.path)))) this.quiet.forget();
    const loud: string[] = [];
    for (const event of foreign) {
      // Whatever its type: a directory deleted and made again can arrive as an update, or even as a delete.
      if (this.covered?.above.has(relative(event.path))) this.covered = null;
      if (this.quiet.quiet(relative(event.path))) continue;
      loud.push(relative(event.path));
      // Not only for a create: @parcel/watcher reports a directory deleted and made again within one
      // batch as an update (or a delete), and the directories inside it are then as unwatched as
      // those of a directory that arrived whole. The native watcher watches such trees itself.
      if (!this.blindCreates && !this.rewatch.queued && this.subscription?.watchesNewTrees !== true && hasSubdirectory(event.path)) {
        this.rewatch.request(`${event.path} arrived with directories inside`);
      }
    }
    this.counters.events += events.length;
    this.counters.foreign += foreign.length;
    if (foreign.length > 0) {
      const now = Date.now();
      // Two windows back to back, so a burst that straddles their boundary is still counted whole.
      if (now - this.burst.start > BURST_WINDOW_MS) {
        // A window already flagged has had its renewal; its changes do not count again.
        const previous = this.burst.flagged || now - this.burst.start > 2 * BURST_WINDOW_MS ? 0 : this.burst.count;
        this.burst = { start: now, count: 0, previous, flagged: false };
      }
      // Quiet paths count here too: an overflow drops events whatever their paths.
      this.burst.count += foreign.length;
      if (this.burst.count + this.burst.previous >= this.overflowAt && !this.burst.flagged) {
        this.burst.flagged = true;
        this.overflow(`${this.burst.count + this.burst.previous} changes within 10 s, enough to have overflowed the kernel's event queue`);
      } else if (loud.length > 0) {
        this.options.index.touched('file-events', loud);
      }
      this.checkRoot();
    }
    for (const cookie of cookies) this.options.barrier.seen(cookie);
  };

  /** Every event's path, the observer's own and quiet ones included: a traced receipt may have read any of them. */
  private record(events: readonly WatchEvent[]): void {
    const paths: Change[] = [];
    for (const event of events) {
      // The barrier's cookies are made and removed on every answer; each is a new file of vouch's own.
      const created = event.type === 'create' && !this.options.barrier.isOwnCookie(event.path);
      if (event.path === this.options.root) paths.push({ path: '', created });
      else if (event.path.startsWith(this.rootPrefix)) paths.push({ path: event.path.slice(this.rootPrefix.length), created });
      else {
        this.changes.lose();
        return;
      }
    }
    this.changes.record(paths);
  }

  private readonly onError = (error: Error): void => {
    if (this.stopping) return;
    this.gap('observer-watcher-error', `the file watcher failed (${error.message}); watching again`, true);
    this.rewatch.request('the watcher failed');
  };

  private readonly onOverflow = (why: string): void => {
    if (!this.stopping) this.overflow(why);
  };

  /** Events may have been dropped, the creation of a directory among them, which then stays unwatched. */
  private overflow(why: string): void {
    this.counters.overflows++;
    this.gap('observer-overflow', `${why}; watching again and rescanning`, false);
    this.rewatch.request(why);
  }

  private gap(code: GapCode, message: string, lasting: boolean): void {
    this.changes.lose();
    this.options.log(`${code}: ${message}`);
    this.options.index.raise({ code, message }, lasting);
  }

  private installedGlobs(): string[] {
    return [...new Set(this.options.index.checks().flatMap((check) => check.installed))];
  }

  private async subscribe(): Promise<void> {
    const fault = this.failNextSubscribe;
    this.failNextSubscribe = null;
    if (fault === 'watch-limit') throw Object.assign(new Error('inotify_add_watch: No space left on device'), { code: 'ENOSPC' });
    const stats = lstatSync(this.options.root, { bigint: true });
    this.rootIdentity = `${stats.dev}:${stats.ino}`;
    const subscription = await this.options.watcher.subscribe(this.options.root, { onEvents: this.onEvents, onError: this.onError, onOverflow: this.onOverflow });
    // Before any scan the subscription leads to begins: each window of the queue watch must cover it.
    this.options.queue?.watch();
    // Stopped while the watcher started: close() found nothing to end, so this one is ended here.
    if (this.stopping) {
      await subscription.unsubscribe().catch(() => undefined);
      return;
    }
    this.subscription = subscription;
  }

  /**
   * Subscribes afresh, so every directory that exists now is watched. After a
   * failure a lasting gap stays and this retries. The scan that follows
   * begins once the new watches are in place, so it covers whatever changed
   * while there were none.
   */
  private async renew(why: string): Promise<void> {
    this.options.log(`watching again: ${why}`);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    const old = this.subscription;
    this.subscription = null;
    this.changes.trust(false);
    // The watches found before end with the old subscription.
    this.covered = null;
    this.options.queue?.forget();
    await old?.unsubscribe().catch(() => undefined);
    if (this.stopping) return;
    try {
      await this.subscribe();
      if (this.stopping) return;
      if (!this.verifyRenewal()) return;
      this.changes.trust(this.options.lossesReported === true);
      for (const code of WATCHER_GAPS) this.options.index.settle(code);
      this.options.index.touched('rewatch');
    } catch (error) {
      // A renewal that fails after stop() neither raises a gap nor schedules a retry.
      if (this.stopping) return;
      const limit = /ENOSPC|No space left/i.test(String((error as Error).message)) || (error as NodeJS.ErrnoException).code === 'ENOSPC';
      const vanished = /ENOENT|No such file or directory/.test(String((error as Error).message)) || (error as NodeJS.ErrnoException).code === 'ENOENT';
      if (!limit && vanished && this.existsRoot() && this.renewalsUnverified < RENEWALS_UNVERIFIED) {
        // A directory deleted while the subscription walked the tree (a tree being replaced): the
        // tree is changing, so walk it again now rather than stay unhealthy until the retry.
        this.renewalsUnverified++;
        this.options.log(`watching again at once: a directory went away during the walk (${(error as Error).message})`);
        this.rewatch.request('a directory went away during the walk');
        return;
      }
      if (limit) {
        this.gap('observer-watch-limit', 'the inotify watch limit is reached; raise it (sysctl fs.inotify.max_user_watches) or stop other watchers. Retrying', true);
      } else if (!this.existsRoot()) {
        this.gap('observer-root-moved', `the root ${this.options.root} is gone; waiting for it to come back`, true);
      } else {
        this.gap('observer-watcher-error', `the file watcher could not start (${(error as Error).message}); retrying`, true);
      }
      if (this.options.orphaned()) {
        // The state dir went with the root: no client can find this observer any more.
        this.options.log('the state dir is gone; exiting');
        this.options.onOrphaned();
        return;
      }
      this.retryTimer = setTimeout(() => {
        this.retryTimer = null;
        this.rewatch.request('retrying');
      }, RETRY_MS);
    }
  }

  /**
   * Whether every directory under the root is watched after a renewal; if not, another is asked for. The subscription reads each
   * directory before it watches it, so a directory made in between (a tree still being written, as
   * when a renewal is asked for in the middle of a checkout) raises no event and stays unwatched,
   * whether or not it holds inputs yet. Such a renewal is followed by another; after a few in a row,
   * the observer is unhealthy for a while and tries again, since answers cannot rest on events.
   */
  private verifyRenewal(): boolean {
    // Nor what git ignores that holds no input: a change to what git ignores is loud, and the scan
    // it makes checks the coverage of every directory that comes to hold inputs.
    const unwatched = this.options.watcher.unwatchedTree(this.options.root, (path) => this.unverified.includes(path) || this.quiet.quiet(path));
    if (unwatched.length === 0) {
      this.renewalsUnverified = 0;
      return true;
    }
    const what = `${unwatched.length} ${unwatched.length === 1 ? 'directory' : 'directories'} made while watching again ${unwatched.length === 1 ? 'is' : 'are'} not watched (${unwatched.slice(0, 3).join(', ')})`;
    if (++this.renewalsUnverified <= RENEWALS_UNVERIFIED) {
      // The next renewal settles the gaps and asks for the scan.
      this.options.log(what);
      this.rewatch.request(what);
      return false;
    }
    this.renewalsUnverified = 0;
    this.gap('observer-watcher-error', `${what}, after ${RENEWALS_UNVERIFIED + 1} renewals in a row; retrying`, true);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.rewatch.request('retrying');
    }, RETRY_MS);
    return false;
  }

  private existsRoot(): boolean {
    const stats = lstatSync(this.options.root, { bigint: true, throwIfNoEntry: false });
    return stats !== undefined && `${stats.dev}:${stats.ino}` === this.rootIdentity;
  }

  /** A deleted or moved root raises no reliable event of its own: its identity is checked instead. */
  private checkRoot(): boolean {
    if (this.subscription === null || this.existsRoot()) return true;
    this.gap('observer-root-moved', `the root ${this.options.root} was deleted or moved; waiting for it to come back`, true);
    this.rewatch.request('the root was deleted or moved');
    return false;
  }
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

/** Root-relative directories and every directory above them, the root ('') included. */
function withParents(directories: Iterable<string>): Set<string> {
  const all = new Set<string>(['']);
  for (const dir of directories) {
    for (let path = dir; path !== '' && !all.has(path); path = path.slice(0, Math.max(path.lastIndexOf('/'), 0))) all.add(path);
  }
  return all;
}

function sameSet(a: Set<string>, b: Set<string>): boolean {
  // A patched snapshot keeps its scan's set.
  if (a === b) return true;
  if (a.size !== b.size) return false;
  for (const item of a) if (!b.has(item)) return false;
  return true;
}
