import { describe, expect, it } from 'vitest';
import { fullCollection, HeapKeeper } from '../../src/prove/workerHeap.js';

const MB = 1 << 20;

describe('HeapKeeper', () => {
  it('collects on the first settle, then only once the heap has grown well past what the last collection left', () => {
    let used = 200 * MB;
    const collections: number[] = [];
    const keeper = new HeapKeeper(() => {
      collections.push(used);
      used = 100 * MB; // what the collection leaves
    }, () => used);
    expect(keeper.settle()).toBe(true);
    expect(collections).toEqual([200 * MB]);
    // 100 MB live: 1.25 × 100 + 16 = 141 MB is the threshold.
    used = 140 * MB;
    expect(keeper.settle()).toBe(false);
    used = 142 * MB;
    expect(keeper.settle()).toBe(true);
    expect(collections).toEqual([200 * MB, 142 * MB]);
  });
});

describe('fullCollection', () => {
  it('gives this isolate a collector without leaving a gc global to contexts made after it', async () => {
    const collect = fullCollection();
    expect(typeof collect).toBe('function');
    collect!();
    const { runInNewContext } = await import('node:vm');
    expect(runInNewContext('typeof gc')).toBe('undefined');
  });
});
