import { describe, expect, it } from 'vitest';
import { byteOrder } from '../../src/core/statCache.js';
import { mulberry32, testSeed } from '../helpers/seed.js';

// VOUCH_SEED=N replays (test/helpers/seed.ts).
const SEED = testSeed(import.meta.url, 5);

// Around every boundary where UTF-16 and UTF-8 order differ: surrogate pairs against U+E000..U+FFFF.
const ALPHABET = ['a', 'z', '/', '\u007F', '\u0080', 'é', '\uD7FF', '\uE000', '\uFFFD', '\uFFFF', '😀', '𝄞', '\u{10FFFF}', '\u{10000}'];

describe('byteOrder (the stat cache binary search)', () => {
  it('orders strings as their UTF-8 bytes do', () => {
    const next = mulberry32(SEED.value);
    const word = () => Array.from({ length: Math.floor(next() * 5) }, () => ALPHABET[Math.floor(next() * ALPHABET.length)]).join('');
    for (let round = 0; round < 5000; round++) {
      const a = word();
      const b = word();
      expect(Math.sign(byteOrder(a, b)), `${SEED.replay()}: ${JSON.stringify([a, b])}`).toBe(Buffer.compare(Buffer.from(a), Buffer.from(b)));
    }
  });
});
