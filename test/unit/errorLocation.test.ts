import { describe, expect, it } from 'vitest';
import { locateError } from '../../src/prove/errorLocation.js';

// Where a runtime error is in the claim's files, from the error as Vitest serialises it (shapes taken from Vitest 4.1 with Vite's esbuild transform).

const declared = new Map([
  ['/ws/src/cart.ts', 'src/cart.ts'],
  ['/ws/test/cart.vouch-1-abcdefabcdef.test.ts', 'test/cart.test.ts'],
]);

const transformFailed = 'Transform failed with 1 error:\n/ws/src/cart.ts:6:20: ERROR: Unexpected ")"';

describe('locateError', () => {
  it('a failed assertion: the first stack frame in a claim file, message untouched', () => {
    const located = locateError(
      {
        message: 'expected 1 to be 2',
        stacks: [
          { file: '/ws/node_modules/vitest/index.js', line: 9, column: 1 },
          { file: '/ws/test/cart.vouch-1-abcdefabcdef.test.ts', line: 8, column: 5 },
        ],
      },
      declared,
    );
    expect(located).toEqual({ path: 'test/cart.test.ts', line: 8, column: 5 });
  });

  it('a draft that does not parse: Vite\'s loc, 1-based, and the message on one line without the location', () => {
    const located = locateError(
      {
        message: transformFailed,
        stacks: [{ file: '/ws/node_modules/esbuild/lib/main.js', line: 1752, column: 15 }],
        __vitest_rollup_error__: { loc: { file: '/ws/src/cart.ts', line: 6, column: 20 } },
      },
      declared,
    );
    expect(located).toEqual({ path: 'src/cart.ts', line: 6, column: 21, message: 'Transform failed with 1 error: ERROR: Unexpected ")"' });
  });

  it('a draft that does not parse, with no loc kept: the location printed in the message', () => {
    expect(locateError({ message: transformFailed }, declared)).toEqual({ path: 'src/cart.ts', line: 6, column: 21, message: 'Transform failed with 1 error: ERROR: Unexpected ")"' });
  });

  it('the test itself, at its fresh path, is reported at its declared path', () => {
    const located = locateError({ message: 'Transform failed with 1 error:\n/ws/test/cart.vouch-1-abcdefabcdef.test.ts:2:0: ERROR: Expected ";"' }, declared);
    expect(located).toMatchObject({ path: 'test/cart.test.ts', line: 2, column: 1 });
  });

  it('an error that names no claim file has no location', () => {
    expect(locateError({ message: 'Transform failed with 1 error:\n/ws/src/other.ts:1:0: ERROR: x' }, declared)).toBeUndefined();
    expect(locateError({ message: 'boom', __vitest_rollup_error__: { loc: { file: '/elsewhere.ts', line: 1, column: 0 } } }, declared)).toBeUndefined();
  });
});
