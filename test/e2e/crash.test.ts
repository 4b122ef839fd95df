import Database from 'better-sqlite3';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { constants } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { inProcess } from '../helpers/inProcess.js';
import { isRunning } from '../helpers/observer.js';
import { cleanEnv, spawnVouch, tempProject, type TempProject } from '../helpers/project.js';
import { mulberry32, testSeed, withSeed } from '../helpers/seed.js';

/*
 * vouch killed, interrupted and racing itself: every `vouch run` here is a process of its own. The
 * questions asked afterwards (status, log) run in this process, through the CLI's dispatch
 * (test/helpers/inProcess.ts): they are about the store a process left, not about a process.
 */

/** A vouch process started without waiting, with its output collected as it comes. */
interface Running {
  pid: number;
  kill(signal: NodeJS.Signals): void;
  readonly stdout: string;
  readonly stderr: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function start(root: string, args: string[], env: NodeJS.ProcessEnv = cleanEnv()): Running {
  const child = spawnVouch(root, args, env);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal })),
  );
  return {
    pid: child.pid ?? -1,
    kill: (signal) => child.kill(signal),
    get stdout() {
      return stdout;
    },
    get stderr() {
      return stderr;
    },
    exited,
  };
}

async function until(condition: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await delay(15);
  }
}

function config(checks: object[]): string {
  return JSON.stringify({ schema: 1, checks }, null, 2);
}

/** Check scripts write their markers under out/, which .gitignore keeps out of every check's inputs. */
const IGNORE_OUT = 'out/\n';

function nodeCheck(name: string, script: string, extra: object = {}) {
  return { name, kind: 'custom', command: ['node', script], ...extra };
}

/** Opens the store the way a reader would and checks it is whole: pages, receipts and their manifests. */
function expectStoreConsistent(stateDb: string): number {
  const db = new Database(stateDb, { readonly: true, fileMustExist: true });
  try {
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    const version = db.pragma('user_version', { simple: true }) as number;
    // Migrations run in one transaction: a kill leaves either no schema or all of it.
    const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((row) => row.name);
    if (version === 0) {
      expect(tables).not.toContain('receipts');
      return 0;
    }
    expect(tables).toEqual(expect.arrayContaining(['receipts', 'manifests', 'stat_cache', 'meta']));
    const orphans = db
      .prepare('SELECT run_id FROM receipts r WHERE NOT EXISTS (SELECT 1 FROM manifests m WHERE m.digest = r.manifest_digest)')
      .all();
    expect(orphans).toEqual([]);
    return (db.prepare('SELECT count(*) AS n FROM receipts').get() as { n: number }).n;
  } finally {
    db.close();
  }
}

let project: TempProject | undefined;
afterEach(() => {
  project?.remove();
  project = undefined;
});

// The kill moments are drawn from VOUCH_SEED, or a fixed seed (test/helpers/seed.ts); the check's own sleep stays random.
const KILL_SEED = testSeed(import.meta.url, 9);

