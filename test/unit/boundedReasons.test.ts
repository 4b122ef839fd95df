import { describe, expect, it } from 'vitest';
import { boundedReasons, NAMED_PER_CODE, reason } from '../../src/core/reason.js';

describe('boundedReasons', () => {
  const outside = (n: number) => reason('input-outside-root', `node_modules/.bin/t${n} is a link to ../t${n}, outside the project root`);

  it('names the first reasons of a code, counts the rest in one, and keeps every code', () => {
    const reasons = [...Array.from({ length: 24 }, (_, n) => outside(n)), reason('input-unreadable', 'src/a.ts could not be read')];
    const bounded = boundedReasons(reasons);
    expect(bounded.map((r) => r.message)).toEqual([
      outside(0).message,
      outside(1).message,
      outside(2).message,
      'src/a.ts could not be read',
      'and 21 more paths for the same reason (input-outside-root)',
    ]);
    expect(new Set(bounded.map((r) => r.code))).toEqual(new Set(reasons.map((r) => r.code)));
  });

  it('drops duplicates before counting, and leaves a short list as it is', () => {
    expect(boundedReasons([outside(1), outside(1), outside(2)])).toEqual([outside(1), outside(2)]);
    const four = [outside(1), outside(2), outside(3), outside(4)];
    expect(boundedReasons(four).at(-1)?.message).toBe('and 1 more path for the same reason (input-outside-root)');
    expect(boundedReasons(four.slice(0, NAMED_PER_CODE))).toEqual(four.slice(0, NAMED_PER_CODE));
  });
});
