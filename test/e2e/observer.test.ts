import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { configText, type Json } from '../helpers/answers.js';
import {
  answersOf,
  isRunning,
  liveFiles,
  observerDirEntries,
  observerRecords,
  observerLogTail,
  ObserverTracker,
  PATIENT,
  rpcExchange,
  timedStatus,
  until,
  vouchAsync,
  waitGone,
} from '../helpers/observer.js';
import { inProcess } from '../helpers/inProcess.js';
import { CLI, cleanEnv, REPO, tempProject, type TempProject } from '../helpers/project.js';
import { newestChangeMs, SETTLE_MS } from '../helpers/settle.js';

/*
 * The observer's lifecycle and protocol, from the outside: start, stop,
 * crashes, hangs, sockets, idle exit, and a root that goes away. Whatever
 * happens to the observer, status still answers, and never CURRENT on an
 * observation it cannot stand behind.
 */

const projects: TempProject[] = [];
const observers = new ObserverTracker();
/** Every observer a test started, as the tracker knows it: the project, the arguments that select it, its cwd, its pid. */
const startedObservers: { p: TempProject; args: string[]; cwd: string; pids: number[] }[] = [];
afterEach(async () => {
  // Stopped in this process first, where one still runs: the same `vouch stop`, without a Node
  // start each. The tracker then stops (through the CLI) or kills whatever is left, and says so.
  const problems: string[] = [];
  for (const { p, args, cwd, pids } of startedObservers.splice(0)) {
    if (!pids.some((pid) => isRunning(pid))) continue;
    const stopped = await inProcess(p).vouch(['stop', ...args, '--json'], { cwd });
    if (stopped.code !== 0) problems.push(`vouch stop exited ${stopped.code}: ${stopped.stdout}${stopped.stderr}`);
  }
  problems.push(...(await observers.cleanup()));
  for (const p of projects.splice(0)) p.remove();
  expect(problems, 'observers that would not stop').toEqual([]);
});

/** observers.note, remembered for the stop above too. */
function note(p: TempProject, args: string[], pid: unknown, cwd = p.root): void {
  observers.note(p, args, pid, cwd);
  let entry = startedObservers.find((s) => s.p === p && s.cwd === cwd && JSON.stringify(s.args) === JSON.stringify(args));
  if (!entry) startedObservers.push((entry = { p, args, cwd, pids: [] }));
  if (typeof pid === 'number' && pid > 0) entry.pids.push(pid);
}

/** observers.start (`vouch start --json`, a process: it spawns the observer), remembered for the stop above too. */
function start(p: TempProject, args: string[] = [], options: { env?: NodeJS.ProcessEnv; cwd?: string; startArgs?: string[] } = {}): Json {
  const out = observers.start(p, args, options);
  note(p, args, out.pid, options.cwd ?? p.root);
  return out;
}

const CHECK = { name: 'check', kind: 'custom', command: ['node', 'check.cjs'] };
// The check leaves a line in out/ran.log each time it runs, so a test can tell whether anything ran.
const CHECK_JS = "const fs = require('fs');\nfs.mkdirSync('out', { recursive: true });\nfs.appendFileSync('out/ran.log', 'ran\\n');\n";
const A_JS = 'export const a = 1;\n';
const FILES: Record<string, string> = {
  'vouch.config.json': configText([CHECK]),
  '.gitignore': 'node_modules/\nout/\nstate/\n',
  'check.cjs': CHECK_JS,
  'src/a.js': A_JS,
  'src/b.js': 'export const b = 2;\n',
  'node_modules/dep/index.js': 'module.exports = 42;\n',
};

function project(name: string, files: Record<string, string> = FILES, options: { git?: boolean } = {}): TempProject {
  const p = tempProject(name, files, options);
  projects.push(p);
  return p;
}

/** `vouch run`, in this process (test/helpers/inProcess.ts): the setup before what a test is about. */
async function runChecks(p: TempProject, args: string[] = [], cwd = p.root) {
  const result = await inProcess(p).vouch(['run', ...args], { cwd });
  expect(result.code, `vouch run ${args.join(' ')}\n${result.stdout}\n${result.stderr}`).toBe(0);
}

/**
 * `vouch run` in this process, for a run an observer follows right after an edit. The observer's
 * account of the run's inputs tells a source written just before the run from one written during
 * it by its ctime alone, within a racy window (core/identity.ts, racyWindowNs): a run begun a few
 * milliseconds after an edit leaves a receipt that is not reusable (inputs-changed-during-run). So
 * it first waits until the last write in the checkout is SETTLE_MS old (test/helpers/settle.ts), as
 * a user's run, a Node start later, begins.
 */
async function runSettled(p: TempProject, args: string[] = [], cwd = p.root, env: NodeJS.ProcessEnv = cleanEnv()) {
  const newest = newestChangeMs(cwd);
  await until(() => Date.now() > newest + SETTLE_MS, `the last edit to be ${SETTLE_MS} ms old`, 5_000, 5);
  const result = await inProcess(p).vouch(['run', ...args], { cwd, env });
  expect(result.code, `vouch run ${args.join(' ')}\n${result.stdout}\n${result.stderr}`).toBe(0);
  return result;
}

/*
 * Projects and observers that several tests share, instead of a project, a first run, a `vouch
 * start` and an observer's first index each: one for vouch observer's report, a hung observer, the
 * socket's modes, a second config beside it and the protocol; one started for forced failures for
 * the overflow, the watcher error and the watch limit. Each test leaves it as it found it: src/ as
 * committed, the second config's observer stopped, and the check CURRENT, which the next user
 * checks, from the observer, before anything else.
 */
const OTHER_ARGS = ['--config', 'other.config.json'];
const SHARED_FILES: Record<string, string> = {
  ...FILES,
  'other.config.json': configText([{ name: 'other', kind: 'custom', command: ['node', 'check.cjs'], inputs: ['src/**'] }]),
};
/** Its own tracker: the per-test cleanup above stops every observer recorded in a state dir it tracks. */
const sharedObservers = new ObserverTracker();
const sharedSetups = new Map<string, { p: TempProject; started: Json | null }>();
afterAll(async () => {
  const problems: string[] = [];
  for (const { p } of sharedSetups.values()) {
    for (const args of [[], OTHER_ARGS]) {
      const stopped = await inProcess(p).vouch(['stop', ...args, '--json']);
      if (stopped.code !== 0) problems.push(`vouch stop exited ${stopped.code}: ${stopped.stdout}${stopped.stderr}`);
    }
  }
  problems.push(...(await sharedObservers.cleanup()));
  for (const { p } of sharedSetups.values()) p.remove();
  expect(problems, 'observers that would not stop').toEqual([]);
});

/** The shared project `name` and its observer's start (`vouch start --json` with `env`), started by the first test that asks. */
async function shared(name: 'plain' | 'faulty', env: NodeJS.ProcessEnv = cleanEnv()): Promise<{ p: TempProject; started: Json }> {
  let setup = sharedSetups.get(name);
  if (setup !== undefined) {
    if (setup.started === null) throw new Error(`the shared ${name} observer did not start`);
    const status = await statusIn(setup.p, [], patient);
    expect(status.observation.source, `the shared ${name} observer still answers`).toBe('observer');
    expect(answersOf(status).map((a) => a.freshness), `the shared ${name} project as the last test left it`).toEqual(['CURRENT']);
    return setup as { p: TempProject; started: Json };
  }
  setup = { p: tempProject(`obs-shared-${name}`, SHARED_FILES), started: null };
  sharedSetups.set(name, setup);
  await runChecks(setup.p);
  setup.started = sharedObservers.start(setup.p, [], { env });
  expect(setup.started.action).toBe('started');
  return setup as { p: TempProject; started: Json };
}