describe('kill -9 at any moment of vouch run', () => {
  it('leaves a consistent store, a working status and a recoverable lock', { timeout: 120_000 }, () =>
    withSeed(KILL_SEED, async () => {
      // The check marks that it started, then sleeps a random few hundred ms.
      const slow = `import { mkdirSync, writeFileSync } from 'node:fs';
mkdirSync('out', { recursive: true });
writeFileSync('out/started-' + process.pid, '');
setTimeout(() => {}, 100 + Math.floor(Math.random() * 300));
`;
      project = tempProject('crash-kill9', {
        'vouch.config.json': config([nodeCheck('slow', 'slow.mjs')]),
        'slow.mjs': slow,
        '.gitignore': IGNORE_OUT,
        'src/a.txt': 'a\n',
      });
      const root = project.root;
      const stateDb = join(root, '.vouch', 'state.db');
      const lock = join(root, '.vouch', 'locks', 'slow.lock');
      const out = join(root, 'out');
      const iterations = 15;
      const moment = mulberry32(KILL_SEED.value);
      let receiptsSoFar = 0;
      let recoveredStaleLock = false;

      for (let i = 0; i < iterations; i++) {
        const last = i === iterations - 1;
        // The killed run's check ends by its group reaper, a moment after vouch: until it has, it
        // could make out/ again (and mark it) between the two lines below.
        for (const marker of existsSync(out) ? readdirSync(out) : []) {
          const pid = Number(marker.replace('started-', ''));
          if (Number.isInteger(pid) && pid > 0) await until(() => !isRunning(pid), `the killed run's check (pid ${pid}) to end`);
        }
        rmSync(out, { recursive: true, force: true });
        mkdirSync(out);
        const running = start(root, ['run', 'slow']);
        if (last) {
          // Deterministically while the check runs, so the lock is surely held by the dead process.
          await until(() => readdirSync(out).some((name) => name.startsWith('started-')), 'the check to start');
        } else {
          // Random, but spread over 0-800 ms: before the spawn, while the check runs, and just after it exits.
          const bucket = 800 / (iterations - 1);
          await delay(Math.floor(i * bucket + moment() * bucket));
        }
        running.kill('SIGKILL');
        const { code, signal } = await running.exited;
        if (signal !== 'SIGKILL') expect(code, `vouch finished before the kill:\n${running.stderr}`).toBe(0);

        if (existsSync(stateDb)) {
          const count = expectStoreConsistent(stateDb);
          // Receipts are never lost: a kill may add one, never remove one.
          expect(count).toBeGreaterThanOrEqual(receiptsSoFar);
          receiptsSoFar = count;
        }

        if (i % 5 === 4) {
          const lockLeft = existsSync(lock);
          if (last) expect(lockLeft, 'a run killed mid-check leaves its lock behind').toBe(true);
          recoveredStaleLock ||= lockLeft;

          const status = await inProcess(project).vouch(['status', '--json']);
          expect(status.code, status.stderr).toBe(0);
          const report = JSON.parse(status.stdout);
          expect(report.schema).toBe(1);
          expect(report.checks.map((check: { name: string }) => check.name)).toEqual(['slow']);

          const started = Date.now();
          const next = project.vouch(['run', 'slow'], { timeout: 30_000 });
          expect(next.signal, `the next run hung:\n${next.stderr}`).toBeNull();
          expect(next.code, next.stderr).toBe(0);
          // A dead holder is recovered at once, not after a lock timeout.
          expect(Date.now() - started).toBeLessThan(15_000);
          expect(next.stderr).not.toMatch(/waiting for slow/);
          expect(existsSync(lock)).toBe(false);

          const after = await inProcess(project).json(['status']);
          expect(after.checks[0], JSON.stringify(after.checks[0])).toMatchObject({ name: 'slow', freshness: 'CURRENT', result: 'PASS', reuse_eligible: true });
          receiptsSoFar = expectStoreConsistent(stateDb);
          expect(receiptsSoFar).toBeGreaterThanOrEqual(1);
        }
      }
      expect(recoveredStaleLock).toBe(true);
    }));
});

describe('locks left behind', () => {
  function lockProject() {
    const p = tempProject('crash-lock', { 'vouch.config.json': config([nodeCheck('t', 'check.mjs')]), 'check.mjs': 'process.exitCode = 0;\n' });
    mkdirSync(join(p.root, '.vouch', 'locks'), { recursive: true });
    return p;
  }

  it('a lock file a crash left empty (created, never written) is recovered after a short grace', () => {
    project = lockProject();
    writeFileSync(join(project.root, '.vouch', 'locks', 't.lock'), '');
    const started = Date.now();
    const run = project.vouch(['run', 't'], { timeout: 30_000 });
    expect(run.signal, `the run hung:\n${run.stderr}`).toBeNull();
    expect(run.code, run.stderr).toBe(0);
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(existsSync(join(project.root, '.vouch', 'locks', 't.lock'))).toBe(false);
  });

  it('a lock naming a live pid that belongs to another process now (pid reuse) is not waited on', () => {
    project = lockProject();
    const holder = { pid: process.pid, runId: '20000101T000000Z-dead00', check: 't', startedAt: Date.now() - 60_000, processStart: '1' };
    writeFileSync(join(project.root, '.vouch', 'locks', 't.lock'), JSON.stringify(holder));
    const run = project.vouch(['run', 't'], { timeout: 30_000 });
    expect(run.signal, `the run hung:\n${run.stderr}`).toBeNull();
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).not.toMatch(/waiting for t/);
  });
});

