import { formatDuration } from './humanTime.js';
import { stripAnsi } from './replay.js';

/*
 * One line that says how a stored run ended: the check, PASS or FAIL, the exit
 * code, how long it took, when it ran, its run id, and the counts its tools
 * printed. A count is read from the tool's own summary line, quoted as printed
 * (ANSI escapes removed); a tool that printed none gets none. Pure.
 */

export type CountingTool = 'tsc' | 'eslint' | 'oxlint' | 'vitest' | 'jest' | 'node:test';

export interface ToolCount {
  tool: CountingTool;
  /** The tool's own line, trimmed, or for tsc without --pretty what was counted. */
  line: string;
  errors?: number;
  warnings?: number;
  passed?: number;
  failed?: number;
  total?: number;
}

export interface RunFactsForSummary {
  check: string;
  result: 'PASS' | 'FAIL';
  exitCode: number | null;
  signal: string | null;
  durationMs: number;
  finishedAt: number;
  runId: string;
}

interface Reader {
  tool: CountingTool;
  /** Matches the tool's summary line (whole line, after ANSI escapes are removed). */
  pattern: RegExp;
  counts(match: RegExpExecArray, line: string): Omit<ToolCount, 'tool' | 'line'> | null;
}

const number = (text: string | undefined) => (text === undefined ? undefined : Number(text));

/** `3 passed`, `1 failed`, ... from a "|"- or ","-separated list. */
function labelled(text: string): Record<string, number> {
  const found: Record<string, number> = {};
  for (const piece of text.split(/[|,]/)) {
    const match = /^\s*(\d+)\s+([a-z]+)\s*$/.exec(piece);
    if (match) found[match[2]!] = Number(match[1]);
  }
  return found;
}

function defined(counts: Record<string, number | undefined>): Omit<ToolCount, 'tool' | 'line'> {
  return Object.fromEntries(Object.entries(counts).filter(([, value]) => value !== undefined)) as Omit<ToolCount, 'tool' | 'line'>;
}

const READERS: Reader[] = [
  // tsc --pretty: "Found 3 errors in 2 files.", "Found 1 error in a.ts:1", "Found 2 errors." (src/compiler/watch.ts, getErrorSummaryText).
  { tool: 'tsc', pattern: /^Found (\d+) errors?(?: in .*|\.)$/, counts: (m) => defined({ errors: number(m[1]) }) },
  // eslint's stylish formatter: "✖ 4 problems (2 errors, 2 warnings)" (https://eslint.org/docs/latest/use/formatters/#stylish).
  { tool: 'eslint', pattern: /^✖ (\d+) problems? \((\d+) errors?, (\d+) warnings?\)$/, counts: (m) => defined({ total: number(m[1]), errors: number(m[2]), warnings: number(m[3]) }) },
  // oxlint: "Found 2 warnings and 0 errors." (https://oxc.rs/docs/guide/usage/linter/cli.html).
  { tool: 'oxlint', pattern: /^Found (\d+) warnings? and (\d+) errors?\.$/, counts: (m) => defined({ warnings: number(m[1]), errors: number(m[2]) }) },
  // vitest: "Tests  1 failed | 3 passed (4)" (https://vitest.dev/guide/reporters#default-reporter).
  {
    tool: 'vitest',
    pattern: /^Tests\s+((?:\d+ [a-z]+)(?:\s*\|\s*\d+ [a-z]+)*)\s+\((\d+)\)$/,
    counts: (m) => {
      const found = labelled(m[1]!);
      return defined({ passed: found.passed, failed: found.failed, total: number(m[2]) });
    },
  },
  // jest: "Tests:       1 failed, 5 passed, 6 total" (https://github.com/jestjs/jest/blob/main/packages/jest-reporters/src/getSummary.ts).
  {
    tool: 'jest',
    pattern: /^Tests:\s+((?:\d+ [a-z]+)(?:,\s*\d+ [a-z]+)*)$/,
    counts: (m) => {
      const found = labelled(m[1]!);
      return found.total === undefined ? null : defined({ passed: found.passed, failed: found.failed, total: found.total });
    },
  },
];