const stateDirOf = (p: TempProject) => join(p.root, '.vouch');
const ranCount = (p: TempProject) => (existsSync(join(p.root, 'out/ran.log')) ? readFileSync(join(p.root, 'out/ran.log'), 'utf8').split('\n').length - 1 : 0);
const patient = cleanEnv({ VOUCH_OBSERVER_TIMEOUT_MS: PATIENT });

/*
 * Most tests below run their checks and ask their questions in this process, through the CLI's own
 * dispatch (test/helpers/inProcess.ts): the observer under test is a process of its own all the
 * same, and the question reaches it over its socket as from a CLI process. With VOUCH_NATIVE=0 in
 * a command's env, its question goes through node:net instead of the addon, as a process without
 * the addon asks. What only a process shows is asked of the CLI: vouch start (it spawns the
 * observer, and its output), a status process's time with a hung observer, and the version the
 * CLI says it is.
 */
async function askedIn(p: TempProject, args: string[], env: NodeJS.ProcessEnv = cleanEnv(), cwd = p.root): Promise<{ out: Json; stderr: string }> {
  const result = await inProcess(p).vouch(['status', ...args, '--json'], { env, cwd });
  try {
    return { out: JSON.parse(result.stdout), stderr: result.stderr };
  } catch {
    throw new Error(`vouch status ${args.join(' ')} --json printed no JSON (exit ${result.code}):\n${result.stdout}\n${result.stderr}`);
  }
}

/** `vouch status ARGS --json`, in this process: the answer. */
async function statusIn(p: TempProject, args: string[], env: NodeJS.ProcessEnv = cleanEnv(), cwd = p.root): Promise<Json> {
  return (await askedIn(p, args, env, cwd)).out;
}

/** `vouch observer ARGS --json`, in this process. */
async function observerInfoIn(p: TempProject, args: string[] = [], cwd = p.root): Promise<Json> {
  const result = await inProcess(p).vouch(['observer', ...args, '--json'], { cwd });
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout);
}

/** `vouch ARGS --json`, in this process (stop, explain, log). */
async function jsonIn(p: TempProject, args: string[], env: NodeJS.ProcessEnv = cleanEnv()): Promise<Json> {
  return await inProcess(p).json(args, { env });
}

function expectSocket(path: string) {
  const stats = statSync(path);
  expect(stats.isSocket(), `${path} is a socket`).toBe(true);
  // Soft: a wrong mode is reported, and the rest of the test still runs.
  expect.soft((stats.mode & 0o777).toString(8), `mode of ${path}`).toBe('600');
  expect.soft((statSync(dirname(path)).mode & 0o777).toString(8), `mode of ${dirname(path)}`).toBe('700');
}