describe('signals', () => {
  // The check records the signal it got, then ends the way the variant says.
  const signalCheck = `import { writeFileSync } from 'node:fs';
const how = process.argv[2];
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    writeFileSync('out/got-' + sig, String(process.pid));
    if (how === 'exit0') process.exit(0);
    process.removeAllListeners(sig);
    process.kill(process.pid, sig);
  });
}
console.log('ready');
setInterval(() => {}, 1000);
`;

  function signalProject() {
    return tempProject('crash-signal', {
      'vouch.config.json': config([
        { name: 'dies', kind: 'custom', command: ['node', 'signal.mjs', 'reraise'] },
        { name: 'exits0', kind: 'custom', command: ['node', 'signal.mjs', 'exit0'] },
      ]),
      'signal.mjs': signalCheck,
      '.gitignore': IGNORE_OUT,
      'out/.keep': '',
    });
  }

  async function interrupt(p: TempProject, check: string, signal: 'SIGINT' | 'SIGTERM') {
    const running = start(p.root, ['run', check]);
    await until(() => running.stdout.includes('ready'), 'the check to install its handlers');
    running.kill(signal);
    const exit = await running.exited;
    return { running, exit };
  }

  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    it(`${signal} is forwarded to the check, recorded as an interrupted FAIL, and vouch exits 128+${constants.signals[signal]}`, async () => {
      project = signalProject();
      const { running, exit } = await interrupt(project, 'dies', signal);
      expect(readFileSync(join(project.root, 'out', `got-${signal}`), 'utf8')).toMatch(/^\d+$/);
      expect(exit.signal).toBeNull();
      expect(exit.code, running.stderr).toBe(128 + constants.signals[signal]);
      expect(running.stderr).toMatch(new RegExp(`dies FAIL \\(killed by ${signal}\\)`));

      const [receipt] = (await inProcess(project).json(['log', 'dies'])).receipts;
      expect(receipt).toMatchObject({ check: 'dies', result: 'FAIL', reuse_eligible: false, signal, exit_code: null });
      expect(receipt.reasons).toContainEqual({ code: 'interrupted', message: expect.stringContaining(signal) });
    });
  }

  // A check that handles the signal and exits 0 was still cut short: the run proves nothing,
  // and a script around "vouch run" must stop as it would for any interrupted command.
  it('a check that catches SIGINT and exits 0 is still an interrupted FAIL, and vouch exits 130', async () => {
    project = signalProject();
    const { running, exit } = await interrupt(project, 'exits0', 'SIGINT');
    expect(existsSync(join(project.root, 'out', 'got-SIGINT'))).toBe(true);
    const [receipt] = (await inProcess(project).json(['log', 'exits0'])).receipts;
    expect(receipt.reasons.map((r: { code: string }) => r.code)).toContain('interrupted');
    expect(receipt.reuse_eligible).toBe(false);
    expect({ result: receipt.result, exit_code: exit.code }, running.stderr).toEqual({ result: 'FAIL', exit_code: 130 });
  });
});

