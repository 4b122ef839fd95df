import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { processStart } from '../../src/fs/processStart.js';
import { inProcess } from '../helpers/inProcess.js';
import { cleanEnv, spawnVouch, tempProject, type TempProject } from '../helpers/project.js';
import { mulberry32, testSeed, withSeed } from '../helpers/seed.js';

/*
 * The check starts a grandchild and writes both pids to a file outside the
 * project (PIDS_FILE, in the test's own temp dir), so writing it changes none
 * of the check's inputs. With QUICK=1 it just passes.
 *
 * A vouch that is killed, interrupted or stopped is a CLI process. The runs that find a lock
 * its dead holder left, and the log read after an interrupt, are asked in this process
 * (test/helpers/inProcess.ts): the same lock recovery and kills, without a Node start each.
 */
const GRAND = `const { spawn } = require('node:child_process');
const { renameSync, writeFileSync } = require('node:fs');
if (process.env.QUICK === '1') process.exit(0);
const child = spawn('sleep', ['30'], { stdio: 'ignore' });
writeFileSync(process.env.PIDS_FILE + '.new', process.pid + ' ' + child.pid);
renameSync(process.env.PIDS_FILE + '.new', process.env.PIDS_FILE);
setInterval(() => {}, 1000);
`;

let project: TempProject | undefined;
let pidsDir: string | undefined;
/** Processes a test started, with their start times, so that cleanup never hits a pid reused meanwhile. */
const spawned: { pid: number; start: string | null }[] = [];
function track(pids: readonly number[]) {
  for (const pid of pids) spawned.push({ pid, start: processStart(pid) });
}
const started: ChildProcess[] = [];

afterEach(() => {
  // Whatever a failing test left running is ended here, so it cannot outlive the suite.
  for (const { pid, start } of spawned.splice(0)) {
    if (start === null || processStart(pid) !== start) continue;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
  for (const child of started.splice(0)) child.kill('SIGKILL');
  project?.remove();
  project = undefined;
  if (pidsDir) rmSync(pidsDir, { recursive: true, force: true });
  pidsDir = undefined;
});

type Mode = 'declared' | 'traced';

function grandProject(mode: Mode = 'declared') {
  pidsDir = mkdtempSync(join(tmpdir(), 'vouch-orphans-'));
  return tempProject('orphans', {
    'vouch.config.json': JSON.stringify({ schema: 1, checks: [{ name: 'grand', kind: 'custom', command: ['node', 'grand.cjs'], inputs: ['grand.cjs'], mode }] }),
    'grand.cjs': GRAND,
  });
}

/** A traced check runs under strace, in the same group: tests of both modes, the traced one skipped without strace. */
const STRACE = process.platform === 'linux' && spawnSync('strace', ['-V']).status === 0;
const MODES: { mode: Mode; skip: boolean; title: string }[] = [
  { mode: 'declared', skip: false, title: 'a declared check' },
  { mode: 'traced', skip: !STRACE, title: STRACE ? 'a traced check (under strace)' : 'a traced check (SKIPPED: strace is not on PATH; apt-get install strace)' },
];

/** Running, not a zombie (an orphan nobody reaps stays in the process table as Z), and not a later process given the same pid. */
function running(pid: number): boolean {
  const tracked = spawned.find((entry) => entry.pid === pid);
  if (tracked?.start && processStart(pid) !== tracked.start) return false;
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^[ZX]/.test(stat.slice(stat.lastIndexOf(')') + 2));
  } catch {
    return false;
  }
}

async function until(condition: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (condition()) return true;
    if (Date.now() > deadline) return false;
    await delay(20);
  }
}

function startRun(root: string, pidsFile: string) {
  const child = spawnVouch(root, ['run', 'grand'], cleanEnv({ PIDS_FILE: pidsFile }));
  started.push(child);
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.stdout.resume();
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
  return { child, exited, stderr: () => stderr };
}

async function checkPids(pidsFile: string): Promise<[number, number]> {
  const appeared = await until(() => existsSync(pidsFile), 15_000);
  expect(appeared, 'the check to start its grandchild').toBe(true);
  const pids = readFileSync(pidsFile, 'utf8').trim().split(' ').map(Number) as [number, number];
  track(pids);
  return pids;
}

