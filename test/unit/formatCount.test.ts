import { describe, expect, it } from 'vitest';
import { formatCount } from '../../src/core/formatCount.js';

/* Counts as toLocaleString('en-US') writes them, without loading ICU's data. */

describe('formatCount', () => {
  it('writes every whole number as toLocaleString("en-US") does', () => {
    const values = [0, 1, 9, 10, 99, 100, 999, 1_000, 1_329, 9_999, 10_000, 21_914, 99_999, 100_000, 999_999, 1_000_000, 12_345_678, 123_456_789, Number.MAX_SAFE_INTEGER];
    for (const value of [...values, ...values.map((v) => -v)]) expect(formatCount(value)).toBe(value.toLocaleString('en-US'));
    for (let value = 0; value < 20_000; value += 7) expect(formatCount(value)).toBe(value.toLocaleString('en-US'));
  });

  it('leaves what is not a safe whole number to toLocaleString', () => {
    for (const value of [1.5, -0.25, 1e21, Number.NaN, Number.POSITIVE_INFINITY]) expect(formatCount(value)).toBe(value.toLocaleString('en-US'));
  });
});