describe('start and stop', () => {
  it('start returns once the index is ready and says how long it took; a second start finds it running', async () => {
    const p = project('obs-start');
    await runChecks(p);
    const human = p.vouch(['start'], { timeout: 60_000 });
    // The duration as vouch prints durations everywhere: 412ms, 1.4s.
    const ready = /^observer ready in (\d+ms|\d+\.\ds|\d+m\d+s) \(pid (\d+), (\d+) files\)$/m.exec(human.stdout);
    const pid = ready ? Number(ready[2]) : NaN;
    note(p, [], pid);
    expect(human.code, human.stderr).toBe(0);
    expect(ready, human.stdout).not.toBeNull();
    expect(isRunning(pid)).toBe(true);
    // Inputs: check.js, src/a.js, src/b.js, .gitignore, and one installed file at least.
    expect(Number(ready?.[3])).toBeGreaterThanOrEqual(4);

    // Ready means ready: the very next question is the observer's to answer, even the cheapest one.
    const cached = await statusIn(p, ['--cached']);
    expect(cached.observation.source).toBe('observer');
    expect(cached.observation.mode).toBe('cached');
    expect(answersOf(cached).map((a) => a.freshness)).toEqual(['CURRENT']);

    const info = await observerInfoIn(p);
    expect(info.running).toBe(true);
    expect(info.pid).toBe(pid);
    expect(info.index_files).toBe(Number(ready?.[3]));

    const again = start(p);
    expect(again).toMatchObject({ schema: 1, action: 'already-running', pid });
    const againHuman = p.vouch(['start'], { timeout: 60_000 });
    expect(againHuman.code).toBe(0);
    expect(againHuman.stdout).toMatch(/already running/);
    expect(againHuman.stdout).toContain(String(pid));
    expect(observerRecords(stateDirOf(p)).map((r) => r.record.pid)).toEqual([pid]);
  });

  it('two starts at the same instant: one observer, both say where it is, and its files stay', async () => {
    const p = project('obs-race');
    await runChecks(p);
    note(p, [], 0);
    const [one, two] = await Promise.all([0, 1].map(() => vouchAsync(p.root, ['start', '--json'], 60_000)));
    const outs = [one, two].map((result) => {
      expect(result?.code, result?.output).toBe(0);
      return JSON.parse(result?.output ?? '');
    });
    for (const out of outs) note(p, [], out.pid);
    expect(outs.map((out) => out.action).sort()).toEqual(['already-running', 'started']);
    expect(outs[0].pid).toBe(outs[1].pid);
    expect(observerRecords(stateDirOf(p)).map((r) => r.record.pid)).toEqual([outs[0].pid]);
    expect(existsSync(outs[0].socket)).toBe(true);
    expect((await statusIn(p, [], patient)).observation.source).toBe('observer');
  });

  it('stop ends it and leaves no socket or pid file; a second stop says not-running', async () => {
    const p = project('obs-stop');
    await runChecks(p);
    const started = start(p);
    expect(started).toMatchObject({ schema: 1, action: 'started' });
    expect(typeof started.pid).toBe('number');
    expect(started.ready_ms).toBeGreaterThanOrEqual(0);
    expect(started.index_files).toBeGreaterThanOrEqual(4);
    expect(typeof started.socket).toBe('string');
    expectSocket(started.socket);
    const entries = observerDirEntries(stateDirOf(p));
    expect(entries.some((name) => name.endsWith('.json')), entries.join(' ')).toBe(true);
    expect(entries.some((name) => name.endsWith('.log')), entries.join(' ')).toBe(true);

    const stopped = await jsonIn(p, ['stop']);
    expect(stopped).toEqual({ schema: 1, action: 'stopped', pid: started.pid });
    expect(await waitGone(started.pid, 2_000), 'the observer exits when stop returns').toBe(true);
    expect(liveFiles(stateDirOf(p))).toEqual([]);
    expect(existsSync(started.socket)).toBe(false);

    expect(await jsonIn(p, ['stop'])).toEqual({ schema: 1, action: 'not-running', pid: null });
    expect(await observerInfoIn(p)).toEqual({ schema: 1, running: false });
    const status = await statusIn(p, []);
    expect(status.observation.source).toBe('scan');
    expect(answersOf(status).map((a) => a.freshness)).toEqual(['CURRENT']);
  });

  it('start --foreground serves until SIGTERM, then cleans up', async () => {
    const p = project('obs-fg');
    await runChecks(p);
    const child = spawn(process.execPath, [CLI, 'start', '--foreground'], { cwd: p.root, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    note(p, [], child.pid);
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    await until(() => /observer ready in \S+ \(pid \d+/.test(output), 'the foreground observer to be ready');
    const info = await observerInfoIn(p);
    expect(info.running).toBe(true);
    expect(info.pid).toBe(child.pid);
    expect((await statusIn(p, [])).observation.source).toBe('observer');

    child.kill('SIGTERM');
    const code = await Promise.race([exited, delay(10_000).then(() => 'still running' as const)]);
    expect(code, output).not.toBe('still running');
    expect(liveFiles(stateDirOf(p))).toEqual([]);
    expect(existsSync(info.socket)).toBe(false);
  });

  it('an observer of another vouch version is replaced by the next start', async () => {
    const p = project('obs-version');
    await runChecks(p);
    // The same bundle, with another version built in.
    const other = join(p.root, 'out', 'other-vouch');
    cpSync(join(REPO, 'dist'), join(other, 'dist'), { recursive: true });
    const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8'));
    writeFileSync(join(other, 'package.json'), JSON.stringify({ ...pkg, version: '0.0.0-other' }));
    // The version is inlined at build time (rolldown.config.mjs), into the one chunk main.js loads first.
    const inlined = `const VERSION = ${JSON.stringify(pkg.version)};`;
    const versionChunks = readdirSync(join(other, 'dist/bin')).filter((name) => readFileSync(join(other, 'dist/bin', name), 'utf8').includes(inlined));
    expect(versionChunks).toHaveLength(1);
    const versionChunk = join(other, 'dist/bin', versionChunks[0]!);
    const built = readFileSync(versionChunk, 'utf8');
    writeFileSync(versionChunk, built.replace(inlined, `const VERSION = ${JSON.stringify('0.0.0-other')};`));
    symlinkSync(join(REPO, 'node_modules'), join(other, 'node_modules'));
    const otherStart = spawnSync(process.execPath, [join(other, 'dist/bin/main.js'), 'start', '--json'], { cwd: p.root, env: cleanEnv(), encoding: 'utf8', timeout: 60_000 });
    const old = JSON.parse(otherStart.stdout || '{}');
    note(p, [], old.pid);
    expect(otherStart.status, otherStart.stderr).toBe(0);
    expect((await observerInfoIn(p)).version).toBe('0.0.0-other');

    const replaced = start(p);
    expect(replaced.action).toBe('replaced');
    expect(replaced.pid).not.toBe(old.pid);
    expect(await waitGone(old.pid, 5_000), 'the old observer is gone').toBe(true);
    expect((await observerInfoIn(p)).version).toBe(pkg.version);
    expect((await statusIn(p, [])).observation.source).toBe('observer');
  });
});

describe('vouch observer and status', () => {
  it('vouch observer --json reports on the running observer', async () => {
    const { p, started } = await shared('plain');
    const info = await observerInfoIn(p);
    // The version the CLI says it is: the built one, which started the observer.
    const version = p.vouch(['--version']).stdout.trim();
    expect(info).toMatchObject({
      schema: 1,
      running: true,
      pid: started.pid,
      version,
      healthy: true,
      reasons: [],
      index_files: started.index_files,
      overflows: 0,
      socket: started.socket,
    });
    for (const field of ['uptime_ms', 'watched_paths', 'memory_rss_bytes', 'events', 'rescans']) {
      expect(typeof info[field], field).toBe('number');
      expect(info[field], field).toBeGreaterThanOrEqual(0);
    }
    expect(info.watched_paths).toBeGreaterThan(0);
    expect(info.memory_rss_bytes).toBeGreaterThan(1_000_000);
    if (info.last_rescan !== null) {
      expect(Object.keys(info.last_rescan).sort()).toEqual(['at', 'duration_ms', 'reason']);
    }

    // Events are counted as they come.
    p.write('src/new.js', 'export const n = 3;\n');
    const later = await until(
      async () => {
        const now = await observerInfoIn(p);
        return now.events > info.events ? now : null;
      },
      'the observer to count the write',
      10_000,
      50,
    );
    expect(later.uptime_ms).toBeGreaterThan(info.uptime_ms);
    rmSync(join(p.root, 'src/new.js'));
  });

  it('observation.source says observer or scan, and the answers agree', async () => {
    const p = project('obs-source');
    await runChecks(p);
    start(p);
    const byDefault = await statusIn(p, [], patient);
    expect(byDefault.observation).toMatchObject({ source: 'observer', mode: 'sync' });
    expect((await statusIn(p, ['--sync'], patient)).observation).toMatchObject({ source: 'observer', mode: 'sync' });
    expect((await statusIn(p, ['--cached'], patient)).observation).toMatchObject({ source: 'observer', mode: 'cached' });
    // Without the addon the call goes through node:net instead of blocking natively: the same answer, from the observer.
    const throughNet = await statusIn(p, [], { ...patient, VOUCH_NATIVE: '0' });
    expect(throughNet.observation).toMatchObject({ source: 'observer', mode: 'sync' });
    expect(answersOf(throughNet)).toEqual(answersOf(byDefault));
    const scanned = await statusIn(p, ['--no-observer']);
    expect(scanned.observation).toMatchObject({ source: 'scan', mode: null });
    expect(answersOf(byDefault)).toEqual(answersOf(scanned));
    expect(answersOf(scanned).map((a) => a.freshness)).toEqual(['CURRENT']);

    // An edit, asked about at once: the barrier makes the observer see it.
    p.write('src/a.js', 'export const a = 2;\n');
    const stale = await statusIn(p, [], patient);
    expect(stale.observation.source).toBe('observer');
    expect(answersOf(stale)).toEqual(answersOf(await statusIn(p, ['--no-observer'])));
    expect(answersOf(stale).map((a) => a.freshness)).toEqual(['STALE']);

    // explain through the observer names the same change as explain without it.
    const explained = await jsonIn(p, ['explain', 'check'], patient);
    const explainedDirectly = await jsonIn(p, ['explain', 'check', '--no-observer']);
    expect(explained.check.freshness).toBe('STALE');
    expect(explained.input_changes).toEqual(explainedDirectly.input_changes);

    // run --if-due through the observer runs the STALE check, then skips it.
    // Settled first, as runSettled says why: the run follows the edit above at once.
    const before = ranCount(p);
    await runSettled(p, ['--if-due'], p.root, patient);
    expect(ranCount(p)).toBe(before + 1);
    const skipped = await inProcess(p).vouch(['run', '--if-due'], { env: patient });
    expect(skipped.code).toBe(0);
    expect(skipped.stdout).toContain('skipped');
    expect(ranCount(p)).toBe(before + 1);

    expect((await jsonIn(p, ['stop'])).action).toBe('stopped');
    const after = await statusIn(p, []);
    expect(after.observation).toMatchObject({ source: 'scan', mode: null });
    expect(answersOf(after).map((a) => a.freshness)).toEqual(['CURRENT']);
  });
});

describe('run --if-due with an observer', () => {
  it('skips a current check without taking the lock, and waits for a run that holds it, then skips on its receipt', async () => {
    const SLOW = { name: 'check', kind: 'custom', command: ['node', 'slow.cjs'] };
    const p = project('obs-ifdue', {
      ...FILES,
      'vouch.config.json': configText([SLOW]),
      'slow.cjs': `${CHECK_JS}setTimeout(() => {}, 1500);\n`,
    });
    await runChecks(p);
    start(p);
    expect(ranCount(p)).toBe(1);

    const skipped = await inProcess(p).vouch(['run', '--if-due', '--json'], { env: patient });
    expect(skipped.code, skipped.stderr).toBe(0);
    expect(JSON.parse(skipped.stdout).runs.map((r: Json) => r.action)).toEqual(['skipped']);
    expect(existsSync(join(stateDirOf(p), 'locks', 'check.lock'))).toBe(false);

    p.write('src/a.js', 'export const a = 2;\n');
    const first = vouchAsync(p.root, ['run'], 30_000, patient);
    await until(() => existsSync(join(stateDirOf(p), 'locks', 'check.lock')), 'the first run to take the lock');
    const second = await inProcess(p).vouch(['run', '--if-due', '--json'], { env: patient });
    expect((await first).code).toBe(0);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toMatch(/waiting/i);
    expect(JSON.parse(second.stdout).runs.map((r: Json) => r.action)).toEqual(['skipped']);
    expect(ranCount(p)).toBe(2);
  });
});

describe('a crashed or hung observer', () => {
  it('kill -9 leaves stale files; status detects them, cleans up and scans; start starts afresh', async () => {
    const p = project('obs-kill9');
    await runChecks(p);
    const started = start(p);
    process.kill(started.pid, 'SIGKILL');
    expect(await waitGone(started.pid, 5_000)).toBe(true);
    // What a crash leaves behind: its record and socket.
    expect(liveFiles(stateDirOf(p)).some((name) => name.endsWith('.json'))).toBe(true);
    expect(existsSync(started.socket)).toBe(true);

    const status = await statusIn(p, []);
    expect(status.observation.source).toBe('scan');
    expect(answersOf(status).map((a) => a.freshness)).toEqual(['CURRENT']);
    expect(liveFiles(stateDirOf(p)), 'stale record and socket removed').toEqual([]);
    expect(existsSync(started.socket)).toBe(false);
    expect(await observerInfoIn(p)).toEqual({ schema: 1, running: false });

    const again = start(p);
    expect(again.action).toBe('started');
    expect(again.pid).not.toBe(started.pid);
    expect((await statusIn(p, [], patient)).observation.source).toBe('observer');
  });

  it('kill -9, then start at once: the stale socket does not stop the new observer', async () => {
    const p = project('obs-kill9-start');
    await runChecks(p);
    const started = start(p);
    process.kill(started.pid, 'SIGKILL');
    expect(await waitGone(started.pid, 5_000)).toBe(true);
    expect(existsSync(started.socket)).toBe(true);

    const again = start(p);
    expect(again.action).toBe('started');
    expect(again.pid).not.toBe(started.pid);
    expectSocket(again.socket);
    expect(observerRecords(stateDirOf(p)).map((r) => r.record.pid)).toEqual([again.pid]);
    const status = await statusIn(p, [], patient);
    expect(status.observation.source).toBe('observer');
    expect(answersOf(status).map((a) => a.freshness)).toEqual(['CURRENT']);
  });

  it('a hung observer (SIGSTOP) costs at most the client deadline, then status scans', async () => {
    const { p, started } = await shared('plain');
    const DEADLINE = 1_500;
    const env = cleanEnv({ VOUCH_OBSERVER_TIMEOUT_MS: String(DEADLINE) });
    expect((await statusIn(p, [], env)).observation.source).toBe('observer');
    // Status and explain through the CLI: what a process costs with a hung observer.
    // What a direct answer costs here, to bound the fallback below.
    const scanMs = Math.max(timedStatus(p, ['--no-observer'], env).ms, timedStatus(p, ['--no-observer'], env).ms);

    process.kill(started.pid, 'SIGSTOP');
    try {
      p.write('src/a.js', 'export const a = 2;\n');
      for (const args of [[], ['--sync'], ['--cached']]) {
        const hung = timedStatus(p, args, env);
        expect(hung.out.observation.source, `status ${args.join(' ')}`).toBe('scan');
        expect(answersOf(hung.out).map((a) => a.freshness)).toEqual(['STALE']);
        expect(hung.ms, `status ${args.join(' ')} took ${Math.round(hung.ms)} ms; a scan takes ${Math.round(scanMs)} ms`).toBeLessThan(DEADLINE + scanMs + 1_000);
      }
      const started2 = performance.now();
      const explained = p.json(['explain', 'check'], { env });
      expect(explained.check.freshness).toBe('STALE');
      expect(performance.now() - started2).toBeLessThan(DEADLINE + scanMs + 1_000);
    } finally {
      process.kill(started.pid, 'SIGCONT');
    }
    // Woken up, it answers again, and sees the edit made while it slept.
    const woken = await statusIn(p, [], patient);
    expect(woken.observation.source).toBe('observer');
    expect(answersOf(woken).map((a) => a.freshness)).toEqual(['STALE']);
    p.write('src/a.js', A_JS);
  });
});

describe('directories made in one go', () => {
  // inotify is not recursive: a watcher adds a watch for each new directory it hears of, and a
  // directory made inside it before that watch exists may never be heard of (mkdir -p, cp -r, a
  // checkout, an unpacked archive). Edits there then raise no event at all. The race is lost now
  // and then; an observer that is not scheduled while the tree is made (a busy machine) loses it
  // every time, so the test pauses it.
  it('an edit deep inside a subtree made by mkdir -p, cp -r, git checkout or mv is seen, and so is its revert', async () => {
    const COPIES = 6;
    const p = project('obs-subtree', { ...FILES, 'lib/deep/er/d.js': 'export const d = 1;\n' });
    p.git('checkout', '-q', '-b', 'nested');
    for (let k = 0; k < COPIES; k++) p.write(`gen/g${k}/one/two/n.js`, `export const n = ${k};\n`);
    p.git('add', '-A');
    p.git('commit', '-qm', 'nested');
    p.git('checkout', '-q', '-');
    await runChecks(p);
    const started = start(p);

    const made: [how: string, path: string][] = [];
    process.kill(started.pid, 'SIGSTOP');
    try {
      // One process, as fast as mkdir -p and a write are.
      const script = `const fs = require('fs'); for (let k = 0; k < ${COPIES}; k++) { fs.mkdirSync('made/m' + k + '/a/b', { recursive: true }); fs.writeFileSync('made/m' + k + '/a/b/m.js', 'export const m = 1;\\n'); }`;
      expect(spawnSync(process.execPath, ['-e', script], { cwd: p.root }).status).toBe(0);
      for (let k = 0; k < COPIES; k++) made.push(['mkdir -p', `made/m${k}/a/b/m.js`]);
      for (let k = 0; k < COPIES; k++) {
        expect(spawnSync('cp', ['-r', 'lib', `copied${k}`], { cwd: p.root }).status).toBe(0);
        made.push(['cp -r', `copied${k}/deep/er/d.js`]);
      }
      p.git('checkout', '-q', 'nested');
      for (let k = 0; k < COPIES; k++) made.push(['git checkout', `gen/g${k}/one/two/n.js`]);
      // A tree made elsewhere and moved in arrives as one event, whoever wins the race.
      const outside = `${p.root}-outside`;
      mkdirSync(join(outside, 'x/y'), { recursive: true });
      writeFileSync(join(outside, 'x/y/v.js'), 'export const v = 1;\n');
      renameSync(join(outside, 'x'), join(p.root, 'moved'));
      rmSync(outside, { recursive: true, force: true });
      made.push(['mv', 'moved/y/v.js']);
    } finally {
      process.kill(started.pid, 'SIGCONT');
    }
    for (const [, path] of made) expect(existsSync(join(p.root, path)), path).toBe(true);
    await delay(300);
    await runChecks(p);
    expect(answersOf((await askedIn(p, [], patient)).out).map((a) => a.freshness)).toEqual(['CURRENT']);

    const missed: string[] = [];
    for (const [how, path] of made) {
      const original = readFileSync(join(p.root, path));
      writeFileSync(join(p.root, path), 'export const edited = true;\n');
      const asked = await askedIn(p, [], patient);
      const edited = asked.out;
      expect(edited.observation.source, `why it scanned: ${asked.stderr}\n${observerLogTail(stateDirOf(p))}`).toBe('observer');
      if (answersOf(edited)[0]?.freshness !== 'STALE') missed.push(`${how}: an edit of ${path} left it ${answersOf(edited)[0]?.freshness}`);
      writeFileSync(join(p.root, path), original);
      const reverted = (await askedIn(p, [], patient)).out;
      if (answersOf(reverted)[0]?.freshness !== 'CURRENT') missed.push(`${how}: the revert of ${path} left it ${answersOf(reverted)[0]?.freshness}`);
    }
    // The answers the observer must have matched: a scan sees an edit and its revert.
    const last = made[made.length - 1]?.[1] as string;
    const original = readFileSync(join(p.root, last));
    writeFileSync(join(p.root, last), 'export const edited = true;\n');
    expect(answersOf((await askedIn(p, ['--no-observer'])).out).map((a) => a.freshness)).toEqual(['STALE']);
    writeFileSync(join(p.root, last), original);
    expect(answersOf((await askedIn(p, ['--no-observer'])).out).map((a) => a.freshness)).toEqual(['CURRENT']);
    expect(missed).toEqual([]);
  });
});

/** The observer answers, with `expected`, and a direct look answers the same. */
async function agreesWithScan(p: TempProject, expected: string) {
  const observed = (await askedIn(p, [], patient)).out;
  expect(observed.observation.source).toBe('observer');
  expect(answersOf(observed).map((a) => a.freshness)).toEqual([expected]);
  expect(answersOf((await askedIn(p, ['--no-observer'])).out)).toEqual(answersOf(observed));
}

describe('paths that cannot change an answer', () => {
  it('writes to git-ignored files make no rescan; un-ignoring them or a forced git add does, and so do edits of what is then tracked', async () => {
    const p = project('obs-quiet');
    await runChecks(p);
    start(p);
    const agreed = (expected: string) => agreesWithScan(p, expected);
    await agreed('CURRENT');
    // Counted by reason: a scan after a moment the kernel queue went unsampled (lost-events) is no rescan for these writes.
    const fileEventScans = async () => (await observerInfoIn(p)).rescans_by_reason.find((entry: Json) => entry.reason === 'file-events')?.count ?? 0;
    const rescans = await fileEventScans();
    for (let k = 0; k < 20; k++) {
      writeFileSync(join(p.root, `out/build-${k % 3}.js`), `export const k = ${k};\n`);
      await delay(20);
    }
    await agreed('CURRENT');
    expect(await fileEventScans(), 'writes under an ignored directory made the index rescan').toBe(rescans);

    // What decides ignoring changes: the ignored files are inputs now.
    const gitignore = readFileSync(join(p.root, '.gitignore'), 'utf8');
    writeFileSync(join(p.root, '.gitignore'), gitignore.replace('out/\n', ''));
    await agreed('STALE');
    writeFileSync(join(p.root, '.gitignore'), gitignore);
    await agreed('CURRENT');

    // A forced add tracks an ignored file: only .git/index says so.
    p.git('add', '-f', 'out/build-0.js');
    await agreed('STALE');
    await runSettled(p);
    await agreed('CURRENT');
    await delay(200);
    writeFileSync(join(p.root, 'out/build-0.js'), 'export const k = -1;\n');
    await agreed('STALE');
  });
});

describe('paths that cannot change an answer, and one that can', () => {
  it('a new input in a directory that held only ignored files is seen: git lists such a directory as ignored, but not what is made in it later', async () => {
    const p = project('obs-ignored-contents', { ...FILES, '.gitignore': 'node_modules/\nout/\nstate/\n*.txt\n', 'src/notes/todo.txt': 'later\n' });
    await runChecks(p);
    start(p);
    const agreed = (expected: string) => agreesWithScan(p, expected);
    await agreed('CURRENT');
    // The observer learns what git ignores after its scan, in the background.
    await delay(300);
    writeFileSync(join(p.root, 'src/notes/todo.txt'), 'still later\n');
    await agreed('CURRENT');
    writeFileSync(join(p.root, 'src/notes/new.js'), 'export const n = 1;\n');
    await agreed('STALE');
  });
});

describe('forced failures', () => {
  // Failures that cannot be caused on demand are injected through the "fault" method, which only
  // an observer started with VOUCH_OBSERVER_FAULTS=1 answers.
  const faulty = cleanEnv({ VOUCH_OBSERVER_TIMEOUT_MS: PATIENT, VOUCH_OBSERVER_FAULTS: '1' });
  const inject = async (socket: string, kind: string) => {
    const answer = await rpcExchange(socket, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'fault', params: { kind } }) + '\n');
    expect(answer?.result, JSON.stringify(answer)).toEqual({ injected: kind });
  };

  it('an overflow: the next answer waits for a fresh watch and rescan, is right, and the observer is healthy after', async () => {
    const { p, started } = await shared('faulty', faulty);
    const before = (await observerInfoIn(p));
    await inject(started.socket, 'overflow');
    p.write('src/a.js', 'export const a = 2;\n');
    const after = (await askedIn(p, [], patient)).out;
    expect(after.observation.source).toBe('observer');
    expect(answersOf(after).map((a) => a.freshness)).toEqual(['STALE']);
    const info = (await observerInfoIn(p));
    expect(info).toMatchObject({ healthy: true, reasons: [], overflows: before.overflows + 1 });
    expect(info.rescans).toBeGreaterThan(before.rescans);
    p.write('src/a.js', A_JS);
  });

  for (const kind of ['watcher-error', 'watch-limit'] as const) {
    it(`a ${kind}: never silent, answers stay right (a scan while it lasts), and it recovers on its own`, async () => {
      const { p, started } = await shared('faulty', faulty);
      await inject(started.socket, kind);
      // A watch limit lasts until the retry 2 s later; a watcher error only while subscribing again.
      if (kind === 'watch-limit') {
        await expectUnhealthy(started.socket);
        await until(async () => (await observerInfoIn(p)).reasons.some((r: Json) => r.code === 'observer-watch-limit'), 'the watch limit reason', 5_000, 50);
        p.write('src/a.js', 'export const a = 2;\n');
        const during = await inProcess(p).vouch(['status', '--json'], { env: patient });
        expect(JSON.parse(during.stdout).observation.source).toBe('scan');
        expect(answersOf(JSON.parse(during.stdout)).map((a) => a.freshness)).toEqual(['STALE']);
        expect(during.stderr).toMatch(/watch limit/);
      } else {
        p.write('src/a.js', 'export const a = 2;\n');
      }
      await until(async () => (await observerInfoIn(p)).healthy === true, `recovery from ${kind}`, 15_000, 100);
      const after = (await askedIn(p, [], patient)).out;
      expect(after.observation.source).toBe('observer');
      expect(answersOf(after).map((a) => a.freshness)).toEqual(['STALE']);
      // The recovered watcher sees new edits.
      p.write('src/a.js', A_JS);
      expect(answersOf((await askedIn(p, [], patient)).out).map((a) => a.freshness)).toEqual(['CURRENT']);
    });
  }

  it('a creation event lost: the coverage check finds the unwatched directories, and an edit inside them is seen', async () => {
    const p = project('obs-fault-blind');
    await runChecks(p);
    // @parcel/watcher's gap: a tree moved in whole leaves its inner directories unwatched
    // (parcel-bundler/watcher#97). The native watcher watches them as the tree arrives, so the
    // coverage check is tested where the gap exists.
    const started = start(p, [], { env: { ...faulty, VOUCH_WATCHER: 'parcel' } });
    await inject(started.socket, 'blind-creates');
    const outside = `${p.root}-outside`;
    mkdirSync(join(outside, 'x/y'), { recursive: true });
    writeFileSync(join(outside, 'x/y/v.js'), 'export const v = 1;\n');
    renameSync(join(outside, 'x'), join(p.root, 'moved'));
    rmSync(outside, { recursive: true, force: true });
    const added = (await askedIn(p, [], patient)).out;
    expect(added.observation.source).toBe('observer');
    expect(answersOf(added).map((a) => a.freshness)).toEqual(['STALE']);
    await runSettled(p);
    expect(answersOf((await askedIn(p, [], patient)).out).map((a) => a.freshness)).toEqual(['CURRENT']);
    const log = readFileSync(observerRecords(stateDirOf(p))[0]?.record.log, 'utf8');
    expect(log).toMatch(/unwatched directories holding inputs: moved\/y\b/);
    writeFileSync(join(p.root, 'moved/y/v.js'), 'export const v = 2;\n');
    expect(answersOf((await askedIn(p, [], patient)).out).map((a) => a.freshness)).toEqual(['STALE']);
  });
  it('a tree replaced in place, a directory inside it unwatched: a file made there beside a touched source is STALE with patching on, never a patched CURRENT', async () => {
    // The property campaign's false CURRENT (seed 7, burst 762), made deterministic. A tree put back
    // in place keeps its paths (on ext4 often its inode numbers too), but its inner directories may
    // be left unwatched: a directory that arrives whole is watched at its top only
    // (parcel-bundler/watcher#97), and @parcel/watcher reports one deleted and made again as an
    // update. Lost creations stand for both here, so only the coverage check is left to notice.
    const p = project('obs-replaced-tree', { ...FILES, 'src/dir33/deep/e.js': 'export const e = 5;\n', 'src/dir165/top.js': '// top\n' });
    await runChecks(p);
    const patching = cleanEnv({ VOUCH_OBSERVER_TIMEOUT_MS: PATIENT, VOUCH_OBSERVER_FAULTS: '1', VOUCH_OBSERVER_PATCH: '1' });
    const started = start(p, [], { env: patching });
    const freshness = async () => {
      const out = (await askedIn(p, [], patching)).out;
      expect(out.observation.source).toBe('observer');
      return answersOf(out).map((a) => a.freshness);
    };
    expect(await freshness()).toEqual(['CURRENT']);
    await inject(started.socket, 'blind-creates');
    // src/dir33 replaced by a copy of itself: the same paths and bytes, so still CURRENT.
    const outside = `${p.root}-outside`;
    cpSync(join(p.root, 'src/dir33'), join(outside, 'dir33'), { recursive: true });
    rmSync(join(p.root, 'src/dir33'), { recursive: true });
    renameSync(join(outside, 'dir33'), join(p.root, 'src/dir33'));
    rmSync(outside, { recursive: true, force: true });
    expect(await freshness()).toEqual(['CURRENT']);
    // A new input in the re-created directory, and a touch (same bytes) of a source the index holds.
    writeFileSync(join(p.root, 'src/dir33/deep/n859.ts'), '// created 859\n');
    const later = new Date(Date.now() + 5_000);
    utimesSync(join(p.root, 'src/dir165/top.js'), later, later);
    expect(answersOf((await askedIn(p, ['--no-observer'])).out).map((a) => a.freshness)).toEqual(['STALE']);
    expect(await freshness()).toEqual(['STALE']);
  });
});

describe('a directory holding only ignored files', () => {
  it('a new source in it beside a touched source is STALE, with patching on or off: git lists the directory as ignored, not what comes into it', async () => {
    // The likeliest cause of the property campaign's false CURRENT (seed 7, burst 762): with *.txt
    // ignored, src/dir33/deep held only f.txt, git listed it as an ignored directory, so the new
    // n859.ts there could pass for a quiet path, and the touch alone was patched. Without patching,
    // the touch made a full scan, which found the file. Here the answer was right even before the
    // fix (the quiet list is forgotten and learned again around these writes); the deterministic
    // test of the cause is test/integration/quietPaths.test.ts.
    for (const patch of ['1', '0']) {
      const p = project(`obs-only-ignored-${patch}`, { ...FILES, '.gitignore': 'node_modules/\nout/\nstate/\n*.txt\n', 'src/dir33/deep/f.txt': 'notes\n', 'src/dir165/top.js': '// top\n' });
      await runChecks(p);
      const env = cleanEnv({ VOUCH_OBSERVER_TIMEOUT_MS: PATIENT, VOUCH_OBSERVER_PATCH: patch });
      start(p, [], { env });
      const freshness = async () => {
        const out = (await askedIn(p, [], env)).out;
        expect(out.observation.source).toBe('observer');
        return answersOf(out).map((a) => a.freshness);
      };
      expect(await freshness()).toEqual(['CURRENT']);
      // Let the observer learn what git ignores, after its scan.
      await delay(300);
      writeFileSync(join(p.root, 'src/dir33/deep/n859.ts'), '// created 859\n');
      const later = new Date(Date.now() + 5_000);
      utimesSync(join(p.root, 'src/dir165/top.js'), later, later);
      // The observer first: a direct scan's git may rewrite .git/index, whose event makes every path loud.
      expect(await freshness(), `VOUCH_OBSERVER_PATCH=${patch}`).toEqual(['STALE']);
      expect(answersOf((await askedIn(p, ['--no-observer'])).out).map((a) => a.freshness)).toEqual(['STALE']);
      // And alone, with no other event to make a scan.
      await runSettled(p);
      expect(await freshness()).toEqual(['CURRENT']);
      await delay(300);
      writeFileSync(join(p.root, 'src/dir33/deep/n860.ts'), '// created 860\n');
      expect(await freshness(), `VOUCH_OBSERVER_PATCH=${patch}, no other event`).toEqual(['STALE']);
      expect(answersOf((await askedIn(p, ['--no-observer'])).out).map((a) => a.freshness)).toEqual(['STALE']);
    }
  });
});

describe('sockets and state', () => {
  it('the socket is 0600 in a 0700 directory, and the record names it', async () => {
    const { p, started } = await shared('plain');
    expectSocket(started.socket);
    expect((statSync(join(stateDirOf(p), 'observer')).mode & 0o777).toString(8)).toBe('700');
    const [record] = observerRecords(stateDirOf(p));
    expect(record?.record.pid).toBe(started.pid);
    expect(record?.record.socket).toBe(started.socket);
  });

  it('a state dir path too long for sun_path still works: the socket goes elsewhere, recorded in the state dir', async () => {
    const p = project('obs-long');
    await runChecks(p);
    const stateDir = join(p.root, 'state', 'a-state-dir-with-a-long-name-'.padEnd(110, 'x'));
    mkdirSync(stateDir, { recursive: true });
    expect(Buffer.byteLength(join(stateDir, 'observer', 'x.sock'))).toBeGreaterThan(108);
    const args = ['--state-dir', stateDir];
    await runChecks(p, args);

    const started = start(p, args);
    expect(started.action).toBe('started');
    expect(Buffer.byteLength(started.socket)).toBeLessThan(108);
    expect(started.socket.startsWith(stateDir)).toBe(false);
    expectSocket(started.socket);
    const [record] = observerRecords(stateDir);
    expect(record?.record.socket).toBe(started.socket);

    const status = await statusIn(p, args, patient);
    expect(status.observation.source).toBe('observer');
    expect(answersOf(status).map((a) => a.freshness)).toEqual(['CURRENT']);

    expect((await jsonIn(p, ['stop', ...args])).action).toBe('stopped');
    expect(existsSync(started.socket)).toBe(false);
    expect(liveFiles(stateDir)).toEqual([]);
  });

  it('two configs in one checkout get two observers', async () => {
    const { p, started: first } = await shared('plain');
    const otherArgs = OTHER_ARGS;
    await runChecks(p, otherArgs);
    // Stopped below; if the test fails first, the shared cleanup stops it.
    const second = sharedObservers.start(p, otherArgs);
    expect(second.action).toBe('started');
    expect(second.pid).not.toBe(first.pid);
    expect(second.socket).not.toBe(first.socket);
    expect(observerRecords(stateDirOf(p)).map((r) => r.record.pid).sort()).toEqual([first.pid, second.pid].sort());

    const one = await statusIn(p, [], patient);
    const two = await statusIn(p, otherArgs, patient);
    expect(one.observation.source).toBe('observer');
    expect(two.observation.source).toBe('observer');
    expect(answersOf(one).map((a) => [a.name, a.freshness])).toEqual([['check', 'CURRENT']]);
    expect(answersOf(two).map((a) => [a.name, a.freshness])).toEqual([['other', 'CURRENT']]);

    expect(await jsonIn(p, ['stop', ...otherArgs])).toMatchObject({ action: 'stopped', pid: second.pid });
    expect(await observerInfoIn(p)).toMatchObject({ running: true, pid: first.pid });
    expect(await observerInfoIn(p, otherArgs)).toEqual({ schema: 1, running: false });
    expect((await statusIn(p, otherArgs)).observation.source).toBe('scan');
    expect((await statusIn(p, [], patient)).observation.source).toBe('observer');
  });
});

describe('worktrees', () => {
  it('a second worktree of the repository gets its own observer and its own state', async () => {
    const p = project('obs-worktree');
    const elsewhere = project('obs-worktree-b', {}, { git: false });
    const wt = join(elsewhere.root, 'wt');
    p.git('worktree', 'add', '-q', wt);
    await runChecks(p);
    await runChecks(p, [], wt);
    const main = start(p);
    const second = start(p, [], { cwd: wt });
    expect(second.action).toBe('started');
    expect(second.pid).not.toBe(main.pid);
    expect(second.socket.startsWith(join(wt, '.vouch'))).toBe(true);
    expect(observerRecords(join(wt, '.vouch')).map((r) => r.record.pid)).toEqual([second.pid]);
    expect(observerRecords(stateDirOf(p)).map((r) => r.record.pid)).toEqual([main.pid]);

    writeFileSync(join(wt, 'src/a.js'), 'export const a = 2;\n');
    const inWorktree = await statusIn(p, [], patient, wt);
    const inMain = await statusIn(p, [], patient);
    expect([inWorktree.observation.source, inMain.observation.source]).toEqual(['observer', 'observer']);
    expect(answersOf(inWorktree).map((a) => a.freshness)).toEqual(['STALE']);
    expect(answersOf(inMain).map((a) => a.freshness)).toEqual(['CURRENT']);
    // Each has its own receipts: the main checkout's run ids are not the worktree's.
    expect(answersOf(inWorktree)[0]?.run_id).not.toBe(answersOf(inMain)[0]?.run_id);

    // A worktree's index lives in the main repository, outside its root: a forced add of an
    // ignored file makes it an input, and only that index says so.
    writeFileSync(join(wt, 'src/a.js'), A_JS);
    mkdirSync(join(wt, 'out'), { recursive: true });
    writeFileSync(join(wt, 'out/extra.js'), 'export const extra = 1;\n');
    await runSettled(p, [], wt);
    expect(answersOf(await statusIn(p, [], patient, wt)).map((a) => a.freshness)).toEqual(['CURRENT']);
    const added = spawnSync('git', ['add', '-f', 'out/extra.js'], { cwd: wt, env: cleanEnv(), encoding: 'utf8' });
    expect(added.status, added.stderr).toBe(0);
    const observed = await statusIn(p, [], patient, wt);
    expect(observed.observation.source).toBe('observer');
    expect(answersOf(observed).map((a) => a.freshness)).toEqual(['STALE']);
    expect(answersOf(await statusIn(p, ['--no-observer'], cleanEnv(), wt))).toEqual(answersOf(observed));
  });
});

describe('the protocol', () => {
  it('answers only its own methods: anything else is a JSON-RPC error and nothing runs', async () => {
    const { p, started } = await shared('plain');
    const receipts = async () => (await jsonIn(p, ['log'])).receipts.length;
    const receiptsBefore = await receipts();
    const ranBefore = ranCount(p);
    const pwned = join(p.root, 'out', 'pwned');
    const exec = ['node', '-e', `require('fs').writeFileSync(${JSON.stringify(pwned)}, '')`];

    const requests: [string, unknown][] = [
      ['run', { checks: ['check'] }],
      ['exec', { command: exec }],
      ['spawn', { command: exec[0], args: exec.slice(1) }],
      ['shell', { command: exec.join(' ') }],
      // Names every object has: a dispatch through a plain object must not find them.
      ['constructor', {}],
      ['__proto__', {}],
      ['toString', {}],
      ['hasOwnProperty', { name: 'run' }],
    ];
    let id = 100;
    for (const [method, params] of requests) {
      const sent = ++id;
      const answer = await rpcExchange(started.socket, JSON.stringify({ jsonrpc: '2.0', id: sent, method, params }) + '\n');
      expect(answer, method).not.toBeNull();
      expect(answer.jsonrpc, method).toBe('2.0');
      expect(answer.id, method).toBe(sent);
      expect(answer.result, method).toBeUndefined();
      expect(answer.error?.code, `${method}: ${JSON.stringify(answer)}`).toBe(-32601);
    }

    const garbage = await rpcExchange(started.socket, 'this is not json\n');
    expect(garbage?.error?.code, JSON.stringify(garbage)).toBe(-32700);

    // Fault injection exists for tests, and only when the observer was started for them.
    const fault = await rpcExchange(started.socket, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'fault', params: { kind: 'overflow' } }) + '\n');
    expect(fault?.error, JSON.stringify(fault)).toBeDefined();

    // A line far past any sane size: refused or cut off, and the observer lives on.
    try {
      await rpcExchange(started.socket, JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping', params: { pad: 'x'.repeat(4 << 20) } }) + '\n', 10_000);
    } catch (error) {
      expect(['EPIPE', 'ECONNRESET']).toContain((error as NodeJS.ErrnoException).code);
    }

    await delay(300);
    expect(existsSync(pwned)).toBe(false);
    expect(ranCount(p)).toBe(ranBefore);
    expect(await receipts()).toBe(receiptsBefore);
    const info = await observerInfoIn(p);
    expect(info).toMatchObject({ running: true, pid: started.pid, healthy: true });
    const status = await statusIn(p, [], patient);
    expect(status.observation.source).toBe('observer');
    expect(answersOf(status).map((a) => a.freshness)).toEqual(['CURRENT']);
  });
});

