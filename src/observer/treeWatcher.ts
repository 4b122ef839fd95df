import { lstatSync, readdirSync, readFileSync, readlinkSync, type Dirent } from 'node:fs';

/** One change under the root, as @parcel/watcher reports it. */
export interface WatchEvent {
  path: string;
  type: 'create' | 'update' | 'delete';
}

export interface TreeEvents {
  onEvents(events: WatchEvent[]): void;
  onError(error: Error): void;
  /** Events were lost (the kernel's queue overflowed); a watcher that cannot tell never calls it. */
  onOverflow?(why: string): void;
}

export interface WatchSubscription {
  unsubscribe(): Promise<void>;
  /** The watcher watches a directory tree that arrives whole, every directory in it (@parcel/watcher does not: parcel-bundler/watcher#97). */
  watchesNewTrees?: boolean;
}

/**
 * What the watch session needs of a file watcher: subscriptions, and the
 * kernel's accounting to check them against. Passed in, so a test can feed
 * events, overflows and failed renewals without inotify.
 */
export interface Watcher {
  subscribe(root: string, handlers: TreeEvents): Promise<WatchSubscription>;
  unwatchedDirectories(root: string, directories: Iterable<string>): string[];
  /** Of every directory under the root but those `skipped` (root-relative) and below them, those no watch covers. */
  unwatchedTree(root: string, skipped: (path: string) => boolean): string[];
  watchCount(): number;
  maxQueuedEvents(): number;
}

/**
 * Subscribes to every change under the root, node_modules and .git included:
 * ignoring a busy directory would let its events overflow the kernel queue
 * without one event reaching us, and the index relies on seeing at least one.
 */
export async function watchTree(root: string, handlers: TreeEvents): Promise<WatchSubscription> {
  const watcher = await import('@parcel/watcher');
  const subscription = await watcher.subscribe(root, (error, events) => {
    if (error) handlers.onError(error);
    else handlers.onEvents(events);
  });
  return {
    async unsubscribe() {
      try {
        await subscription.unsubscribe();
      } catch {
        // @parcel/watcher's inotify backend throws ("Unable to remove watcher: Invalid argument")
        // when the kernel already dropped one of its watches (a directory deleted or moved away).
        // It stops halfway and keeps its watcher and directory tree, so the next subscription
        // would reuse that stale tree without looking at the disk, and directories created since
        // stay unwatched. Subscribing once more and unsubscribing that clears it (measured).
        const clearing = await watcher.subscribe(root, () => undefined);
        await clearing.unsubscribe().catch(() => undefined);
      }
    },
  };
}

/** This process's inotify descriptors, or null without /proc. */
export function inotifyDescriptors(): number[] | null {
  let fds: string[];
  try {
    fds = readdirSync('/proc/self/fd');
  } catch {
    return null;
  }
  const found: number[] = [];
  for (const fd of fds) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`) === 'anon_inode:inotify') found.push(Number(fd));
    } catch {
      // closed meanwhile
    }
  }
  return found;
}

/** The kernel's lines for this process's inotify watches, one per watched directory, or null without /proc. */
function watchLines(): string[] | null {
  const fds = inotifyDescriptors();
  if (fds === null) return null;
  const lines: string[] = [];
  for (const fd of fds) {
    try {
      for (const line of readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8').split('\n')) if (line.startsWith('inotify wd:')) lines.push(line);
    } catch {
      // closed meanwhile
    }
  }
  return lines;
}

/** Inotify watches this process holds, read from the kernel's own accounting. */
export function watchCount(): number {
  return watchLines()?.length ?? 0;
}

/**
 * Of these root-relative directories, those no inotify watch covers, checked
 * by device and inode against the kernel's list. This guards the watcher
 * itself: a directory whose creation event was lost is never watched, and
 * nothing else would say so. Empty without /proc (nothing to check against).
 */
export function unwatchedDirectories(root: string, directories: Iterable<string>): string[] {
  const lines = watchLines();
  if (lines === null) return [];
  const watched = new Set<string>();
  for (const line of lines) {
    const ino = /\bino:([0-9a-f]+)/.exec(line)?.[1];
    const sdev = /\bsdev:([0-9a-f]+)/.exec(line)?.[1];
    if (ino !== undefined && sdev !== undefined) watched.add(`${userDev(BigInt(`0x${sdev}`))}:${BigInt(`0x${ino}`)}`);
  }
  const missing: string[] = [];
  for (const dir of directories) {
    const stats = lstatSync(dir === '' ? root : `${root}/${dir}`, { bigint: true, throwIfNoEntry: false });
    // Gone since the scan: the next scan, which its deletion's event calls for, settles it.
    if (stats?.isDirectory() && !watched.has(`${stats.dev}:${stats.ino}`)) missing.push(dir);
  }
  return missing;
}

/**
 * Every directory under the root that no inotify watch covers, but `skipped` and what lies below
 * them. Links are not followed, as the watcher follows none. A subscription reads each directory
 * before it watches it, so a directory made in between (a tree still being written) is never
 * watched and raises no event; this finds it, whether or not it holds an input yet.
 */
export function unwatchedTree(root: string, skipped: (path: string) => boolean): string[] {
  const directories = [''];
  for (let at = 0; at < directories.length; at++) {
    const dir = directories[at]!;
    let entries: Dirent[];
    try {
      entries = readdirSync(dir === '' ? root : `${root}/${dir}`, { withFileTypes: true });
    } catch {
      // Gone or unreadable since: its deletion's event calls for a scan, and nothing below it can be watched.
      continue;
    }
    for (const entry of entries) {
      const path = dir === '' ? entry.name : `${dir}/${entry.name}`;
      if (entry.isDirectory() && !skipped(path)) directories.push(path);
    }
  }
  return unwatchedDirectories(root, directories);
}

/** The kernel's internal device number (major << 20 | minor) as stat reports it (glibc's makedev). */
function userDev(kernel: bigint): bigint {
  const major = kernel >> 20n;
  const minor = kernel & 0xfffffn;
  return (minor & 0xffn) | ((major & 0xfffn) << 8n) | ((minor & ~0xffn) << 12n) | ((major & ~0xfffn) << 32n);
}

/** The kernel's inotify queue length: a burst of this many events in a moment may have overflowed it. */
export function maxQueuedEvents(): number {
  try {
    return Number(readFileSync('/proc/sys/fs/inotify/max_queued_events', 'utf8').trim()) || 16_384;
  } catch {
    return 16_384;
  }
}

/** @parcel/watcher and the kernel's own inotify accounting. */
export const treeWatcher: Watcher = { subscribe: watchTree, unwatchedDirectories, unwatchedTree, watchCount, maxQueuedEvents };
