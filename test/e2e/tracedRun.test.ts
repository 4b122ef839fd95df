import { spawnSync } from 'node:child_process';
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { configText, type Json } from '../helpers/answers.js';
import { claudeBash } from '../helpers/hookInput.js';
import { expectCurrentIn, inProcess, statusIn } from '../helpers/inProcess.js';
import { until } from '../helpers/observer.js';
import { CLI, cleanEnv, tempProject, type TempProject } from '../helpers/project.js';
import { newestChangeMs, SETTLE_MS } from '../helpers/settle.js';

/*
 * A traced check through the CLI: vouch run records what the check read, and status, --if-due
 * and the observer answer from that, not from the declared globs. Skipped where strace is
 * missing (CI installs it), except the fallback, which needs no strace.
 *
 * Runs and questions run in this process (test/helpers/inProcess.ts): the same commands, traced
 * runs included, without a Node start each. The hook and the observer (vouch start) are processes
 * of their own, and so is the fallback's run: whether strace can run is probed once per process,
 * with that process's PATH.
 */

const STRACE = process.platform === 'linux' && spawnSync('strace', ['-V']).status === 0;
const TITLE = STRACE ? 'a traced check through the CLI' : 'a traced check through the CLI (SKIPPED: strace is not on PATH; apt-get install strace)';

let outsideDir: string;
let outside: string;
const projects: TempProject[] = [];

beforeAll(() => {
  outsideDir = realpathSync(mkdtempSync(join(tmpdir(), 'vouch-traced-outside-')));
  outside = join(outsideDir, 'shared.json');
});

afterAll(() => rmSync(outsideDir, { recursive: true, force: true }));

afterEach(async () => {
  for (const project of projects.splice(0)) {
    await inProcess(project).vouch(['stop']);
    project.remove();
  }
});

/** A check that reads a tracked source, an ignored .env, a file outside the root, lists a directory and probes a path. */
function tracedProject(): TempProject {
  writeFileSync(outside, '{"shared":1}');
  const project = tempProject('traced', {
    '.gitignore': '.vouch/\n.env\n',
    '.env': 'SECRET=1\n',
    'README.md': '# readme\n',
    'src/a.ts': 'export const a = 1;\n',
    'fixtures/one.json': '{}',
    'check.mjs': `import fs from 'node:fs';
fs.readFileSync('src/a.ts'); fs.readFileSync('.env'); fs.readFileSync(${JSON.stringify(outside)});
fs.readdirSync('fixtures'); fs.existsSync('src/a.local.ts');
`,
    'vouch.config.json': configText([{ name: 'check', kind: 'test', command: ['node', 'check.mjs'], mode: 'traced' }]),
  });
  projects.push(project);
  return project;
}

/**
 * A traced run takes a file it read whose ctime is not before its start, less a clock slack of
 * 20 ms (fs/runEvidence.ts), for one changed while it ran; and an observer that follows a run does
 * the same within 50 ms (core/identity.ts). A run through the CLI starts long after the test's last
 * write (a Node start and vouch's loading); one in this process may start a few milliseconds after
 * it. So a run in this process first waits until nothing in the project, or the file outside it,
 * changed within SETTLE_MS: the edit is then one made before the run, as the test means it.
 */


async function settled(project: TempProject): Promise<void> {
  const newest = Math.max(newestChangeMs(project.root), lstatSync(outside).ctimeMs);
  await until(() => Date.now() > newest + SETTLE_MS, `the last edit to be ${SETTLE_MS} ms old`, 5_000, 5);
}

/** `vouch ARGS` in this process, once the last edit is settled. */
async function runIn(project: TempProject, args: string[]) {
  await settled(project);
  return await inProcess(project).vouch(args);
}

async function run(project: TempProject): Promise<Json> {
  const result = await runIn(project, ['run', 'check', '--json']);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout);
}

/** A status question, in this process. */
const statusOf = (p: TempProject, check: string, env?: NodeJS.ProcessEnv) => statusIn(inProcess(p), check, env);
const expectCurrent = (p: TempProject, check: string, env?: NodeJS.ProcessEnv) => expectCurrentIn(inProcess(p), check, env);

const reasonText = (status: Json) => status.reasons.map((r: Json) => `${r.code}: ${r.message}`).join('\n');

