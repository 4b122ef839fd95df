import { loadAddon, type QueueWindow } from '../fs/nativeAddon.js';
import { inotifyDescriptors, maxQueuedEvents } from './treeWatcher.js';

/** How often the kernel's inotify queues are sampled, and the longest gap that still proves something. */
const INTERVAL_NS = 1_000_000;
const MAX_GAP_NS = 2_500_000;
/**
 * The most a queue may hold at a sample: a quarter of its length, counting
 * every event at its smallest (16 bytes, no name), so the events it holds are
 * fewer still. To overflow before the next sample, the kernel would then have
 * to queue three quarters of the queue (12,288 events by default) within
 * MAX_GAP_NS: about 5 million events a second, more than inotify delivers.
 */
const LIMIT_SHARE = 4;
const EVENT_BYTES = 16;

/**
 * Whether events may have been lost: the kernel drops inotify events once a
 * queue holds max_queued_events, and @parcel/watcher does not say so. A
 * native thread samples the unread bytes of each of this process's inotify
 * queues every millisecond; a window is calm when every sample found its
 * queue far from full and no sample came late. Only a calm window lets the
 * index be patched from events; anything else makes a full scan, which does
 * not depend on events.
 */
export class QueueWatch {
  private watching = false;

  private constructor(
    private readonly start: (fds: number[], intervalNs: number, maxGapNs: number, limitBytes: number) => number,
    private readonly take: () => QueueWindow,
    private readonly limitBytes: number,
  ) {}

  /** The watch, or null where it cannot run (no addon, no /proc): every refresh is then a full scan. */
  static create(): QueueWatch | null {
    const addon = loadAddon();
    if (!addon?.queueWatch || !addon.queueWatchTake) return null;
    if (inotifyDescriptors() === null) return null;
    const queued = maxQueuedEvents();
    return new QueueWatch(addon.queueWatch, addon.queueWatchTake, Math.floor((queued * EVENT_BYTES) / LIMIT_SHARE));
  }

  /** Watches the process's inotify queues as they are now; called after every subscription. */
  watch(): void {
    const fds = inotifyDescriptors();
    this.watching = fds !== null && fds.length > 0 && this.start(fds, INTERVAL_NS, MAX_GAP_NS, this.limitBytes) === 0;
  }

  /** Stops trusting the queues until the next watch(): the subscription they belong to is going. */
  forget(): void {
    this.watching = false;
  }

  /**
   * Whether events may have been lost since the last call ('lost'), or cannot
   * have been ('calm'); 'unknown' while no subscription is watched. Every call
   * begins a new window.
   */
  calm(): QueueState {
    const window = this.take();
    if (!this.watching) return 'unknown';
    return isCalm(window) ? 'calm' : 'lost';
  }
}

export type QueueState = 'calm' | 'lost' | 'unknown';

/** A window proves nothing was lost when it was sampled throughout and never near full. */
export function isCalm(window: QueueWindow): boolean {
  return window.fds > 0 && window.samples > 0 && window.gaps === 0 && window.over === 0 && window.failures === 0 && window.idleNs >= 0 && window.idleNs <= MAX_GAP_NS;
}

