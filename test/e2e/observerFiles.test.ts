import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { configText } from '../helpers/answers.js';
import { answersOf, isRunning, liveFiles, observerRecords, ObserverTracker, PATIENT, timedStatus } from '../helpers/observer.js';
import { IS_ROOT } from '../helpers/privileges.js';
import { cleanEnv, REPO, tempProject, type TempProject } from '../helpers/project.js';

/*
 * The observer's files under a state dir a repository may have planted: a
 * record is untrusted input, and a link in .vouch/observer must never carry
 * a write, a deletion, a connection or a signal outside.
 */

const projects: TempProject[] = [];
const observers = new ObserverTracker();
const children: ChildProcess[] = [];
const servers: Server[] = [];
const cleanups: Array<() => void> = [];
afterEach(async () => {
  const problems = await observers.cleanup();
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  for (const server of servers.splice(0)) server.close();
  for (const cleanup of cleanups.splice(0)) cleanup();
  for (const p of projects.splice(0)) p.remove();
  expect(problems, 'observers that would not stop').toEqual([]);
});

const CHECK = { name: 'check', kind: 'custom', command: ['node', '-e', '0'], inputs: ['src/**'] };
const FILES = { 'vouch.config.json': configText([CHECK]), '.gitignore': 'out/\n', 'src/a.js': 'export const a = 1;\n' };

function project(name: string): TempProject {
  const p = tempProject(name, FILES);
  projects.push(p);
  return p;
}

/** A directory outside every project, holding files no command may touch. */
function outside(name: string): string {
  mkdirSync(join(REPO, '.tmp'), { recursive: true });
  const dir = mkdtempSync(join(REPO, '.tmp', `${name}-`));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function victimFile(dir: string): { path: string; intact(): void } {
  const path = join(dir, 'precious.txt');
  writeFileSync(path, 'precious\n');
  const before = statSync(path);
  return {
    path,
    intact() {
      expect(existsSync(path), `${path} still exists`).toBe(true);
      expect(readFileSync(path, 'utf8')).toBe('precious\n');
      expect(statSync(path).mtimeMs).toBe(before.mtimeMs);
    },
  };
}

/** Where vouch keeps the record of this project's default observer. */
function recordPath(p: TempProject): string {
  const id = createHash('sha256').update(join(p.root, 'vouch.config.json')).digest('hex').slice(0, 12);
  return join(p.root, '.vouch', 'observer', `${id}.json`);
}

function plantRecord(p: TempProject, fields: { pid: number; processStart: string | null; socket: string }) {
  mkdirSync(join(p.root, '.vouch', 'observer'), { recursive: true, mode: 0o700 });
  const record = {
    schema: 1,
    ...fields,
    version: '0.1.0',
    build: 'x',
    root: p.root,
    configPath: join(p.root, 'vouch.config.json'),
    stateDir: join(p.root, '.vouch'),
    startedAt: Date.now(),
    log: '/dev/null',
  };
  writeFileSync(recordPath(p), JSON.stringify(record));
}

function deadPid(): number {
  const done = spawnSync('true');
  return done.pid;
}

function kernelStart(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? '';
}

function sleeper(): ChildProcess {
  const child = spawn('sleep', ['30'], { stdio: 'ignore' });
  children.push(child);
  return child;
}

/** A Unix socket outside the project that counts who connects to it. */
async function listeningSocket(dir: string): Promise<{ path: string; connections(): number }> {
  const path = join(dir, 's.sock');
  let count = 0;
  const server = createServer((connection) => {
    count++;
    connection.destroy();
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(path, resolve));
  return { path, connections: () => count };
}

describe('an observer record is untrusted input', () => {
  it('a record of a dead pid naming a file outside as its socket: status and stop leave the file alone', () => {
    const p = project('ofiles-dead');
    const victim = victimFile(outside('ofiles-victim'));
    plantRecord(p, { pid: deadPid(), processStart: null, socket: victim.path });
    p.git('add', '-f', '.vouch');
    p.git('commit', '-qm', 'a committed observer record');

    const status = p.vouch(['status', '--json']);
    expect(status.code, status.stderr).toBe(0);
    victim.intact();
    expect(existsSync(recordPath(p)), 'the dead record itself is cleaned up').toBe(false);

    plantRecord(p, { pid: deadPid(), processStart: null, socket: victim.path });
    const stop = p.vouch(['stop', '--json']);
    expect(stop.code, stop.stderr).toBe(0);
    expect(JSON.parse(stop.stdout).action).toBe('not-running');
    victim.intact();
  });

  it('a record naming an outside socket of a live process: status never connects to it, and nothing is removed', async () => {
    const p = project('ofiles-socket');
    const socket = await listeningSocket(outside('ofiles-sock'));
    const live = sleeper();
    plantRecord(p, { pid: live.pid!, processStart: kernelStart(live.pid!), socket: socket.path });

    const status = p.vouch(['status', '--json'], { env: cleanEnv({ VOUCH_OBSERVER_TIMEOUT_MS: '1000' }) });
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout).observation.source).toBe('scan');
    await delay(100); // a connection queued while the CLI ran is accepted now
    expect(socket.connections(), 'connections to a socket outside').toBe(0);
    expect(lstatSync(socket.path).isSocket()).toBe(true);

    const stop = p.vouch(['stop', '--json']);
    expect(stop.code, stop.stderr).toBe(0);
    await delay(100);
    expect(socket.connections()).toBe(0);
    expect(lstatSync(socket.path).isSocket()).toBe(true);
    expect(isRunning(live.pid!)).toBe(true);
  });

  it('stop signals no process but its own observer: a live unrelated pid in the record survives', async () => {
    const p = project('ofiles-pid');
    for (const processStart of [null, 'real']) {
      const live = sleeper();
      const start = processStart === null ? null : kernelStart(live.pid!);
      // The socket path vouch itself would use, so only the pid decides.
      plantRecord(p, { pid: live.pid!, processStart: start, socket: recordPath(p).replace(/\.json$/, '.sock') });
      const stop = p.vouch(['stop', '--json'], { timeout: 30_000 });
      await delay(200);
      expect(isRunning(live.pid!), `sleep (recorded start ${start}) survives vouch stop: ${stop.stdout}${stop.stderr}`).toBe(true);
      expect(live.exitCode).toBe(null);
      expect(live.signalCode).toBe(null);
      live.kill('SIGKILL');
    }
  });
});