/**
 * A project whose root (proj/) is a directory of its own, with the config
 * outside it, so that the root can go away while vouch can still be pointed
 * at its config. The state dir is inside the root, as by default, unless it
 * is asked to stay outside, where the observer can still be found once the
 * root is gone.
 */
function detachedRoot(name: string, stateOutside = false): { base: TempProject; root: string; args: string[] } {
  const base = project(
    name,
    {
      'vouch.config.json': JSON.stringify({ schema: 1, root: 'proj', checks: [CHECK] }, null, 2) + '\n',
      'proj/.gitignore': 'out/\nstate/\n',
      'proj/check.cjs': CHECK_JS,
      'proj/src/a.js': A_JS,
      'proj/src/b.js': 'export const b = 2;\n',
    },
    { git: false },
  );
  const root = join(base.root, 'proj');
  for (const args of [['init', '-q'], ['add', '-A'], ['commit', '-qm', 'init']]) {
    const git = spawnSync('git', args, { cwd: root, env: cleanEnv(), encoding: 'utf8' });
    expect(git.status, git.stderr).toBe(0);
  }
  const stateDir = stateOutside ? join(base.root, 'state') : join(root, 'state');
  return { base, root, args: ['--config', join(base.root, 'vouch.config.json'), '--state-dir', stateDir] };
}

