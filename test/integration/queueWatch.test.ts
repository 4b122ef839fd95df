import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { subscribe, type AsyncSubscription } from '@parcel/watcher';
import { afterAll, describe, expect, it } from 'vitest';
import { loadAddon } from '../../src/fs/nativeAddon.js';
import { isCalm, isStalled, QueueWatch } from '../../src/observer/queueWatch.js';
import { inotifyDescriptors } from '../../src/observer/treeWatcher.js';

// The sampler of the kernel's inotify queues (native/queueWatch.c), behind a real @parcel/watcher subscription.
const root = mkdtempSync(join(tmpdir(), 'vouch-queue-watch-'));
const subscriptions: AsyncSubscription[] = [];
afterAll(async () => {
  for (const subscription of subscriptions) await subscription.unsubscribe();
  rmSync(root, { recursive: true, force: true });
});

describe.runIf(process.platform === 'linux')('the queue watch', () => {
  it('is calm while it samples the watcher\'s queue throughout, unknown before it watches and after it forgets', async () => {
    const queue = QueueWatch.create();
    expect(queue, 'the addon is built in this repository').not.toBeNull();
    expect(queue!.window()).toBeNull();
    subscriptions.push(await subscribe(root, () => undefined));
    expect(inotifyDescriptors()!.length).toBeGreaterThan(0);
    queue!.watch();
    await delay(20);
    for (let i = 0; i < 50; i++) writeFileSync(join(root, `f${i % 2}.txt`), String(i));
    await delay(20);
    // A loaded test machine can delay the sampler past its bound: that window is not calm, which is the safe answer.
    const busy = queue!.window()!;
    expect(busy.samples).toBeGreaterThan(0);
    expect([busy.over, busy.failures]).toEqual([0, 0]);
    let calmSeen = false;
    for (let tries = 0; tries < 50 && !calmSeen; tries++) {
      await delay(5);
      calmSeen = isCalm(queue!.window()!);
    }
    expect(calmSeen, 'a quiet window is calm').toBe(true);
    queue!.forget();
    expect(queue!.window()).toBeNull();
  });

  it('counts a round later than the longest gap, a queue over its limit and a descriptor that is no queue', async () => {
    const addon = loadAddon()!;
    const fds = inotifyDescriptors()!;
    // A longest gap of 1 ns: every round after the first is late.
    expect(addon.queueWatch!(fds, 1_000_000, 1, 1 << 20)).toBe(0);
    await delay(20);
    const late = addon.queueWatchTake!();
    expect(late.samples).toBeGreaterThan(2);
    expect(late.gaps).toBeGreaterThan(0);
    expect(isCalm(late)).toBe(false);
    // A limit of -1 byte: every sample is over it, even of an empty queue.
    expect(addon.queueWatch!(fds, 1_000_000, 1_000_000_000, -1)).toBe(0);
    await delay(20);
    const over = addon.queueWatchTake!();
    expect([over.over > 0, over.gaps, isCalm(over)]).toEqual([true, 0, false]);
    // A descriptor that is not open.
    expect(addon.queueWatch!([987_654], 1_000_000, 1_000_000_000, 1 << 20)).toBe(0);
    await delay(20);
    const failed = addon.queueWatchTake!();
    expect([failed.failures > 0, isCalm(failed)]).toEqual([true, false]);
    // And a sound window, to show the others failed for their own reason.
    expect(addon.queueWatch!(fds, 1_000_000, 1_000_000_000, 1 << 20)).toBe(0);
    await delay(20);
    expect(isCalm(addon.queueWatchTake!())).toBe(true);
  });

  it('says when no round came for a while, however calm the rounds before, and when the observer stalled', () => {
    const quiet = { samples: 10, gaps: 0, over: 0, failures: 0, maxBytes: 0, idleNs: 1_000_000, longestGapNs: 3_000_000, fds: 1 };
    expect([isCalm(quiet), isStalled(quiet)]).toEqual([true, false]);
    expect(isCalm({ ...quiet, idleNs: 20_000_000, longestGapNs: 20_000_000 })).toBe(false);
    expect(isCalm({ ...quiet, samples: 0, idleNs: -1 })).toBe(false);
    expect(isCalm({ ...quiet, fds: 0 })).toBe(false);
    // Late rounds make no patch; only a long stop, a queue near full or a failed sample is a reason to scan unasked.
    expect(isStalled({ ...quiet, gaps: 3, longestGapNs: 30_000_000 })).toBe(false);
    expect(isStalled({ ...quiet, gaps: 1, longestGapNs: 500_000_000 })).toBe(true);
    expect(isStalled({ ...quiet, over: 1 })).toBe(true);
    expect(isStalled({ ...quiet, failures: 1 })).toBe(true);
  });
});
