import { expect } from 'vitest';
import type { TempProject } from './project.js';

// Parsed CLI JSON; each test asserts the fields it reads.
export type Json = any;

export const configText = (checks: object[]) => JSON.stringify({ schema: 1, checks }, null, 2) + '\n';

/** One check's entry of `vouch status CHECK --json`. */
export function statusOf(p: TempProject, check: string, env?: NodeJS.ProcessEnv): Json {
  const out = p.json(['status', check], env ? { env } : {});
  expect(out.schema).toBe(1);
  const found = out.checks.find((entry: Json) => entry.name === check);
  expect(found, JSON.stringify(out)).toBeDefined();
  return found;
}

/** CURRENT, PASS and reusable, or the test fails with the reasons. */
export function expectCurrent(p: TempProject, check: string, env?: NodeJS.ProcessEnv): Json {
  const status = statusOf(p, check, env);
  expect(status.freshness, JSON.stringify(status.reasons)).toBe('CURRENT');
  expect(status.result).toBe('PASS');
  expect(status.reuse_eligible).toBe(true);
  return status;
}
