import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { installedPackage } from './workspaceTool.js';

export type RunnerName = 'vitest' | 'jest';

const VITEST_CONFIGS = /^(?:vitest|vite)\.config\.[cm]?[jt]s$|^vitest\.workspace\.[cm]?[jt]s$/;
const JEST_CONFIGS = /^jest\.config\.(?:[cm]?[jt]s|json)$/;

/**
 * The runner a script runs, by the first one it names as a command: `jest`,
 * `npx vitest run`, `node_modules/.bin/jest`; not `ts-jest` or `jest-preview`.
 */
function named(script: string): RunnerName | null {
  const match = /(?:^|[\s;&|(]|\.bin\/)(vitest|jest)(?=$|[\s;&|)])/.exec(script);
  return match === null ? null : (match[1] as RunnerName);
}

/**
 * The test runner the workspace itself uses, in order of how plainly it
 * says so: the `test` script, then any other script, then a config at the
 * root (Vitest's or Vite's, then `jest.config.*` or a `"jest"` key in
 * package.json), each counted only with that runner installed, then
 * whichever is installed. Vitest comes first at each step, so a workspace
 * that configures both the same way is judged by Vitest. With neither, the
 * answer is Vitest, whose stage says what to install.
 */
export function pickRunner(workspace: string): RunnerName {
  let manifest: { scripts?: Record<string, unknown>; jest?: unknown } = {};
  try {
    manifest = JSON.parse(readFileSync(join(workspace, 'package.json'), 'utf8')) as typeof manifest;
  } catch {
    // No package.json, or one that does not parse: the config files and installs still say something.
  }
  const installed = (name: RunnerName): boolean => installedPackage(workspace, name) !== null;
  const scripts = typeof manifest.scripts === 'object' && manifest.scripts !== null ? manifest.scripts : {};
  const test = typeof scripts.test === 'string' ? named(scripts.test) : null;
  if (test !== null && installed(test)) return test;
  for (const script of Object.values(scripts)) {
    const runner = typeof script === 'string' ? named(script) : null;
    if (runner !== null && installed(runner)) return runner;
  }
  let entries: string[] = [];
  try {
    entries = readdirSync(workspace);
  } catch {
    // An unreadable root: the installs below still say something.
  }
  if (entries.some((name) => VITEST_CONFIGS.test(name)) && installed('vitest')) return 'vitest';
  if ((entries.some((name) => JEST_CONFIGS.test(name)) || manifest.jest !== undefined) && installed('jest')) return 'jest';
  if (installed('vitest')) return 'vitest';
  return installed('jest') ? 'jest' : 'vitest';
}
