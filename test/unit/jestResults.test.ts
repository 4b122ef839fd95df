import { describe, expect, it } from 'vitest';
import { jestIssues } from '../../src/prove/jestResults.js';

const WORKSPACE = '/w';
const FRESH = '/w/test/a.vouch-1-000000000000.test.ts';
const PATHS = new Map([
  [FRESH, 'test/a.test.ts'],
  ['/w/src/a.ts', 'src/a.ts'],
]);
const issues = (outcome: Parameters<typeof jestIssues>[0]) => jestIssues(outcome, PATHS, 'test/a.test.ts', WORKSPACE);

describe('jestIssues', () => {
  it('passes a file whose tests passed', () => {
    expect(issues({ found: true, tests: [{ fullName: 'a adds', status: 'passed', failures: [] }] })).toEqual([]);
  });

  it('locates a failure at its first frame in a claim file, by its declared path', () => {
    const stack = `Error: expect(received).toBe(expected)\n    at helper (/w/node_modules/x/index.js:1:1)\n    at Object.<anonymous> (${FRESH}:7:23)`;
    expect(issues({ found: true, tests: [{ fullName: 'a adds', status: 'failed', failures: [{ name: 'JestAssertionError', message: 'expect(received).toBe(expected)\n\nExpected: 4\nReceived: 3', stack }] }] })).toEqual([
      { origin: 'claimant', stage: 'runtime', message: 'a adds: expect(received).toBe(expected) Expected: 4 Received: 3', path: 'test/a.test.ts', line: 7, column: 23 },
    ]);
  });

  it('locates a ts-jest diagnostic printed relative to the root, colours and all', () => {
    const message = '\u001b[96mtest/a.vouch-1-000000000000.test.ts\u001b[0m:\u001b[93m3\u001b[0m:\u001b[93m7\u001b[0m - error TS2322: nope';
    const [found] = issues({ found: true, execError: { name: 'TSError', message }, tests: [] });
    expect(found).toMatchObject({ origin: 'claimant', path: 'test/a.test.ts', line: 3, column: 8, message: 'could not load the test: TSError: - error TS2322: nope' });
  });

  it('says a file with no tests, or only skipped ones, is the claimant\'s', () => {
    expect(issues({ found: true, execError: { message: 'Your test suite must contain at least one test.' }, tests: [] })).toEqual([
      { origin: 'claimant', stage: 'runtime', message: 'the test declares no tests', path: 'test/a.test.ts' },
    ]);
    expect(issues({ found: true, tests: [{ fullName: 'a', status: 'pending', failures: [] }] })[0]).toMatchObject({ origin: 'claimant', message: 'no test ran: every test in the file is skipped or todo' });
  });

  it('says a path the config does not admit is the workspace\'s and unjudged, and a failed run the instrument\'s', () => {
    expect(issues({ found: false, tests: [] })[0]).toMatchObject({ origin: 'workspace', unjudged: true });
    expect(issues({ found: false, declaredAdmitted: true, tests: [] })[0]).toMatchObject({ origin: 'workspace', unjudged: true, message: expect.stringMatching(/admits test\/a\.test\.ts as a test file but not the fresh path/) });
    expect(issues({ found: false, tests: [], runError: 'boom\nat x' })).toEqual([{ origin: 'instrument', stage: 'runtime', message: 'Jest could not run the test: boom', path: 'test/a.test.ts' }]);
  });
});