describe('concurrent runs', () => {
  it('a second run of the same check waits for the first, says so, and never overlaps it', async () => {
    // The check holds on until out/go exists, so the second run surely arrives while the first runs.
    const spans = `import { appendFileSync, existsSync } from 'node:fs';
appendFileSync('out/spans', 'start ' + process.pid + ' ' + Date.now() + '\\n');
console.log('started');
const deadline = Date.now() + 20000;
const poll = setInterval(() => {
  if (!existsSync('out/go') && Date.now() < deadline) return;
  clearInterval(poll);
  setTimeout(() => appendFileSync('out/spans', 'end ' + process.pid + ' ' + Date.now() + '\\n'), 100);
}, 20);
`;
    project = tempProject('crash-same', {
      'vouch.config.json': config([nodeCheck('serial', 'spans.mjs')]),
      'spans.mjs': spans,
      '.gitignore': IGNORE_OUT,
      'out/.keep': '',
    });
    const first = start(project.root, ['run', 'serial']);
    await until(() => first.stdout.includes('started'), 'the first check to start');
    const firstRunId = /running serial: .* \(run (\S+)\)/.exec(first.stderr)?.[1];
    expect(firstRunId).toBeDefined();
    const second = start(project.root, ['run', 'serial']);
    await until(() => /waiting for serial/.test(second.stderr), 'the second run to say it waits');
    // Still waiting a moment later: it has not slipped past the lock.
    await delay(300);
    expect(second.stderr).not.toMatch(/running serial/);
    writeFileSync(join(project.root, 'out', 'go'), '');
    const [a, b] = await Promise.all([first.exited, second.exited]);
    expect(a.code, first.stderr).toBe(0);
    expect(b.code, second.stderr).toBe(0);
    expect(second.stderr).toContain(`waiting for serial: run ${firstRunId} (pid ${first.pid})`);

    const receipts = (await inProcess(project).json(['log', 'serial'])).receipts;
    expect(receipts).toHaveLength(2);
    expect(receipts.every((r: { result: string }) => r.result === 'PASS')).toBe(true);

    const lines = readFileSync(join(project.root, 'out', 'spans'), 'utf8').trim().split('\n').map((line) => line.split(' '));
    expect(lines.map(([what]) => what)).toEqual(['start', 'end', 'start', 'end']);
    expect(lines[0]?.[1]).toBe(lines[1]?.[1]);
    expect(lines[2]?.[1]).toBe(lines[3]?.[1]);
    expect(Number(lines[2]?.[2])).toBeGreaterThanOrEqual(Number(lines[1]?.[2]));
  });

  it('different checks run in parallel; one writing into the other\'s inputs makes that receipt ineligible', async () => {
    // alpha waits (up to 20 s) until its own input a/data.txt changes; beta is what changes it.
    const alpha = `import { readFileSync } from 'node:fs';
const before = readFileSync('a/data.txt', 'utf8');
console.log('started');
const deadline = Date.now() + 20000;
const poll = setInterval(() => {
  if (readFileSync('a/data.txt', 'utf8') !== before) { clearInterval(poll); setTimeout(() => process.exit(0), 100); }
  else if (Date.now() > deadline) process.exit(3);
}, 20);
`;
    const beta = `import { writeFileSync } from 'node:fs';
writeFileSync('a/data.txt', 'written by beta while alpha runs\\n');
`;
    project = tempProject('crash-parallel', {
      'vouch.config.json': config([
        nodeCheck('alpha', 'alpha.mjs', { inputs: ['a/**', 'alpha.mjs'] }),
        nodeCheck('beta', 'beta.mjs', { inputs: ['b/**', 'beta.mjs'] }),
      ]),
      'alpha.mjs': alpha,
      'beta.mjs': beta,
      'a/data.txt': 'original\n',
      'b/data.txt': 'b\n',
    });
    const runAlpha = start(project.root, ['run', 'alpha']);
    await until(() => runAlpha.stdout.includes('started'), 'alpha to start');
    const runBeta = start(project.root, ['run', 'beta']);
    const [a, b] = await Promise.all([runAlpha.exited, runBeta.exited]);
    expect(b.code, runBeta.stderr).toBe(0);
    expect(a.code, runAlpha.stderr).toBe(0);
    // Different checks never wait for each other.
    expect(runBeta.stderr).not.toMatch(/waiting for/);

    const receipts = (await inProcess(project).json(['log'])).receipts as { check: string; result: string; reuse_eligible: boolean; reasons: { code: string; message: string }[] }[];
    const alphaReceipt = receipts.find((r) => r.check === 'alpha');
    const betaReceipt = receipts.find((r) => r.check === 'beta');
    expect(betaReceipt).toMatchObject({ result: 'PASS', reuse_eligible: true, reasons: [] });
    expect(alphaReceipt).toMatchObject({ result: 'PASS', reuse_eligible: false });
    expect(alphaReceipt?.reasons).toContainEqual({ code: 'inputs-changed-during-run', message: expect.stringContaining('a/data.txt') });

    const status = await inProcess(project).json(['status']);
    const alphaStatus = status.checks.find((c: { name: string }) => c.name === 'alpha');
    // Not CURRENT to a reader of freshness alone: the receipt cannot say what it checked.
    expect(alphaStatus).toMatchObject({ freshness: 'STALE', result: 'PASS', reuse_eligible: false });
    expect(alphaStatus.reasons.map((r: { code: string }) => r.code)).toContain('inputs-changed-during-run');
  }, 60_000);

  it('the latest receipt wins when a PASS and a FAIL finish close together', async () => {
    project = tempProject('crash-latest', {
      'vouch.config.json': config([nodeCheck('flaky', 'flaky.mjs', { env: ['VOUCH_TEST_FAIL'] })]),
      'flaky.mjs': "console.log('started');\nprocess.exitCode = process.env.VOUCH_TEST_FAIL ? 1 : 0;\n",
    });
    const pass = start(project.root, ['run', 'flaky']);
    await until(() => /running flaky/.test(pass.stderr), 'the passing run to start');
    // Started while the PASS run holds the lock: it records right after it.
    const fail = start(project.root, ['run', 'flaky'], cleanEnv({ VOUCH_TEST_FAIL: '1' }));
    const [p, f] = await Promise.all([pass.exited, fail.exited]);
    expect(p.code, pass.stderr).toBe(0);
    expect(f.code, fail.stderr).toBe(1);

    const receipts = (await inProcess(project).json(['log', 'flaky'])).receipts;
    expect(receipts.map((r: { result: string }) => r.result)).toEqual(['FAIL', 'PASS']);

    const failing = await inProcess(project).json(['status'], { env: cleanEnv({ VOUCH_TEST_FAIL: '1' }) });
    expect(failing.checks[0]).toMatchObject({ freshness: 'CURRENT', result: 'FAIL', reuse_eligible: false });
    expect(failing.checks[0].reasons.map((r: { code: string }) => r.code)).toContain('failed');
    // Without the variable the context differs from the latest receipt: STALE, and still its FAIL.
    const passingEnv = await inProcess(project).json(['status']);
    expect(passingEnv.checks[0]).toMatchObject({ freshness: 'STALE', result: 'FAIL', reuse_eligible: false });
    expect(passingEnv.checks[0].reasons.map((r: { code: string }) => r.code)).toContain('context-changed');
  }, 60_000);
});