/** node:test's totals, TAP ("# pass 2") or spec ("ℹ pass 2") (https://nodejs.org/api/test.html#test-reporters). */
const NODE_TEST = /^(#|ℹ) (tests|pass|fail) (\d+)$/;
/** tsc without --pretty prints no summary, only diagnostics: "a.ts(1,7): error TS2322: ..." (one line each). */
const TSC_DIAGNOSTIC = /^\S.*\(\d+,\d+\): error TS\d+: /;

/** The counts each tool printed, the last summary of each (a watch or a workspace prints several). */
export function toolCounts(output: string): ToolCount[] {
  const found = new Map<CountingTool, ToolCount>();
  const nodeTest: { marker: string | null; tests?: number; pass?: number; fail?: number } = { marker: null };
  let tscDiagnostics = 0;
  for (const raw of stripAnsi(output).split('\n')) {
    const line = raw.replace(/\r$/, '').trim();
    if (line === '') continue;
    if (TSC_DIAGNOSTIC.test(line)) tscDiagnostics++;
    const nodeMatch = NODE_TEST.exec(line);
    if (nodeMatch) {
      if (nodeMatch[1] !== nodeTest.marker) Object.assign(nodeTest, { marker: nodeMatch[1], tests: undefined, pass: undefined, fail: undefined });
      nodeTest[nodeMatch[2] as 'tests' | 'pass' | 'fail'] = Number(nodeMatch[3]);
      continue;
    }
    for (const reader of READERS) {
      const match = reader.pattern.exec(line);
      if (!match) continue;
      const counts = reader.counts(match, line);
      if (counts) found.set(reader.tool, { tool: reader.tool, line: clip(line.replace(/\s+/g, ' ')), ...counts });
      break;
    }
  }
  if (!found.has('tsc') && tscDiagnostics > 0) {
    found.set('tsc', { tool: 'tsc', line: `${tscDiagnostics} "error TS" diagnostic line${tscDiagnostics === 1 ? '' : 's'}`, errors: tscDiagnostics });
  }
  if (nodeTest.pass !== undefined && nodeTest.fail !== undefined) {
    const line = [nodeTest.tests === undefined ? null : `tests ${nodeTest.tests}`, `pass ${nodeTest.pass}`, `fail ${nodeTest.fail}`].filter((part) => part !== null).join(', ');
    found.set('node:test', { tool: 'node:test', line, ...defined({ passed: nodeTest.pass, failed: nodeTest.fail, total: nodeTest.tests }) });
  }
  return [...found.values()];
}

/** A short human age: 45 s, 12 min, 3 h, 2 d. */
export function ageText(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 90) return `${seconds} s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 90) return `${minutes} min`;
  const hours = Math.round(minutes / 60);
  if (hours < 36) return `${hours} h`;
  return `${Math.round(hours / 24)} d`;
}

/**
 * `check "test" PASSED in run R, 5 min ago (2026-12-05T02:30:01Z): exit 0 in 3.2s; vitest: Tests 3 passed (3)`.
 * The check name is cut at 200 characters: a name comes from the config, which a repository writes.
 */
export function summaryLine(facts: RunFactsForSummary, counts: readonly ToolCount[], now: number): string {
  const name = facts.check.length > 200 ? `${facts.check.slice(0, 200)}…` : facts.check;
  const verb = facts.result === 'PASS' ? 'PASSED' : 'FAILED';
  const how = facts.signal ? `killed by ${facts.signal}` : `exit ${facts.exitCode ?? '-'}`;
  const when = `${ageText(now - facts.finishedAt)} ago (${new Date(facts.finishedAt).toISOString().replace(/\.\d{3}Z$/, 'Z')})`;
  const tools = counts.map((count) => `${count.tool}: ${count.line}`).join('; ');
  return `check ${JSON.stringify(name)} ${verb} in run ${facts.runId}, ${when}: ${how} in ${formatDuration(facts.durationMs)}${tools === '' ? '' : `; ${tools}`}`;
}

function clip(text: string): string {
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

/** The time a skip saved: what the run it relied on took, less the skip's own time; never below zero. */
export function savedMs(receiptDurationMs: number, skipMs: number): number {
  return Math.max(0, Math.round(receiptDurationMs - skipMs));
}