describe.skipIf(!STRACE)(TITLE, () => {
  it('is CURRENT through edits to files it never read, and STALE, naming the file, on each it did', async () => {
    const p = tracedProject();
    expect((await run(p)).runs[0].receipt.evidence).toEqual({ mode: 'traced', notes: [{ code: 'read-outside-inputs', message: expect.stringContaining('.env') }] });
    await expectCurrent(p, 'check');
    p.write('README.md', '# edited\n');
    p.write('CLAUDE.md', '# agents\n');
    p.write('docs/new.md', 'new');
    await expectCurrent(p, 'check');
    for (const [path, edit, restore, named] of [
      ['.env', 'SECRET=2\n', 'SECRET=1\n', /\.env: content changed/],
      ['src/a.ts', 'export const a = 2;\n', 'export const a = 1;\n', /src\/a\.ts: content changed/],
      ['fixtures/two.json', '{}', null, /fixtures: entries added, removed or changed kind/],
      ['src/a.local.ts', '', null, /src\/a\.local\.ts: absent → a file/],
    ] as const) {
      p.write(path, edit);
      const stale = await statusOf(p, 'check');
      expect(stale.freshness, path).toBe('STALE');
      expect(reasonText(stale)).toMatch(named);
      if (restore === null) rmSync(join(p.root, path));
      else p.write(path, restore);
      await expectCurrent(p, 'check');
    }
    writeFileSync(outside, '{"shared":2}');
    expect(reasonText(await statusOf(p, 'check'))).toContain(`${outside}: content changed`);
    writeFileSync(outside, '{"shared":1}');
    await expectCurrent(p, 'check');
  });

  it('skips with --if-due only while what it read is unchanged', async () => {
    const p = tracedProject();
    await run(p);
    p.write('README.md', '# edited\n');
    const skipped = await runIn(p, ['run', 'check', '--if-due']);
    expect(skipped.code).toBe(0);
    expect(skipped.stdout + skipped.stderr).toMatch(/skipped check/);
    p.write('.env', 'SECRET=3\n');
    const ran = await runIn(p, ['run', 'check', '--if-due']);
    expect(ran.stdout + ran.stderr).toMatch(/running check/);
  });

  it('after an edit and its revert, the earlier receipt whose own evidence is unchanged answers: status, the observer, --if-due, explain and the hook', async () => {
    const p = tracedProject();
    p.write('package.json', JSON.stringify({ name: 'x', private: true, scripts: { test: 'node check.mjs' } }));
    p.write('vouch.config.json', configText([{ name: 'check', kind: 'test', script: 'test', mode: 'traced' }]));
    const first = (await run(p)).runs[0].receipt.run_id;
    p.write('.env', 'SECRET=2\n');
    const second = (await run(p)).runs[0].receipt.run_id;
    p.write('.env', 'SECRET=1\n');
    const answeredBy = async (env?: NodeJS.ProcessEnv) => (await expectCurrent(p, 'check', env)).receipt.run_id;
    expect(await answeredBy()).toBe(first);
    expect((await inProcess(p).json(['status', 'check', '--no-observer'])).checks[0].receipt.run_id).toBe(first);
    expect((await inProcess(p).json(['explain', 'check'])).check).toMatchObject({ freshness: 'CURRENT', receipt: { run_id: first } });
    const hook = () => {
      const result = spawnSync(process.execPath, [CLI, 'hook', 'claude'], { cwd: p.root, input: JSON.stringify(claudeBash(p.root, 'npm test')), env: cleanEnv(), encoding: 'utf8' });
      expect(result.status, result.stderr).toBe(0);
      return result.stdout === '' ? null : JSON.parse(result.stdout).hookSpecificOutput;
    };
    const denied = hook();
    expect(denied?.permissionDecision).toBe('deny');
    expect(denied?.permissionDecisionReason).toContain(first);
    // The edit again: the second receipt's evidence is as its run left it.
    p.write('.env', 'SECRET=2\n');
    expect((await inProcess(p).json(['status', 'check', '--no-observer'])).checks[0].receipt.run_id).toBe(second);
    // The observer answers the same, after its barrier.
    expect(p.vouch(['start']).code).toBe(0);
    const viaObserver = async () => {
      const out = await inProcess(p).json(['status', 'check']);
      expect(out.observation.source).toBe('observer');
      return out.checks[0];
    };
    expect(await viaObserver()).toMatchObject({ freshness: 'CURRENT', receipt: { run_id: second } });
    p.write('.env', 'SECRET=1\n');
    expect(await viaObserver()).toMatchObject({ freshness: 'CURRENT', receipt: { run_id: first } });
    const skipped = await runIn(p, ['run', 'check', '--if-due']);
    expect(skipped.stdout + skipped.stderr).toMatch(/skipped check/);
    // A state no receipt was made on: STALE everywhere, and --if-due runs it.
    p.write('.env', 'SECRET=3\n');
    expect((await viaObserver()).freshness).toBe('STALE');
    expect((await inProcess(p).json(['status', 'check', '--no-observer'])).checks[0].freshness).toBe('STALE');
    expect(hook()?.permissionDecision).not.toBe('deny');
    const ran = await runIn(p, ['run', 'check', '--if-due']);
    expect(ran.stdout + ran.stderr).toMatch(/running check/);
  });

  it('is answered by the observer as by a direct look, ignored files and paths outside the root included', async () => {
    const p = tracedProject();
    await run(p);
    expect(p.vouch(['start']).code).toBe(0);
    const viaObserver = async () => {
      const out = await inProcess(p).json(['status', 'check']);
      expect(out.observation.source).toBe('observer');
      return out.checks[0];
    };
    expect((await viaObserver()).freshness).toBe('CURRENT');
    p.write('.env', 'SECRET=9\n');
    expect((await viaObserver()).freshness).toBe('STALE');
    p.write('.env', 'SECRET=1\n');
    expect((await viaObserver()).freshness).toBe('CURRENT');
    writeFileSync(outside, '{"shared":3}');
    const stale = await viaObserver();
    expect(stale.freshness).toBe('STALE');
    expect(reasonText(stale)).toContain(outside);
    // The observer looked again only where its events said something may have changed.
    const looks = (await inProcess(p).json(['observer', '--json'])).evidence_looks;
    expect(looks.partial, JSON.stringify(looks)).toBeGreaterThan(0);
    writeFileSync(outside, '{"shared":1}');
    expect((await viaObserver()).freshness).toBe('CURRENT');
  });

  it("lets the agent's rerun through once an ignored file the check read changed, and denies it while nothing it read did", async () => {
    const p = tracedProject();
    p.write('package.json', JSON.stringify({ name: 'x', private: true, scripts: { test: 'node check.mjs' } }));
    p.write('vouch.config.json', configText([{ name: 'test', kind: 'test', script: 'test', mode: 'traced' }]));
    expect((await runIn(p, ['run', 'test'])).code).toBe(0);
    const hook = () => {
      const result = spawnSync(process.execPath, [CLI, 'hook', 'claude'], { cwd: p.root, input: JSON.stringify(claudeBash(p.root, 'npm test')), env: cleanEnv(), encoding: 'utf8' });
      expect(result.status, result.stderr).toBe(0);
      return result.stdout === '' ? null : JSON.parse(result.stdout).hookSpecificOutput;
    };
    p.write('README.md', '# edited by the agent\n');
    expect(hook()?.permissionDecision).toBe('deny');
    p.write('.env', 'SECRET=5\n');
    expect(hook()?.permissionDecision).not.toBe('deny');
  });

  it('ends, with the check, what the check left running in the background (a traced process cannot outlive its trace), and says so in the log', async () => {
    const p = tracedProject();
    const marker = `vouch-leftover-${process.pid}-${Date.now()}`;
    p.write('bg.mjs', `import { spawn } from 'node:child_process';
spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)', ${JSON.stringify(marker)}], { detached: true, stdio: 'ignore' }).unref();
`);
    p.write('vouch.config.json', configText([{ name: 'bg', kind: 'test', command: ['node', 'bg.mjs'], mode: 'traced' }]));
    const started = Date.now();
    const result = await runIn(p, ['run', 'bg', '--json']);
    expect(result.code, result.stderr).toBe(0);
    // The check itself ends at once; its leftover would live a minute. The grace is 2 s.
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(spawnSync('pgrep', ['-f', marker]).status).not.toBe(0);
    const receipt = JSON.parse(result.stdout).runs[0].receipt;
    expect(receipt.result).toBe('PASS');
    expect(readFileSync(receipt.log_path, 'utf8')).toContain('vouch: ended 1 process the check left running');
  });

  it('follows a check run through a package manager script into the tool it runs', async () => {
    const p = tracedProject();
    p.write('package.json', JSON.stringify({ name: 'x', private: true, scripts: { test: 'node check.mjs' } }));
    p.write('vouch.config.json', configText([{ name: 'test', kind: 'test', script: 'test', mode: 'traced' }]));
    const result = await runIn(p, ['run', 'test']);
    expect(result.code, result.stderr).toBe(0);
    await expectCurrent(p, 'test');
    p.write('.env', 'SECRET=4\n');
    expect(reasonText(await statusOf(p, 'test'))).toMatch(/\.env: content changed/);
  });
});