// The kill moments are drawn from VOUCH_SEED, or a fixed seed (test/helpers/seed.ts).
const KILL_SEED = testSeed(import.meta.url, 3);

describe.each(MODES)('the check dies with vouch: $title', ({ mode, skip }) => {
  it.skipIf(skip)('kill -9 of vouch at random moments while the check runs leaves no process of the check, and no lock that blocks the next run', { timeout: 90_000 }, () =>
    withSeed(KILL_SEED, async () => {
      project = grandProject(mode);
      const root = project.root;
      const survivors: string[] = [];
      const moment = mulberry32(KILL_SEED.value);
      const lock = join(root, '.vouch', 'locks', 'grand.lock');
      const recordedGroup = () => {
        try {
          return (JSON.parse(readFileSync(lock, 'utf8')) as { checkPgid?: number }).checkPgid ?? null;
        } catch {
          return null;
        }
      };
      for (let i = 0; i < 20; i++) {
        const pidsFile = join(pidsDir!, `pids-${i}`);
        const run = startRun(root, pidsFile);
        let pids: number[];
        if (i % 4 === 3) {
          // Right after the spawn: the check may still be starting, its grandchild not yet there.
          expect(await until(() => recordedGroup() !== null, 15_000), 'the lock to record the check').toBe(true);
          pids = [recordedGroup()!];
          track(pids);
        } else {
          // While the check and its grandchild run, at a random moment.
          pids = await checkPids(pidsFile);
          await delay(Math.floor(moment() * 300));
        }
        run.child.kill('SIGKILL');
        const exit = await run.exited;
        expect(exit.signal, run.stderr()).toBe('SIGKILL');
        await until(() => !pids.some(running), 2_000);
        // A grandchild that appeared after the kill is the check's too.
        if (existsSync(pidsFile)) pids = [...new Set([...pids, ...readFileSync(pidsFile, 'utf8').trim().split(' ').map(Number)])];
        track(pids);
        await until(() => !pids.some(running), 2_000);
        for (const pid of pids.filter(running)) survivors.push(`run ${i}: pid ${pid}`);
      }
      expect(survivors).toEqual([]);

      // The last kill left its lock; the next run recovers it at once and completes.
      const next = await inProcess(project).vouch(['run', 'grand', '--json'], { env: cleanEnv({ QUICK: '1' }) });
      expect(next.code, next.stderr).toBe(0);
      expect(next.stderr).not.toMatch(/waiting for grand/);
      expect(JSON.parse(next.stdout).runs[0]).toMatchObject({ action: 'ran', exit_code: 0, receipt: { result: 'PASS', evidence: { mode } } });
      expect(existsSync(join(root, '.vouch', 'locks', 'grand.lock'))).toBe(false);
      // The killed runs' trace logs are gone with the next run of the check.
      if (mode === 'traced') expect(readdirSync(join(root, '.vouch', 'traces'))).toEqual([]);
    }));

  it.skipIf(skip)('SIGINT to vouch reaches the whole group of the check, its grandchild too, and vouch exits 130', { timeout: 30_000 }, async () => {
    project = grandProject(mode);
    const pidsFile = join(pidsDir!, 'pids');
    const run = startRun(project.root, pidsFile);
    const [check, grandchild] = await checkPids(pidsFile);
    run.child.kill('SIGINT');
    const exit = await run.exited;
    expect(exit.code, run.stderr()).toBe(130);
    await until(() => !running(check) && !running(grandchild), 2_000);
    expect({ check: running(check), grandchild: running(grandchild) }).toEqual({ check: false, grandchild: false });
    const [receipt] = (await inProcess(project).json(['log', 'grand'])).receipts;
    expect(receipt.reasons.map((r: { code: string }) => r.code)).toContain('interrupted');
  });
});