/** Status, if anything answers at all: no check may be CURRENT. */
async function expectNoCurrent(base: TempProject, args: string[]): Promise<Json> {
  const result = await inProcess(base).vouch(['status', ...args, '--json'], { env: patient, cwd: base.root });
  let out: Json = null;
  try {
    out = JSON.parse(result.stdout);
  } catch {
    // No JSON at all is no CURRENT either; the exit code says why.
  }
  for (const check of out?.checks ?? []) {
    expect(check.freshness, `${JSON.stringify(check)} from ${JSON.stringify(out.observation)}`).not.toBe('CURRENT');
  }
  return out;
}

/**
 * The observer's own account, straight from its socket: with the root gone
 * the CLI cannot load the project, but the observer must still be there,
 * saying what is wrong.
 */
async function expectUnhealthy(socket: string): Promise<Json> {
  const deadline = Date.now() + 10_000;
  let info: Json = null;
  for (;;) {
    const answer = await rpcExchange(socket, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'info', params: {} }) + '\n');
    expect(answer?.error, JSON.stringify(answer)).toBeUndefined();
    info = answer.result;
    if (info.healthy === false || Date.now() > deadline) break;
    await delay(100);
  }
  expect(info.healthy, JSON.stringify(info)).toBe(false);
  expect(info.reasons.length).toBeGreaterThan(0);
  for (const reason of info.reasons) {
    expect(typeof reason.code).toBe('string');
    expect(typeof reason.message).toBe('string');
  }
  return info;
}

