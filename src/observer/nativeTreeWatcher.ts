import { loadAddon } from '../fs/nativeAddon.js';
import { maxQueuedEvents, unwatchedDirectories, unwatchedTree, watchCount, watchTree, type TreeEvents, type Watcher, type WatchSubscription } from './treeWatcher.js';

/**
 * The observer's watcher on Linux: native/treeWatch.c, a recursive inotify watch that hands each
 * event on as soon as it is read. @parcel/watcher holds every batch at least 50 ms (its debounce),
 * so each answer that waits for the barrier's cookie waited that long; here the cookie comes back
 * in well under a millisecond. It also reports what @parcel/watcher does not: a kernel queue
 * overflow (IN_Q_OVERFLOW) is an error, so the session watches again and rescans. Without the
 * addon, or with VOUCH_WATCHER=parcel, @parcel/watcher stands in.
 */
export function nativeWatcherAvailable(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.VOUCH_WATCHER === 'parcel' || process.platform !== 'linux') return false;
  const addon = loadAddon();
  return typeof addon?.treeWatch === 'function' && typeof addon.treeWatchStop === 'function';
}

export function watchTreeNatively(root: string, handlers: TreeEvents): Promise<WatchSubscription> {
  const addon = loadAddon();
  if (!addon?.treeWatch || !addon.treeWatchStop) return watchTree(root, handlers);
  const stop = addon.treeWatchStop;
  return new Promise((resolve, reject) => {
    let started = false;
    let stopped = false;
    const unsubscribe = async (): Promise<void> => {
      if (stopped) return;
      stopped = true;
      stop(handle);
    };
    const handle = addon.treeWatch!(root, (kind, events, message, errno) => {
      if (stopped) return;
      if (kind === 'events') {
        handlers.onEvents(events);
      } else if (kind === 'ready') {
        started = true;
        resolve({ unsubscribe, watchesNewTrees: true });
      } else if (kind === 'overflow' && started) {
        (handlers.onOverflow ?? ((why: string) => handlers.onError(new Error(why))))("the kernel's event queue overflowed (IN_Q_OVERFLOW)");
      } else {
        const error = kind === 'overflow' ? new Error("the kernel's event queue overflowed (IN_Q_OVERFLOW) while the tree was first watched") : Object.assign(new Error(message ?? 'the watcher failed'), errno === 28 ? { code: 'ENOSPC' } : {});
        if (started) handlers.onError(error);
        else {
          // The first walk failed (the watch limit, a root gone): nothing is watched.
          void unsubscribe();
          reject(error);
        }
      }
    });
  });
}

/** native/treeWatch.c, and the kernel's own inotify accounting. */
export const nativeTreeWatcher: Watcher = { subscribe: watchTreeNatively, unwatchedDirectories, unwatchedTree, watchCount, maxQueuedEvents };