describe('links in the state dir', () => {
  it('.vouch/observer as a link: start is refused with state-dir-unsafe, and nothing is written at its target', () => {
    const p = project('ofiles-link');
    const target = outside('ofiles-target');
    mkdirSync(join(p.root, '.vouch'), { mode: 0o700 });
    symlinkSync(target, join(p.root, '.vouch', 'observer'));

    const start = p.vouch(['start', '--json'], { timeout: 60_000 });
    observers.note(p, [], 0);
    expect(start.code, start.stdout + start.stderr).toBe(2);
    expect(JSON.parse(start.stdout).error.code).toBe('state-dir-unsafe');
    expect(readdirSync(target)).toEqual([]);
    for (const command of [['status'], ['stop'], ['observer']]) {
      p.vouch([...command, '--json']);
      expect(readdirSync(target), `after vouch ${command[0]}`).toEqual([]);
    }
  });

  it('a link at the observer log is refused; a link at its record is replaced, never written through', () => {
    const p = project('ofiles-loglink');
    const victim = victimFile(outside('ofiles-logvictim'));
    const record = recordPath(p);
    mkdirSync(join(p.root, '.vouch', 'observer'), { recursive: true, mode: 0o700 });
    symlinkSync(victim.path, record.replace(/\.json$/, '.log'));
    const refused = p.vouch(['start', '--json'], { timeout: 60_000 });
    observers.note(p, [], 0);
    expect(refused.code, refused.stdout + refused.stderr).toBe(2);
    expect(JSON.parse(refused.stdout).error.code).toBe('state-dir-unsafe');
    victim.intact();

    rmSync(record.replace(/\.json$/, '.log'));
    symlinkSync(victim.path, record);
    const started = observers.start(p);
    expect(started.action).toBe('started');
    victim.intact();
    expect(lstatSync(record).isSymbolicLink()).toBe(false);
    expect(observerRecords(join(p.root, '.vouch')).map((r) => r.record.pid)).toEqual([started.pid]);
    expect((statSync(record).mode & 0o777).toString(8)).toBe('600');
    expect((statSync(record.replace(/\.json$/, '.log')).mode & 0o777).toString(8)).toBe('600');
  });
});