describe('job control', () => {
  function state(pid: number): string {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  }

  it('SIGTSTP to vouch (Ctrl-Z) stops the check\'s group with it, and SIGCONT continues both', { timeout: 30_000 }, async () => {
    project = grandProject();
    const pidsFile = join(pidsDir!, 'pids');
    const run = startRun(project.root, pidsFile);
    const [check, grandchild] = await checkPids(pidsFile);
    const vouch = run.child.pid!;
    run.child.kill('SIGTSTP');
    expect(await until(() => [vouch, check, grandchild].every((pid) => state(pid) === 'T'), 5_000), 'all three stopped').toBe(true);
    run.child.kill('SIGCONT');
    expect(await until(() => [vouch, check, grandchild].every((pid) => state(pid) !== 'T'), 5_000), 'all three continued').toBe(true);
    run.child.kill('SIGINT');
    expect((await run.exited).code, run.stderr()).toBe(130);
  });
});

describe('a stale lock whose check still runs', () => {
  function lockProject() {
    const p = tempProject('orphans-lock', {
      'vouch.config.json': JSON.stringify({ schema: 1, checks: [{ name: 't', kind: 'custom', command: ['node', '-e', '0'] }] }),
    });
    mkdirSync(join(p.root, '.vouch', 'locks'), { recursive: true });
    return p;
  }

  /** A process group like a check's: sh leads it, a sleep is its member. Returns [leader, member]. */
  async function group(leaderExits: boolean): Promise<[number, number]> {
    const script = leaderExits ? 'sleep 30 & echo $!' : 'sleep 30 & echo $!; wait';
    const leader = spawn('/bin/sh', ['-c', script], { detached: true, stdio: ['ignore', 'pipe', 'ignore'] });
    started.push(leader);
    const member = await new Promise<number>((resolve) => leader.stdout.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim()))));
    track([member]);
    if (leaderExits) await new Promise((resolve) => (leader.exitCode === null ? leader.once('exit', resolve) : resolve(null)));
    return [leader.pid!, member];
  }

  /** The record a dead vouch left: its pid is this process's, with a start time that is not, so it reads as gone. */
  function staleLock(p: TempProject, checkPgid: number, checkStart: string | null, boot: string | null = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()) {
    const holder = { pid: process.pid, runId: '20000101T000000Z-dead00', check: 't', startedAt: Date.now() - 60_000, processStart: '1', checkPgid, checkStart, bootId: boot };
    writeFileSync(join(p.root, '.vouch', 'locks', 't.lock'), JSON.stringify(holder));
  }

  it('the next run kills the recorded group when its leader is the recorded process', async () => {
    project = lockProject();
    const [leader, member] = await group(false);
    staleLock(project, leader, processStart(leader));
    const run = await inProcess(project).vouch(['run', 't']);
    expect(run.code, run.stderr).toBe(0);
    expect(await until(() => !running(leader) && !running(member), 2_000)).toBe(true);
  });

  it('the next run kills the recorded group when its leader is gone but members live on', async () => {
    project = lockProject();
    const [leader, member] = await group(true);
    expect(running(member)).toBe(true);
    staleLock(project, leader, '12345');
    const run = await inProcess(project).vouch(['run', 't']);
    expect(run.code, run.stderr).toBe(0);
    expect(await until(() => !running(member), 2_000)).toBe(true);
  });

  it('a lock that names no boot of this machine (one a repository carried) signals nothing, even a leaderless group', async () => {
    for (const boot of [null, '00000000-0000-0000-0000-000000000000']) {
      project = lockProject();
      const [leader, member] = await group(true);
      staleLock(project, leader, '12345', boot);
      const run = await inProcess(project).vouch(['run', 't']);
      expect(run.code, run.stderr).toBe(0);
      await delay(300);
      expect(running(member), `boot ${boot}`).toBe(true);
      project.remove();
    }
  });

  it('a group whose leader started at another time (a reused pid) is left alone', async () => {
    project = lockProject();
    const [leader, member] = await group(false);
    staleLock(project, leader, '1');
    const run = await inProcess(project).vouch(['run', 't']);
    expect(run.code, run.stderr).toBe(0);
    await delay(300);
    expect({ leader: running(leader), member: running(member) }).toEqual({ leader: true, member: true });
  });
});
