import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI, cleanEnv, tempProject, type TempProject } from '../helpers/project.js';

/**
 * A state dir on a 1 MB tmpfs, filled to the brim. The tmpfs lives only inside one
 * `unshare -rm` (a user and mount namespace, no real root needed), so each test runs its
 * whole story (record receipts, fill the disk, ask) as one shell script inside it.
 */
function tmpfsUnavailable(): string | null {
  const probe = mkdtempSync(join(tmpdir(), 'vouch-tmpfs-probe-'));
  try {
    const result = spawnSync('unshare', ['-rm', 'sh', '-c', `mount -t tmpfs -o size=1m tmpfs '${probe}' && touch '${probe}/x'`], { encoding: 'utf8' });
    if (result.error) return `unshare cannot run here (${result.error.message})`;
    if (result.status !== 0) return `unshare -rm with a tmpfs mount fails here: ${result.stderr.trim()}`;
    return null;
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
}
const UNAVAILABLE = tmpfsUnavailable();
if (UNAVAILABLE) console.warn(`skipping the full-disk tests: ${UNAVAILABLE}`);

const CONFIG = JSON.stringify({ schema: 1, checks: [{ name: 't', kind: 'test', command: ['node', 'check.mjs'] }] });

let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups) cleanup();
  cleanups = [];
});

interface Answer {
  code: number;
  stdout: string;
  stderr: string;
  json(): any;
}

/**
 * Runs `steps` (shell, with `vouch` a function running the built CLI with --state-dir on the
 * tmpfs) inside the namespace. `ask NAME ARGS...` records a command's answer for the test.
 */
function onFullDisk(project: TempProject, steps: string): Record<string, Answer> {
  const state = join(project.root, 'state');
  const out = join(project.root, 'out');
  mkdirSync(state);
  mkdirSync(out);
  const script = `
set -e
mount -t tmpfs -o size=1m tmpfs '${state}'
vouch() { '${process.execPath}' '${CLI}' "$@" --state-dir '${state}'; }
ask() { name=$1; shift; set +e; vouch "$@" >'${out}'/$name.out 2>'${out}'/$name.err; echo $? >'${out}'/$name.code; set -e; }
fill() { head -c 4000000 /dev/zero >'${state}/fill' 2>/dev/null || true; }
${steps}
`;
  const result = spawnSync('unshare', ['-rm', 'sh', '-c', script], { cwd: project.root, env: cleanEnv(), encoding: 'utf8', timeout: 120_000 });
  expect(result.status, result.stderr).toBe(0);
  const answers: Record<string, Answer> = {};
  for (const name of steps.matchAll(/\bask (\S+)/g)) {
    const key = name[1] ?? '';
    const answer = {
      code: Number(readFileSync(join(out, `${key}.code`), 'utf8')),
      stdout: readFileSync(join(out, `${key}.out`), 'utf8'),
      stderr: readFileSync(join(out, `${key}.err`), 'utf8'),
      json() {
        try {
          return JSON.parse(answer.stdout);
        } catch {
          throw new Error(`${key} printed no JSON (exit ${answer.code}):\n${answer.stdout}\n${answer.stderr}`);
        }
      },
    };
    answers[key] = answer;
  }
  return answers;
}

function project(name: string): TempProject {
  // state/ and out/ are the test's own: ignored, so they are no check's input.
  const made = tempProject(name, { 'vouch.config.json': CONFIG, 'check.mjs': 'process.exitCode = 0;\n', 'src/a.txt': 'a\n', '.gitignore': 'state/\nout/\n' });
  cleanups.push(() => made.remove());
  return made;
}

function expectNotAPermissionError(answer: Answer): void {
  expect(answer.stderr).not.toMatch(/permission/i);
  expect(answer.stderr).not.toMatch(/internal error|SqliteError|\n\s+at /);
}

