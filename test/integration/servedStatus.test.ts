import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { loadProject } from '../../src/api/project.js';
import { ObserverDidNotAnswer, status } from '../../src/api/status.js';
import { statusServer, type ServingObserver } from '../../src/cli/statusServer.js';
import { processStart } from '../../src/fs/processStart.js';
import { callObserver, ObserverUnavailable } from '../../src/observer/client.js';
import { listedObserver } from '../../src/observer/listedObserver.js';
import { answerHere, stopAnsweringHere } from '../../src/observer/localCalls.js';
import { InvalidParams } from '../../src/observer/rpcServer.js';
import { configText } from '../helpers/answers.js';
import { cleanEnv, tempProject, type TempProject } from '../helpers/project.js';

/*
 * The two ends of a served status (docs/observer.md, "A status answered whole") on their own:
 * how the CLI finds the observer it sends its environment to, what the observer refuses to
 * answer for a caller, and the status that is the observer's answer or none.
 */

const dir = mkdtempSync(join(tmpdir(), 'vouch-served-'));
const servers: Server[] = [];
const projects: TempProject[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
  for (const p of projects.splice(0)) p.remove();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const CONFIG = '/somewhere/vouch.config.json';

/** A state dir with an observer dir as the daemon makes it, a listening socket and a record naming both. */
async function observerDir(name: string, record: Record<string, unknown> = {}): Promise<{ stateDir: string; observer: string; socket: string }> {
  const stateDir = join(dir, name);
  const observer = join(stateDir, 'observer');
  mkdirSync(observer, { recursive: true, mode: 0o700 });
  chmodSync(observer, 0o700);
  const socket = join(observer, 'abc.sock');
  const server = createServer();
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(socket, resolve));
  chmodSync(socket, 0o600);
  const written = { schema: 1, pid: process.pid, processStart: processStart(process.pid), socket, configPath: CONFIG, stateDir, ...record };
  writeFileSync(join(observer, 'abc.json'), JSON.stringify(written));
  return { stateDir, observer, socket };
}

describe('listedObserver: the observer a served status sends the caller’s environment to', () => {
  it('is the one whose record names this config and state dir and the socket beside it', async () => {
    const { stateDir, socket } = await observerDir('found');
    expect(listedObserver(stateDir, CONFIG)).toEqual({ socket, pid: process.pid });
    expect(listedObserver(stateDir, '/elsewhere/vouch.config.json')).toBeNull();
  });

  it('is never one a repository could plant: a link for the socket, a directory open to others, another socket, a dead process', async () => {
    // A link where the socket should be, to a real socket elsewhere: git can make a link, not a socket.
    const linked = await observerDir('linked');
    const elsewhere = await observerDir('elsewhere');
    rmSync(linked.socket);
    symlinkSync(elsewhere.socket, linked.socket);
    expect(listedObserver(linked.stateDir, CONFIG)).toBeNull();

    // A checkout's directories are made with the umask's modes, not 0700.
    const open = await observerDir('open');
    chmodSync(open.observer, 0o755);
    expect(listedObserver(open.stateDir, CONFIG)).toBeNull();

    // A record naming any socket but the one beside it.
    const moved = await observerDir('moved', { socket: elsewhere.socket });
    expect(listedObserver(moved.stateDir, CONFIG)).toBeNull();

    // The recorded process is not this one: another start time, or no start time where /proc has one.
    const reused = await observerDir('reused', { processStart: '1' });
    expect(listedObserver(reused.stateDir, CONFIG)).toBeNull();
    const unknown = await observerDir('unknown', { processStart: null });
    expect(listedObserver(unknown.stateDir, CONFIG)).toBeNull();

    // Not JSON, or no observer dir at all.
    const garbled = await observerDir('garbled');
    writeFileSync(join(garbled.observer, 'abc.json'), '{"schema":1,');
    expect(listedObserver(garbled.stateDir, CONFIG)).toBeNull();
    expect(listedObserver(join(dir, 'none'), CONFIG)).toBeNull();
  });
});

function project(): TempProject {
  const p = tempProject('served-server', { 'vouch.config.json': configText([{ name: 'check', kind: 'custom', command: ['node', 'check.cjs'] }]), 'check.cjs': '' });
  projects.push(p);
  return p;
}