/** Polls until the observer answers, and answers as a scan does. */
async function expectAgreementAgain(base: TempProject, args: string[], what: string): Promise<void> {
  const scanned = async () => JSON.stringify(answersOf((await askedIn(base, [...args, '--no-observer'], cleanEnv(), base.root)).out));
  await until(
    async () => {
      const observed = (await askedIn(base, args, patient, base.root)).out;
      return observed.observation.source === 'observer' && JSON.stringify(answersOf(observed)) === (await scanned());
    },
    what,
    20_000,
    200,
  );
}

describe('a root that goes away', () => {
  it('deleted: the observer stays up and says it is unhealthy, nothing answers CURRENT, and it recovers when the root is back', async () => {
    const { base, root, args } = detachedRoot('obs-rootgone', true);
    await runChecks(base, args, base.root);
    const backup = `${root}-backup`;
    cpSync(root, backup, { recursive: true, verbatimSymlinks: true });
    const started = start(base, args, { cwd: base.root });
    expect(answersOf((await askedIn(base, args, patient, base.root)).out).map((a) => a.freshness)).toEqual(['CURRENT']);

    rmSync(root, { recursive: true, force: true });
    await expectNoCurrent(base, args);
    await expectUnhealthy(started.socket);
    expect(isRunning(started.pid), 'the observer waits for the root rather than exit').toBe(true);
    await expectNoCurrent(base, args);

    // The same tree comes back (other inodes, same bytes): CURRENT again, from the observer too.
    renameSync(backup, root);
    await expectAgreementAgain(base, args, 'the observer to recover once the root is back');
    expect(answersOf((await askedIn(base, args, patient, base.root)).out).map((a) => a.freshness)).toEqual(['CURRENT']);
  });

  it('deleted: vouch observer reports it and vouch stop stops it, although the root is gone', async () => {
    const { base, root, args } = detachedRoot('obs-rootgone-stop', true);
    await runChecks(base, args, base.root);
    const started = start(base, args, { cwd: base.root });
    rmSync(root, { recursive: true, force: true });
    await delay(500);

    const info = await inProcess(base).vouch(['observer', ...args, '--json'], { cwd: base.root });
    expect(info.code, info.stdout + info.stderr).toBe(0);
    expect(JSON.parse(info.stdout)).toMatchObject({ running: true, pid: started.pid, healthy: false });
    const stopped = await inProcess(base).vouch(['stop', ...args, '--json'], { cwd: base.root });
    expect(stopped.code, stopped.stdout + stopped.stderr).toBe(0);
    expect(JSON.parse(stopped.stdout)).toEqual({ schema: 1, action: 'stopped', pid: started.pid });
    expect(await waitGone(started.pid, 2_000)).toBe(true);
  });

  it('moved: unhealthy, never CURRENT; a tree with an edit in its place is STALE, never CURRENT', async () => {
    // The state dir stays outside, so the observer can still be found at the old path's config.
    const { base, root, args } = detachedRoot('obs-rootmoved', true);
    await runChecks(base, args, base.root);
    const started = start(base, args, { cwd: base.root });
    expect(answersOf((await askedIn(base, args, patient, base.root)).out).map((a) => a.freshness)).toEqual(['CURRENT']);

    const moved = `${root}-moved`;
    renameSync(root, moved);
    await expectNoCurrent(base, args);
    await expectUnhealthy(started.socket);
    await expectNoCurrent(base, args);

    // A copy with one edit now sits at the root's path; an inotify watch is still on the moved tree.
    cpSync(moved, root, { recursive: true, verbatimSymlinks: true });
    writeFileSync(join(root, 'src/a.js'), 'export const a = 2;\n');
    const scanned = (await askedIn(base, [...args, '--no-observer'], cleanEnv(), base.root)).out;
    expect(answersOf(scanned).map((a) => a.freshness), 'a scan sees the edit').toEqual(['STALE']);
    await expectNoCurrent(base, args);
    // An edit in the moved tree is not an edit of the project.
    writeFileSync(join(moved, 'src/b.js'), 'export const b = 3;\n');
    await expectNoCurrent(base, args);
  });
});

