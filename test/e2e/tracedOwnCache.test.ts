import { spawnSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { traceAvailability } from '../../src/exec/trace/tracer.js';
import { configText, statusOf } from '../helpers/answers.js';
import { cleanEnv, tempProject, type TempProject } from '../helpers/project.js';

/*
 * A traced check's own cache (issue 17): "a file the run wrote and then read is the run's own
 * cache ... A cache read *before* the run wrote it is an input like any other." Held to the
 * ground truth: a CURRENT receipt is one whose check, run again, prints what its traced run
 * printed.
 *
 * - A cache the run reads and then rewrites with the same bytes (a steady incremental cache):
 *   CURRENT, and the next run reads what this one read.
 * - A cache the run writes and then reads back: CURRENT.
 * - A cache the run reads and then rewrites with other bytes (a test runner's timings, build info
 *   stamped with the run): the run's own write is not held against it (issue 17: "a check's own
 *   writes are not held against it"; tsbuildinfo and .eslintcache are read, then rewritten). The
 *   receipt is held to what the run left there, so anyone else's change to it afterwards makes it
 *   STALE. This takes the cache at its word: what the run left gives the next run the same result
 *   (its exit code), though not the same bytes of output. A check whose result depends on its
 *   own last run otherwise is not reproducible (docs/config.md, "What a traced receipt records").
 */

const availability = traceAvailability();
const TITLE = availability.available ? "a traced check's own cache" : `a traced check's own cache (SKIPPED: tracing cannot run here: ${availability.code}: ${availability.message})`;

/** Prints what it read from its cache (before writing it) and from the file it wrote and read back. */
const PROGRAM = (next: string) => `import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
mkdirSync('node_modules/.cache/tool', { recursive: true });
let before = '<none>';
try {
  before = readFileSync('node_modules/.cache/tool/state', 'utf8');
} catch {}
writeFileSync('node_modules/.cache/tool/state', ${next});
writeFileSync('node_modules/.cache/tool/scratch', 'scratch of this run');
const back = readFileSync('node_modules/.cache/tool/scratch', 'utf8');
process.stdout.write(JSON.stringify({ before, back }) + '\\n');
`;

const projects: TempProject[] = [];
afterEach(() => {
  for (const project of projects.splice(0)) project.remove();
});

async function tracedOnce(next: string): Promise<{ project: TempProject; printed: string }> {
  const project = tempProject('traced-own-cache', {
    'check.mjs': PROGRAM(next),
    'vouch.config.json': configText([{ name: 'check', kind: 'custom', command: ['node', 'check.mjs'], mode: 'traced' }]),
    '.gitignore': 'node_modules/\n',
  });
  projects.push(project);
  // An earlier run left the cache; the state dir made first, outside the run's clock slack.
  expect(spawnSync(process.execPath, ['check.mjs'], { cwd: project.root, env: cleanEnv() }).status).toBe(0);
  project.vouch(['status']);
  await new Promise((resolve) => setTimeout(resolve, 150));
  const run = project.vouch(['run', 'check']);
  expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
  return { project, printed: run.stdout.split('\n').find((line) => line.startsWith('{"before"')) ?? '' };
}

function rerun(project: TempProject): string {
  const again = spawnSync(process.execPath, ['check.mjs'], { cwd: project.root, env: cleanEnv(), encoding: 'utf8' });
  return again.stdout.trim();
}

describe(TITLE, () => {
  it.skipIf(!availability.available)('a cache read, then rewritten with the same bytes, and a file written then read back: CURRENT, and the check prints the same again', async () => {
    const { project, printed } = await tracedOnce("'steady'");
    const found = statusOf(project, 'check');
    expect(found.freshness, JSON.stringify(found.reasons)).toBe('CURRENT');
    expect(rerun(project)).toBe(printed);
  });

  it.skipIf(!availability.available)("a cache read, then rewritten with other bytes (a counter): CURRENT, held to what the run left; the next run's result is the same, and another process's change to it is STALE", async () => {
    const { project } = await tracedOnce("String(Number(before === '<none>' ? 0 : before) + 1)");
    const found = statusOf(project, 'check');
    expect(found.freshness, JSON.stringify(found.reasons)).toBe('CURRENT');
    expect(spawnSync(process.execPath, ['check.mjs'], { cwd: project.root, env: cleanEnv() }).status).toBe(0);
    // The rerun above is another process: it rewrote the cache the receipt holds.
    const stale = statusOf(project, 'check');
    expect(stale.freshness).toBe('STALE');
    expect(stale.reasons.map((r: { message: string }) => r.message).join('\n')).toContain('node_modules/.cache/tool/state: content changed');
  });
});
