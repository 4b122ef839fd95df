import Database from 'better-sqlite3';
import { existsSync, openSync, readdirSync, readFileSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { inProcess } from '../helpers/inProcess.js';
import { ObserverTracker, PATIENT } from '../helpers/observer.js';
import { cleanEnv, tempProject, type TempProject } from '../helpers/project.js';

/**
 * Page-level damage to state.db: a b-tree page in the middle of the file overwritten, the header
 * intact, so the file opens and the damage is only found by the query that reads that page.
 *
 * Every command runs through vouch in this process (test/helpers/inProcess.ts): the same store
 * code, opened and closed by each command as a process does, with its exit code and both streams.
 * An observer is a process of its own all the same.
 */

const CHECKS = [
  { name: 't', kind: 'test', command: ['node', 'check.mjs'] },
  { name: 'u', kind: 'lint', command: ['node', 'check.mjs'] },
];

function damageProject(name: string): TempProject {
  return tempProject(name, {
    'vouch.config.json': JSON.stringify({ schema: 1, checks: CHECKS }, null, 2),
    'check.mjs': 'process.exitCode = 0;\n',
    'src/a.txt': 'a\n',
  });
}

const observers = new ObserverTracker();
let cleanups: (() => void)[] = [];
afterEach(async () => {
  const problems = await observers.cleanup();
  for (const cleanup of cleanups) cleanup();
  cleanups = [];
  expect(problems, 'observers that would not stop').toEqual([]);
});

const COPIES = 150;

/**
 * Real receipts of both checks, then copies of them (as later runs would add) so that the
 * receipts, manifests and stat_cache tables span many pages. Every check is CURRENT before
 * the damage, so a CURRENT after it could only come from the damaged file.
 */
async function storeWithHistory(project: TempProject): Promise<string> {
  cleanups.push(() => project.remove());
  for (const check of ['t', 'u']) expect((await inProcess(project).vouch(['run', check])).code).toBe(0);
  const stateDb = join(project.root, '.vouch', 'state.db');
  const db = new Database(stateDb, { fileMustExist: true });
  try {
    const columns = 'check_name, definition, definition_digest, context, context_digest, manifest_digest, input_count, result, exit_code, signal, started_at, finished_at, duration_ms, log_path, reuse_eligible, reasons';
    const copy = db.prepare(`INSERT INTO receipts (run_id, ${columns}) SELECT run_id || '-copy-' || ?, ${columns} FROM receipts WHERE seq = ?`);
    const manifest = db.prepare('INSERT INTO manifests (digest, entries) VALUES (?, ?)');
    const stat = db.prepare('INSERT INTO stat_cache (path, identity, digest) VALUES (?, ?, ?)');
    db.transaction(() => {
      for (let n = 0; n < COPIES; n++) {
        copy.run(n, 1);
        copy.run(n, 2);
        // Manifests of earlier runs, and stat-cache rows of files that are gone: history, not inputs.
        manifest.run(`${String(n).padStart(4, '0')}-old`, Buffer.alloc(600, n));
        stat.run(`gone/${String(n).padStart(4, '0')}.txt`, `1:${n}:600:0`, 'f'.repeat(64));
      }
    })();
  } finally {
    db.close();
  }
  // Closed cleanly: everything is in the main file, no WAL would mask the damage.
  expect(existsSync(`${stateDb}-wal`)).toBe(false);
  expect((await inProcess(project).json(['status', '--no-observer'])).checks).toMatchObject([
    { name: 't', freshness: 'CURRENT', result: 'PASS' },
    { name: 'u', freshness: 'CURRENT', result: 'PASS' },
  ]);
  return stateDb;
}

/** Leaf pages of one table or index, in tree order (dbstat's path sorts that way). */
function leafPages(stateDb: string, name: string): number[] {
  const db = new Database(stateDb, { readonly: true, fileMustExist: true });
  try {
    const rows = db.prepare("SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf' ORDER BY path").all(name) as { pageno: number }[];
    return rows.map((row) => row.pageno);
  } finally {
    db.close();
  }
}

/** Overwrites pages with garbage, leaving their first bytes' neighbours (and the header) as they were. */
function damage(stateDb: string, pages: number[]): void {
  expect(pages.length).toBeGreaterThan(0);
  expect(Math.min(...pages)).toBeGreaterThan(1);
  const fd = openSync(stateDb, 'r+');
  try {
    for (const page of pages) writeSync(fd, Buffer.alloc(4096 - 64, 0xa5), 0, 4096 - 64, (page - 1) * 4096 + 32);
  } finally {
    closeSync(fd);
  }
}

function keptAside(project: TempProject): string {
  const kept = readdirSync(join(project.root, '.vouch')).filter((name) => name.startsWith('state.db.corrupt-') && !/-(wal|shm)$/.test(name));
  expect(kept, 'exactly one state.db.corrupt-* in .vouch').toHaveLength(1);
  return join(project.root, '.vouch', kept[0] ?? '');
}

function expectReported(stderr: string, kept: string): void {
  expect(stderr).not.toMatch(/internal error|SqliteError|\n\s+at /);
  expect(stderr).toMatch(/^vouch: .*state\.db: .*damaged/m);
  expect(stderr).toContain(`kept as ${kept}`);
}

describe('page-level damage to state.db', () => {
  it('the latest receipt on a damaged page (found after the stat cache loaded): status answers UNVERIFIED never-run, keeps the file aside and says what was lost', async () => {
    const project = damageProject('damage-receipts');
    const stateDb = await storeWithHistory(project);
    const leaves = leafPages(stateDb, 'receipts');
    expect(leaves.length).toBeGreaterThan(10);
    // The rightmost leaf holds the newest receipts: every latest-receipt lookup reads it.
    damage(stateDb, leaves.slice(-1));
    const damaged = readFileSync(stateDb);

    const status = await inProcess(project).vouch(['status', '--no-observer', '--json']);
    expect(status.code, status.stderr).toBe(0);
    const kept = keptAside(project);
    expectReported(status.stderr, kept);
    // What was lost, as far as it could be read: both checks' receipts, counted.
    expect(status.stderr).toMatch(/It held at least \d+ receipts that could still be read \(t: \d+, u: \d+\), of 302 recorded\./);
    expect(readFileSync(kept).equals(damaged)).toBe(true);
    const answer = JSON.parse(status.stdout);
    for (const check of answer.checks) {
      expect(check).toMatchObject({ freshness: 'UNVERIFIED', result: null, reuse_eligible: false, receipt: null });
      expect(check.reasons[0].code).toBe('never-run');
    }
    expect(answer.notices.join('\n')).toContain(`kept as ${kept}`);

    // The fresh store is healthy: reported once, and a run records into it.
    const run = await inProcess(project).vouch(['run', 't']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).not.toMatch(/damaged/);
    expect((await inProcess(project).json(['status', '--no-observer'])).checks).toMatchObject([
      { name: 't', freshness: 'CURRENT', result: 'PASS' },
      { name: 'u', freshness: 'UNVERIFIED', result: null },
    ]);
  });

  it('log: answers with an empty history instead of exit 70', async () => {
    const project = damageProject('damage-log');
    const stateDb = await storeWithHistory(project);
    damage(stateDb, leafPages(stateDb, 'receipts').slice(-1));
    const log = await inProcess(project).vouch(['log', '--json']);
    expect(log.code, log.stderr).toBe(0);
    expectReported(log.stderr, keptAside(project));
    const answer = JSON.parse(log.stdout);
    expect(answer.receipts).toEqual([]);
    expect(answer.notices).toHaveLength(1);
  });

  it('run --if-due: the damaged receipt is not reused; the check runs and its receipt goes to a fresh store', async () => {
    const project = damageProject('damage-run');
    const stateDb = await storeWithHistory(project);
    damage(stateDb, leafPages(stateDb, 'receipts').slice(-1));
    const run = await inProcess(project).vouch(['run', 't', '--if-due', '--no-observer', '--json']);
    expect(run.code, run.stderr).toBe(0);
    expectReported(run.stderr, keptAside(project));
    expect(JSON.parse(run.stdout).runs).toMatchObject([{ name: 't', action: 'ran', exit_code: 0 }]);
    expect((await inProcess(project).json(['status', '--no-observer'])).checks[0]).toMatchObject({ name: 't', freshness: 'CURRENT', result: 'PASS' });
  });

  it('explain: a damaged manifest page is found while explaining; the answer comes from the fresh store, never CURRENT', async () => {
    const project = damageProject('damage-explain');
    const stateDb = await storeWithHistory(project);
    damage(stateDb, leafPages(stateDb, 'manifests'));
    const explain = await inProcess(project).vouch(['explain', 't', '--no-observer', '--json']);
    expect(explain.code, explain.stderr).toBe(0);
    expectReported(explain.stderr, keptAside(project));
    const answer = JSON.parse(explain.stdout);
    expect(answer.check).toMatchObject({ freshness: 'UNVERIFIED', result: null, receipt: null });
    expect(answer.notices).toHaveLength(1);
  });

  it('a damaged stat-cache page: status rebuilds it by hashing, and nothing is CURRENT from the damaged file', async () => {
    const project = damageProject('damage-statcache');
    const stateDb = await storeWithHistory(project);
    damage(stateDb, leafPages(stateDb, 'stat_cache').slice(1, 3));
    const status = await inProcess(project).vouch(['status', '--no-observer', '--json']);
    expect(status.code, status.stderr).toBe(0);
    expectReported(status.stderr, keptAside(project));
    for (const check of JSON.parse(status.stdout).checks) expect(check).toMatchObject({ freshness: 'UNVERIFIED', result: null });
  });

  it('a damaged index page (receipts_by_check): found by the lookup, not only by table scans', async () => {
    const project = damageProject('damage-index');
    const stateDb = await storeWithHistory(project);
    damage(stateDb, leafPages(stateDb, 'receipts_by_check').slice(-1));
    const status = await inProcess(project).vouch(['status', '--no-observer', '--json']);
    expect(status.code, status.stderr).toBe(0);
    expectReported(status.stderr, keptAside(project));
    for (const check of JSON.parse(status.stdout).checks) expect(check).toMatchObject({ freshness: 'UNVERIFIED', result: null });
  });
});

describe('page-level damage and the observer', () => {
  const patient = cleanEnv({ VOUCH_OBSERVER_TIMEOUT_MS: PATIENT });

  it('the observer finds the damage: that answer is unhealthy and says so, the command scans a fresh store, and the observer answers again after', async () => {
    const project = damageProject('damage-observer');
    const stateDb = await storeWithHistory(project);
    // Below the first leaf, which the open reads: the observer starts, and finds the damage when first asked for receipts.
    damage(stateDb, leafPages(stateDb, 'receipts').slice(-1));
    observers.start(project);

    const first = await inProcess(project).vouch(['status', '--json'], { env: patient });
    expect(first.code, first.stderr).toBe(0);
    const kept = keptAside(project);
    expect(first.stderr).not.toMatch(/internal error|-32603|SqliteError/);
    expect(first.stderr).toMatch(/the observer is not healthy \(.*state\.db: it is damaged/);
    expect(first.stderr).toContain(`kept as ${kept}`);
    const firstAnswer = JSON.parse(first.stdout);
    expect(firstAnswer.observation.source).toBe('scan');
    for (const check of firstAnswer.checks) expect(check).toMatchObject({ freshness: 'UNVERIFIED', result: null });

    const second = await inProcess(project).vouch(['status', '--json'], { env: patient });
    expect(second.code, second.stderr).toBe(0);
    const secondAnswer = JSON.parse(second.stdout);
    expect(secondAnswer.observation.source).toBe('observer');
    for (const check of secondAnswer.checks) expect(check).toMatchObject({ freshness: 'UNVERIFIED', result: null });
    expect((await inProcess(project).vouch(['run', 't'])).code).toBe(0);
    expect(JSON.parse((await inProcess(project).vouch(['status', 't', '--json'], { env: patient })).stdout)).toMatchObject({
      observation: { source: 'observer' },
      checks: [{ name: 't', freshness: 'CURRENT', result: 'PASS' }],
    });
  });

  it('another process keeps the damaged file aside: the observer stops reading it, and answers from the fresh store', async () => {
    const project = damageProject('damage-observer-elsewhere');
    const stateDb = await storeWithHistory(project);
    // Damage only explain reads: the observer reads receipts from this file without noticing.
    damage(stateDb, leafPages(stateDb, 'manifests'));
    observers.start(project);
    expect(JSON.parse((await inProcess(project).vouch(['status', '--json'], { env: patient })).stdout)).toMatchObject({
      observation: { source: 'observer' },
      checks: [{ freshness: 'CURRENT' }, { freshness: 'CURRENT' }],
    });

    const explain = await inProcess(project).vouch(['explain', 't', '--no-observer', '--json']);
    expect(explain.code, explain.stderr).toBe(0);
    keptAside(project);

    // The kept file's receipts are no longer evidence, whoever holds it open.
    const after = await inProcess(project).vouch(['status', '--json'], { env: patient });
    expect(after.code, after.stderr).toBe(0);
    const answer = JSON.parse(after.stdout);
    expect(answer.observation.source).toBe('observer');
    for (const check of answer.checks) expect(check).toMatchObject({ freshness: 'UNVERIFIED', result: null });
  });
});
