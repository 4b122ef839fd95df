import { describe, expect, it } from 'vitest';
import { fullCollection, HeapKeeper } from '../../src/prove/workerHeap.js';

const MB = 1 << 20;

describe('HeapKeeper', () => {
  it('takes the first settle as its measure, then collects only once the heap has grown well past what the last collection left', () => {
    let used = 100 * MB;
    const collections: number[] = [];
    const keeper = new HeapKeeper(() => {
      collections.push(used);
      used = 80 * MB; // what the collection leaves
    }, () => used);
    // Right after warming: no pause before the first inspection.
    expect(keeper.settle()).toBe(false);
    used = 140 * MB;
    expect(keeper.settle()).toBe(false);
    used = 200 * MB;
    expect(keeper.settle()).toBe(true);
    expect(collections).toEqual([200 * MB]);
    // 80 MB live after it: 1.25 × 80 + 16 = 116 MB is the threshold now.
    used = 115 * MB;
    expect(keeper.settle()).toBe(false);
    used = 117 * MB;
    expect(keeper.settle()).toBe(true);
    expect(collections).toEqual([200 * MB, 117 * MB]);
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
