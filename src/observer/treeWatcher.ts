import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import type { AsyncSubscription, Event } from '@parcel/watcher';

export interface TreeEvents {
  onEvents(events: Event[]): void;
  onError(error: Error): void;
}

/**
 * Subscribes to every change under the root, node_modules and .git included:
 * ignoring a busy directory would let its events overflow the kernel queue
 * without one event reaching us, and the index relies on seeing at least one.
 */
export async function watchTree(root: string, handlers: TreeEvents): Promise<AsyncSubscription> {
  const watcher = await import('@parcel/watcher');
  return watcher.subscribe(root, (error, events) => {
    if (error) handlers.onError(error);
    else handlers.onEvents(events);
  });
}

/** Inotify watches this process holds, read from the kernel's own accounting. */
export function watchCount(): number {
  let count = 0;
  let fds: string[];
  try {
    fds = readdirSync('/proc/self/fd');
  } catch {
    return 0;
  }
  for (const fd of fds) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`) !== 'anon_inode:inotify') continue;
      for (const line of readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8').split('\n')) if (line.startsWith('inotify wd:')) count++;
    } catch {
      // closed meanwhile
    }
  }
  return count;
}

/** The kernel's inotify queue length: a burst of this many events in a moment may have overflowed it. */
export function maxQueuedEvents(): number {
  try {
    return Number(readFileSync('/proc/sys/fs/inotify/max_queued_events', 'utf8').trim()) || 16_384;
  } catch {
    return 16_384;
  }
}