describe('barrier cookies', () => {
  it('a link and a directory planted under the cookie names: the observer starts, answers, and nothing outside is touched', () => {
    const p = project('ofiles-cookie');
    const victim = victimFile(outside('ofiles-cookievictim'));
    const prefix = recordPath(p).replace(/\.json$/, '.cookie-');
    mkdirSync(join(p.root, '.vouch', 'observer'), { recursive: true, mode: 0o700 });
    symlinkSync(victim.path, `${prefix}1-1`);
    mkdirSync(`${prefix}planted`);
    expect(p.vouch(['run']).code).toBe(0);

    const started = observers.start(p);
    const env = cleanEnv({ VOUCH_OBSERVER_TIMEOUT_MS: PATIENT });
    for (let i = 0; i < 3; i++) {
      const status = timedStatus(p, [], env).out;
      expect(status.observation.source).toBe('observer');
      expect(answersOf(status).map((a) => a.freshness)).toEqual(['CURRENT']);
    }
    victim.intact();
    // The leftover link went (the link, not its target); the directory stays, harmlessly.
    expect(existsSync(`${prefix}1-1`)).toBe(false);
    expect(p.json(['stop']).pid).toBe(started.pid);
    victim.intact();
  });
});

describe('the fallback socket directory', () => {
  it.skipIf(!IS_ROOT)('a vouch-<uid> directory squatted by another user in the temp dir does not stop an observer with a long socket path', () => {
    const p = project('ofiles-squat');
    // A temp dir of the test's own, sticky and world-writable like /tmp, so the squat cannot disturb other observers.
    const tmp = outside('ofiles-tmp');
    chmodSync(tmp, 0o1777);
    const squatted = join(tmp, `vouch-${process.getuid!()}`);
    mkdirSync(squatted, { mode: 0o755 });
    chownSync(squatted, 65534, 65534);
    const env = cleanEnv({ TMPDIR: tmp, VOUCH_OBSERVER_TIMEOUT_MS: PATIENT });
    delete env.XDG_RUNTIME_DIR;

    const stateDir = join(p.root, 'state', 'a-state-dir-with-a-long-name-'.padEnd(110, 'x'));
    mkdirSync(stateDir, { recursive: true });
    expect(Buffer.byteLength(join(stateDir, 'observer', 'x.sock'))).toBeGreaterThan(107);
    const args = ['--state-dir', stateDir];
    expect(p.vouch(['run', ...args], { env }).code).toBe(0);

    const started = observers.start(p, args, { env });
    expect(started.action).toBe('started');
    expect(started.socket.startsWith(tmp)).toBe(true);
    expect(started.socket.startsWith(squatted + '/')).toBe(false);
    expect(lstatSync(started.socket).isSocket()).toBe(true);
    const dir = lstatSync(join(started.socket, '..'));
    expect(dir.uid).toBe(process.getuid!());
    expect((dir.mode & 0o777).toString(8)).toBe('700');
    const status = timedStatus(p, args, env).out;
    expect(status.observation.source).toBe('observer');
    expect(answersOf(status).map((a) => a.freshness)).toEqual(['CURRENT']);
    expect(lstatSync(squatted).uid).toBe(65534);

    expect(p.json(['stop', ...args], { env }).action).toBe('stopped');
    expect(existsSync(started.socket)).toBe(false);
    expect(liveFiles(stateDir)).toEqual([]);
  });
});
