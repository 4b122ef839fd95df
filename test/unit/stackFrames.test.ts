import { describe, expect, it } from 'vitest';
import { stackFrames } from '../../src/prove/stackFrames.js';

describe('stackFrames', () => {
  it('reads the file, line and column of each frame, named or anonymous, with or without a file URL', () => {
    const stack = [
      'AssertionError: expected 1 to be 2 // Object.is equality',
      '    at /w/test/x.vouch-1-abc.test.ts:4:13',
      '    at runTest (file:///w/node_modules/@vitest/runner/dist/chunk-hooks.js:1574:12)',
      '    at new Promise (<anonymous>)',
      '    at Object.<anonymous> (/w/src/a b.ts:10:2)',
      '    at file:///w/src/%C3%A9t%C3%A9.ts:3:1',
    ].join('\n');
    expect(stackFrames(stack)).toEqual([
      { file: '/w/test/x.vouch-1-abc.test.ts', line: 4, column: 13 },
      { file: '/w/node_modules/@vitest/runner/dist/chunk-hooks.js', line: 1574, column: 12 },
      { file: '/w/src/a b.ts', line: 10, column: 2 },
      { file: '/w/src/été.ts', line: 3, column: 1 },
    ]);
  });

  it('finds nothing in no stack, a message alone, or relative and native frames', () => {
    expect(stackFrames(undefined)).toEqual([]);
    expect(stackFrames('Error: boom')).toEqual([]);
    expect(stackFrames('Error: boom\n    at node:internal/process/task_queues:95:5\n    at x (src/a.ts:1:1)')).toEqual([]);
  });
});