describe('statusServer: what the observer answers for a caller', () => {
  const call = (p: TempProject, extra: Record<string, unknown> = {}) => ({ argv: ['--json'], cwd: p.root, env: { PATH: process.env.PATH ?? '' }, node: process.version, version: '1.0.0', build: 'b1', ...extra });
  const own = (p: TempProject): ServingObserver => ({ configPath: join(p.root, 'vouch.config.json'), stateDir: join(p.root, '.vouch'), root: p.root, version: '1.0.0', build: 'b1' });

  it('refuses another build, another version, another Node, another project, and a malformed call', async () => {
    const p = project();
    const serve = statusServer(own(p));
    const refusals: [string, unknown][] = [
      ['another build', call(p, { build: 'b2' })],
      ['another version', call(p, { version: '1.0.1' })],
      ['another Node', call(p, { node: 'v0.0.0' })],
      ['another state dir', call(p, { argv: ['--json', '--state-dir', join(p.root, 'other-state')] })],
      ['another root', call(p, { argv: ['--json', '--root', dir] })],
      ['a relative cwd', call(p, { cwd: 'sub' })],
      ['an env value that is not a string', call(p, { env: { A: 1 } })],
      ['no argv', call(p, { argv: undefined })],
    ];
    for (const [what, params] of refusals) await expect(serve(params), what).rejects.toThrow();
    await expect(serve(call(p, { node: 'v0.0.0' }))).rejects.toBeInstanceOf(InvalidParams);
    // Another config in the same place: the observer answers for its own config only.
    p.write('other.config.json', configText([{ name: 'check', kind: 'custom', command: ['node', 'check.cjs'] }]));
    await expect(serve(call(p, { argv: ['--json', '--config', 'other.config.json'] }))).rejects.toThrow(/another project/);
  });

  it('answers nothing from a scan: with no observer to ask, the status is refused', async () => {
    const p = project();
    await expect(statusServer(own(p))(call(p))).rejects.toBeInstanceOf(ObserverDidNotAnswer);
  });
});

describe('a call to a socket this process serves', () => {
  it('runs the handler here, with JSON both ways as over the socket, and its error as a refusal', async () => {
    // No socket at this path: a call that connected would be refused.
    const socket = join(dir, 'served-here.sock');
    const seen: unknown[] = [];
    answerHere(socket, {
      info: async (params) => {
        seen.push(params);
        return { kept: 1, dropped: undefined, when: new Date(0) };
      },
      stop: async () => {
        throw new Error('not now');
      },
    });
    try {
      expect(await callObserver(socket, 'info', {}, 1_000)).toEqual({ kept: 1, when: '1970-01-01T00:00:00.000Z' });
      expect(seen).toEqual([{}]);
      await expect(callObserver(socket, 'stop', {}, 1_000)).rejects.toThrow(/the observer refused "stop": not now/);
      await expect(callObserver(socket, 'ping', {}, 1_000)).rejects.toBeInstanceOf(ObserverUnavailable);
    } finally {
      stopAnsweringHere(socket);
    }
    await expect(callObserver(socket, 'info', {}, 1_000)).rejects.toThrow(/cannot reach the observer/);
  });
});

describe('status with the observer only, or with one that did not answer', () => {
  it("'only' without an observer rejects, and does not scan", async () => {
    const p = project();
    const loaded = await loadProject({ cwd: p.root });
    await expect(status(loaded, [], cleanEnv(), { observer: 'only', mode: 'sync' })).rejects.toBeInstanceOf(ObserverDidNotAnswer);
  });

  it('an observer that did not answer is not asked again: the status scans and says why', async () => {
    const p = project();
    const loaded = await loadProject({ cwd: p.root });
    const report = await status(loaded, [], cleanEnv(), { observer: 'auto', mode: 'sync', unavailable: 'the observer did not answer "status" within 5 ms' });
    expect(report.observation.source).toBe('scan');
    expect(report.notices).toEqual(['the observer did not answer "status" within 5 ms; observed directly instead']);
    expect(report.checks.map((check) => check.freshness)).toEqual(['UNVERIFIED']);
  });
});
