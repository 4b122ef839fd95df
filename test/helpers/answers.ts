import { expect } from 'vitest';
import type { TempProject } from './project.js';

// Parsed CLI JSON; each test asserts the fields it reads.
export type Json = any;

export const configText = (checks: object[]) => JSON.stringify({ schema: 1, checks }, null, 2) + '\n';

/** One check's entry of `vouch status CHECK --json`. */
export function statusOf(p: TempProject, check: string, env?: NodeJS.ProcessEnv): Json {
  return entryOf(p.json(['status', check], env ? { env } : {}), check);
}

/** CURRENT, PASS and reusable, or the test fails with the reasons. */
export function expectCurrent(p: TempProject, check: string, env?: NodeJS.ProcessEnv): Json {
  return expectCurrentEntry(statusOf(p, check, env));
}

/** The check's entry of a status report. */
export function entryOf(report: Json, check: string): Json {
  expect(report.schema).toBe(1);
  const found = report.checks.find((entry: Json) => entry.name === check);
  expect(found, JSON.stringify(report)).toBeDefined();
  return found;
}

export function expectCurrentEntry(status: Json): Json {
  expect(status.freshness, JSON.stringify(status.reasons)).toBe('CURRENT');
  expect(status.result).toBe('PASS');
  expect(status.reuse_eligible).toBe(true);
  return status;
}
