/**
 * A Jest outcome as the runtime stage's issues. Pure: it reads only what the
 * host sent back (src/prove/jestProtocol.ts).
 */
import { relative, sep } from 'node:path';
import type { Issue } from '../core/claim.js';
import { locateError } from './errorLocation.js';
import type { JestError, JestOutcome } from './jestProtocol.js';
import { stackFrames } from './stackFrames.js';

/** Jest's words for a file that declares no test (jest-circus, Jest 29 and 30). */
const NO_TESTS = /Your test suite must contain at least one test/;

/**
 * `declaredPaths` maps each absolute path the run saw (the drafts, and the
 * test at its fresh path) to its declared, workspace-relative one; `test` is
 * the test's declared path.
 */
export function jestIssues(outcome: JestOutcome, declaredPaths: ReadonlyMap<string, string>, test: string, workspace: string): Issue[] {
  if (outcome.runError !== undefined) return [issue('instrument', `Jest could not run the test: ${firstLine(outcome.runError)}`, test)];
  if (!outcome.found && outcome.declaredAdmitted === true) {
    const message = `the workspace's Jest config admits ${test} as a test file but not the fresh path beside it that vouch runs the test at (a testMatch or testRegex that names the file exactly); widen the pattern to the file's extension`;
    return [{ ...issue('workspace', message, test), unjudged: true }];
  }
  if (!outcome.found) {
    return [{ ...issue('workspace', `the workspace's Jest config does not include ${test} as a test file (testMatch, testRegex, testPathIgnorePatterns, roots), so Jest would not run it there`, test), unjudged: true }];
  }
  if (outcome.execError !== undefined) {
    if (NO_TESTS.test(outcome.execError.message)) return [issue('claimant', 'the test declares no tests', test)];
    const error = { ...outcome.execError, message: absolutePaths(plain(outcome.execError.message), declaredPaths, workspace) };
    return [errorIssue(error, declaredPaths, 'could not load the test', test)];
  }
  const issues: Issue[] = [];
  for (const result of outcome.tests) {
    if (result.status !== 'failed') continue;
    const failures = result.failures.length > 0 ? result.failures : [{ message: 'failed' }];
    for (const failure of failures) issues.push(errorIssue(failure, declaredPaths, result.fullName, test));
  }
  if (issues.length > 0) return issues;
  if (outcome.tests.length === 0) return [issue('claimant', 'the test declares no tests', test)];
  if (!outcome.tests.some((result) => result.status === 'passed')) return [issue('claimant', 'no test ran: every test in the file is skipped or todo', test)];
  return [];
}

/** Located at the first stack frame in a draft or the test; else at the test, unlocated. */
function errorIssue(error: JestError, declaredPaths: ReadonlyMap<string, string>, context: string, test: string): Issue {
  const message = plain(error.message);
  const at = locateError({ message, stacks: stackFrames(error.stack) }, declaredPaths);
  const name = error.name !== undefined && !['Error', 'JestAssertionError', 'AssertionError'].includes(error.name) ? `${error.name}: ` : '';
  const text = name + oneLine(at?.message ?? relativeTo(message, declaredPaths));
  const found: Issue = { origin: 'claimant', stage: 'runtime', message: `${context}: ${text}`, path: at?.path ?? test };
  if (at !== undefined) {
    found.line = at.line;
    if (at.column !== undefined) found.column = at.column;
  }
  return found;
}

/**
 * ts-jest prints a diagnostic's file relative to the root
 * (`test/a.test.ts:3:1 - error TS2322: ...`); written absolute, it is
 * located like any other printed location.
 */
function absolutePaths(message: string, declaredPaths: ReadonlyMap<string, string>, workspace: string): string {
  let out = message;
  for (const file of declaredPaths.keys()) {
    const shown = relative(workspace, file).split(sep).join('/');
    out = out.replace(new RegExp(`(^|[\\s(])${escapeRegExp(shown)}:(?=\\d)`, 'gm'), `$1${file}:`);
  }
  return out;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function issue(origin: Issue['origin'], message: string, path: string): Issue {
  return { origin, stage: 'runtime', message, path };
}

/** Jest's messages carry ANSI colours when its process thinks it has a terminal. */
function plain(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\u001b\[[0-9;]*m/g, '');
}

/** Absolute paths of claim files as their declared ones. */
function relativeTo(text: string, declaredPaths: ReadonlyMap<string, string>): string {
  let out = text;
  for (const [file, declared] of declaredPaths) out = out.replaceAll(file, declared);
  return out;
}

/** A multi-line matcher message on one line, blank lines dropped, capped so a verdict stays readable. */
function oneLine(text: string): string {
  const joined = text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .join(' ');
  return joined.length > 500 ? `${joined.slice(0, 497)}...` : joined;
}

function firstLine(text: string): string {
  return plain(text).split('\n').find((line) => line.trim() !== '')?.trim() ?? 'no message';
}