describe('idle timeout', () => {
  it('--idle-timeout 2s: questions keep it alive; left alone it exits and cleans up', async () => {
    const p = project('obs-idle');
    await runChecks(p);
    const bad = p.vouch(['start', '--idle-timeout', 'soon', '--json']);
    expect(bad.code, bad.stdout).toBe(2);
    expect(liveFiles(stateDirOf(p))).toEqual([]);

    const started = start(p, [], { startArgs: ['--idle-timeout', '2s'] });
    for (let i = 0; i < 4; i++) {
      await delay(800);
      expect((await statusIn(p, [], patient)).observation.source, `question ${i + 1}, ${(i + 1) * 0.8}s in`).toBe('observer');
    }
    const lastQuestion = Date.now();
    expect(isRunning(started.pid), 'asked every 0.8 s, it is not idle').toBe(true);
    expect(await waitGone(started.pid, 15_000), 'it exits once idle').toBe(true);
    expect(Date.now() - lastQuestion).toBeGreaterThanOrEqual(1_500);
    expect(liveFiles(stateDirOf(p))).toEqual([]);
    expect(existsSync(started.socket)).toBe(false);
    expect(await observerInfoIn(p)).toEqual({ schema: 1, running: false });
    expect((await statusIn(p, [])).observation.source).toBe('scan');
  });
});
