import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { traceAvailability } from '../../src/exec/trace/tracer.js';
import { configText, statusOf } from '../helpers/answers.js';
import { cleanEnv, tempProject, type TempProject } from '../helpers/project.js';

/*
 * A check that decides from a file's metadata alone: `eslint --cache` and `prettier --cache` (a
 * cache of each file's size and mtime: an unchanged file is not read again), `make`, `tsc -b`'s
 * up-to-date check. With a warm cache its traced run only stats the sources; the next run, after
 * an edit, sees another size or mtime, reads the file and answers from its new bytes. Held to the
 * ground truth: a CURRENT receipt is one whose check, run again, prints what its traced run
 * printed.
 */

const availability = traceAvailability();
const TITLE = availability.available ? 'a traced check that decides from stat alone' : `a traced check that decides from stat alone (SKIPPED: tracing cannot run here: ${availability.code}: ${availability.message})`;

/** A linter with a cache keyed by size and mtime, as file-entry-cache (eslint's) keeps it; "lints" by looking for TODO. */
const LINTER = `import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
const CACHE = 'node_modules/.cache/lint/cache.json';
let cache = {};
try {
  cache = JSON.parse(readFileSync(CACHE, 'utf8'));
} catch {}
const next = {};
const results = [];
for (const file of ['src/a.js', 'src/b.js']) {
  const { size, mtimeMs } = statSync(file);
  const hit = cache[file];
  const verdict = hit && hit.size === size && hit.mtimeMs === mtimeMs ? hit.verdict : readFileSync(file, 'utf8').includes('TODO') ? 'fail' : 'ok';
  next[file] = { size, mtimeMs, verdict };
  results.push(file + ': ' + verdict);
}
mkdirSync('node_modules/.cache/lint', { recursive: true });
writeFileSync(CACHE, JSON.stringify(next));
process.stdout.write(JSON.stringify({ results }) + '\\n');
process.exit(results.some((line) => line.endsWith('fail')) ? 1 : 0);
`;

describe(TITLE, () => {
  let project: TempProject;
  let printed: string;
  const linted = (stdout: string) => stdout.split('\n').find((line) => line.startsWith('{"results"')) ?? '';

  beforeAll(async () => {
    if (!availability.available) return;
    project = tempProject('traced-stat-only', {
      'lint.mjs': LINTER,
      'vouch.config.json': configText([{ name: 'lint', kind: 'lint', command: ['node', 'lint.mjs'], mode: 'traced' }]),
      '.gitignore': 'node_modules/\n',
      'src/a.js': 'export const a = 1;\n',
      'src/b.js': 'export const b = 2;\n',
    });
    // A warm cache, as any second run of eslint --cache finds; the state dir made outside the run's clock slack.
    expect(spawnSync(process.execPath, ['lint.mjs'], { cwd: project.root, env: cleanEnv() }).status).toBe(0);
    project.vouch(['status']);
    await new Promise((resolve) => setTimeout(resolve, 150));
    const run = project.vouch(['run', 'lint']);
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    printed = linted(run.stdout);
  });

  afterAll(() => project?.remove());

  it.skipIf(!availability.available)('an edit to a source the run only stat-ed (its size and mtime in the cache) is not CURRENT, or the check prints the same again', () => {
    expect(statusOf(project, 'lint').freshness).toBe('CURRENT');
    writeFileSync(join(project.root, 'src/a.js'), 'export const a = 1; // TODO\n');
    const found = statusOf(project, 'lint');
    if (found.freshness !== 'CURRENT') return;
    // After the status: the rerun rewrites the cache, which the receipt holds as the run left it.
    const again = spawnSync(process.execPath, ['lint.mjs'], { cwd: project.root, env: cleanEnv(), encoding: 'utf8' });
    expect(linted(again.stdout), `CURRENT, but the check now prints otherwise and exits ${again.status} (a false CURRENT); reasons: ${JSON.stringify(found.reasons)}`).toBe(printed);
  });
});