describe.skipIf(UNAVAILABLE !== null)('a full disk under the state dir', () => {
  it('status, log and explain answer from the receipts, saying the disk is full and nothing was saved', () => {
    const answers = onFullDisk(
      project('full-answer'),
      `
vouch run t >/dev/null 2>&1
vouch run t >/dev/null 2>&1
fill
ask status status --no-observer --json
ask log log --json
ask explain explain t --no-observer --json
echo changed > src/a.txt
ask stale status --no-observer --json
`,
    );
    for (const [name, answer] of Object.entries(answers)) {
      expect(answer.code, `${name}: ${answer.stderr}`).toBe(0);
      expectNotAPermissionError(answer);
      expect(answer.stderr, name).toMatch(/^vouch: the disk holding the state dir .* is full/m);
      expect(answer.json().notices.join('\n'), name).toMatch(/is full/);
    }
    expect(answers.status?.json().checks).toMatchObject([{ name: 't', freshness: 'CURRENT', result: 'PASS' }]);
    expect(answers.log?.json().receipts).toHaveLength(2);
    expect(answers.explain?.json().check).toMatchObject({ freshness: 'CURRENT', result: 'PASS' });
    expect(answers.stale?.json().checks).toMatchObject([{ name: 't', freshness: 'STALE', result: 'PASS' }]);
  });

  it('an observer-style connection holding the WAL index open: status still answers, skipping the stat-cache save', () => {
    const answers = onFullDisk(
      project('full-held'),
      `
vouch run t >/dev/null 2>&1
# Another process keeps the database open, so its -shm exists and a writable open succeeds.
'${process.execPath}' -e "const D = require('${join(process.cwd(), 'node_modules', 'better-sqlite3')}'); const db = new D(process.argv[1]); db.prepare('SELECT 1 FROM receipts').get(); setTimeout(() => {}, 20000)" "$PWD/state/state.db" &
holder=$!
sleep 1
fill
echo changed > src/a.txt
ask stale status --no-observer --json
kill $holder
`,
    );
    const stale = answers.stale!;
    expect(stale.code, stale.stderr).toBe(0);
    expectNotAPermissionError(stale);
    expect(stale.json().checks).toMatchObject([{ name: 't', freshness: 'STALE', result: 'PASS' }]);
    expect(stale.stderr).toMatch(/^vouch: the disk holding the state dir .* is full/m);
  });

  it('a store that cannot be created at all: exit 74, disk-full, naming the state dir, never "fix its permissions"', () => {
    const made = project('full-empty');
    const answers = onFullDisk(
      made,
      `
fill
ask status status --no-observer --json
ask run run t --json
`,
    );
    for (const [name, answer] of Object.entries(answers)) {
      expect(answer.code, `${name}: ${answer.stderr}`).toBe(74);
      expectNotAPermissionError(answer);
      const error = answer.json().error;
      expect(error.code, name).toBe('disk-full');
      expect(error.message).toContain(join(made.root, 'state'));
      expect(error.message).toMatch(/full/);
      expect(error.message).toMatch(/free space|--state-dir/);
    }
  });

  it('a damaged store on a full disk: kept aside, and the error (74) says so, since no fresh store can be started', () => {
    const made = project('full-damaged');
    const state = join(made.root, 'state');
    const answers = onFullDisk(
      made,
      `
vouch run t >/dev/null 2>&1
printf 'this is not an SQLite header at all' | dd of='${state}/state.db' bs=1 seek=0 conv=notrunc 2>/dev/null
fill
ask status status --no-observer --json
ls '${state}' > '${join(made.root, 'out', 'listing')}'
`,
    );
    const status = answers.status!;
    expectNotAPermissionError(status);
    expect(status.code, status.stderr).toBe(74);
    const error = status.json().error;
    expect(error.code).toBe('disk-full');
    expect(error.message).toMatch(/state\.db: .*It was kept as .*state\.db\.corrupt-\S+, but no new one could be started/);
    const kept = readFileSync(join(made.root, 'out', 'listing'), 'utf8').split('\n').filter((name) => name.startsWith('state.db.corrupt-'));
    expect(kept.length).toBeGreaterThan(0);
  });

  it('run on a full disk with receipts: never "fix its permissions"; a check that could leave no receipt is not started: disk-full (74)', () => {
    const answers = onFullDisk(
      project('full-run'),
      `
vouch run t >/dev/null 2>&1
fill
echo changed > src/a.txt
ask run run t --no-observer --json
`,
    );
    const run = answers.run!;
    expectNotAPermissionError(run);
    // The store opens only to read, so the check, which could leave no receipt, is not started.
    expect(run.code, run.stderr).toBe(74);
    expect(run.json().error.code).toBe('disk-full');
  });
});