describe('a traced check where tracing cannot run', () => {
  it('falls back to its declared inputs, and the receipt says why', async () => {
    const p = tracedProject();
    // A PATH with node and git but no strace: the tracer is missing, as on a machine without it.
    const bin = join(p.root, '..', `bin-${Date.now()}`);
    mkdirSync(bin);
    for (const tool of ['git', 'node']) {
      const found = spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).stdout.trim();
      symlinkSync(found, join(bin, tool));
    }
    const env = cleanEnv({ PATH: bin });
    try {
      // A process of its own, with this PATH: whether strace can run is probed once per process, with its PATH.
      const ran = p.vouch(['run', 'check', '--json'], { env });
      expect(ran.code, ran.stderr).toBe(0);
      const receipt = JSON.parse(ran.stdout).runs[0].receipt;
      expect(receipt.evidence).toEqual({ mode: 'declared', notes: [{ code: 'trace-unavailable', message: expect.stringMatching(/strace is not installed: install strace/) }] });
      expect(receipt.reuse_eligible).toBe(true);
      await expectCurrent(p, 'check', env);
      // Declared inputs: an ignored file is not one of them, so the fallback cannot see it.
      p.write('README.md', '# edited\n');
      expect((await statusOf(p, 'check', env)).freshness).toBe('STALE');
    } finally {
      rmSync(bin, { recursive: true, force: true });
    }
  });
});
