import { loadAddon, type QueueWindow } from '../fs/nativeAddon.js';
import { inotifyDescriptors, maxQueuedEvents } from './treeWatcher.js';

/**
 * How often the kernel's inotify queues are sampled, and the longest gap
 * between samples that still proves no event was lost. On an idle virtual
 * machine the sampler's longest gap in a second was 1.1 to 3.7 ms (measured).
 */
const INTERVAL_NS = 1_000_000;
const MAX_GAP_NS = 10_000_000;
/**
 * A gap this long is a stopped or starved observer (SIGSTOP, a suspended
 * machine): whatever was written meanwhile may have overflowed the queue, so
 * the index is scanned before the next answer even when no event came.
 */
const STALL_NS = 100_000_000;
/**
 * The most a queue may hold at a sample: a quarter of its length, counting
 * every event at its smallest (16 bytes, no name), so the events it holds are
 * fewer still. To overflow before the next sample, the kernel would then have
 * to queue three quarters of the queue (12,288 events by default) within
 * MAX_GAP_NS, 1.2 million events a second, while the watcher's own reader
 * thread took none of them.
 */
const LIMIT_SHARE = 4;
const EVENT_BYTES = 16;

/**
 * Whether events may have been lost: the kernel drops inotify events once a
 * queue holds max_queued_events, and @parcel/watcher does not say so. A
 * native thread samples the unread bytes of each of this process's inotify
 * queues every millisecond; a window is calm when every sample found its
 * queue far from full and no sample came late. Only calm windows let the
 * index be patched from events; a stalled one makes a full scan even
 * without an event.
 */
export class QueueWatch implements QueueWindows {
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

  /** What the queues showed since the last call, or null while no subscription is watched. Every call begins a new window. */
  window(): QueueWindow | null {
    const window = this.take();
    return this.watching ? window : null;
  }
}

/** What the index is told of its event queues: each window since it last asked, or null with no queue watch. */
export interface QueueWindows {
  window(): QueueWindow | null;
}

/** A window proves nothing was lost when it was sampled throughout and never near full. */
export function isCalm(window: QueueWindow): boolean {
  return window.fds > 0 && window.samples > 0 && window.gaps === 0 && window.over === 0 && window.failures === 0 && window.idleNs >= 0 && window.idleNs <= MAX_GAP_NS;
}

/** A window in which events were surely at risk: a queue found near full, a failed sample, or the observer stopped for a while. */
export function isStalled(window: QueueWindow): boolean {
  return window.over > 0 || window.failures > 0 || window.fds === 0 || window.longestGapNs > STALL_NS;
}

