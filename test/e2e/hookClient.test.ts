import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, utimesSync } from 'node:fs';
import { createServer, createConnection } from 'node:net';
import { basename, dirname, join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { hookSocketPath } from '../../src/agents/hookSocket.js';
import { encodeHookAnswer, MAX_SERVERS, parseHookRequest } from '../../src/agents/hookServer.js';
import type { Json } from '../helpers/answers.js';
import { claudeBash } from '../helpers/hookInput.js';
import { hookServersUnder, killHookServers } from '../helpers/hookServers.js';
import { until } from '../helpers/observer.js';
import { CLI, cleanEnv, REPO, tempProject, type TempProject } from '../helpers/project.js';

const TMP = join(REPO, '.tmp');

/*
 * The native hook client (build/Release/vouch_hook) and the resident server it
 * asks: every answer must be the Node hook's, byte for byte, whether a server
 * answered or not; a server must never answer a caller it was not made for;
 * and nothing a directory holds may make the client talk to a socket another
 * user could have put there.
 */

const CLIENT = join(REPO, 'build', 'Release', 'vouch_hook');
const available = process.platform === 'linux' && existsSync(CLIENT);

const runtimeDirs: string[] = [];
/** Files kept beside a project (a hook log there would be one of its sources). */
const besides: string[] = [];
afterEach(() => {
  for (const file of besides.splice(0)) rmSync(file, { force: true });
  for (const dir of runtimeDirs.splice(0)) {
    killHookServers(dir);
    rmSync(dir, { recursive: true, force: true });
  }
});

const FILES: Record<string, string> = {
  'vouch.config.json': JSON.stringify({ schema: 1, packageManager: 'npm', checks: [{ name: 'typecheck', kind: 'typecheck', script: 'typecheck' }, { name: 'test', kind: 'test', script: 'test' }] }, null, 2) + '\n',
  'package.json': JSON.stringify({ name: 'fx', version: '1.0.0', private: true, scripts: { typecheck: 'node check.cjs', test: 'node check.cjs' } }, null, 2) + '\n',
  '.gitignore': 'node_modules/\n',
  'check.cjs': 'console.log("checked"); process.exit(0);\n',
  'src/a.js': 'export const a = 1;\n',
};

/**
 * The project every test asks about: a receipt for typecheck (so it is denied) and none for test
 * (so it is rewritten). Made once: a hook only reads it (and appends to the ledger in its state
 * dir), and each test's servers live in a runtime dir of that test's own.
 */
let shared: TempProject | undefined;
function project(): TempProject {
  if (shared) return shared;
  shared = tempProject('hook-client', FILES);
  const ran = shared.vouch(['run', 'typecheck']);
  expect(ran.code, ran.stderr).toBe(0);
  return shared;
}
afterAll(() => shared?.remove());

/** An environment whose hook servers live in a directory of this test's own. */
function isolatedEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const dir = mkdtempSync(join(TMP, 'hook-runtime-'));
  chmodSync(dir, 0o700);
  runtimeDirs.push(dir);
  const env = cleanEnv({ XDG_RUNTIME_DIR: dir, VOUCH_HOOK_SERVER_IDLE_MS: '60000', ...extra });
  delete env._;
  return env;
}

interface HookRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

function viaClient(stdin: string, cwd: string, env: NodeJS.ProcessEnv, args: string[] = ['claude']): HookRun {
  return ran(spawnSync(CLIENT, [process.execPath, CLI, 'hook', ...args], { cwd, env, input: stdin, encoding: 'utf8', timeout: 60_000 }));
}

/** The Node hook as the client falls back to it: told it was reached through the client, whose rewrites run through it. */
function viaNode(stdin: string, cwd: string, env: NodeJS.ProcessEnv, args: string[] = ['claude']): HookRun {
  return ran(spawnSync(process.execPath, [CLI, 'hook', ...args, '--client'], { cwd, env, input: stdin, encoding: 'utf8', timeout: 60_000 }));
}

/** A deny says how long ago its receipt's run was, which moves between two calls: the one part not compared. */
function ran(result: ReturnType<typeof spawnSync>): HookRun {
  if (result.error) throw result.error;
  return { code: result.status, stdout: String(result.stdout).replace(/\b\d+ (s|sec|secs|min|mins|h|hours?) ago\b/g, 'N ago'), stderr: String(result.stderr) };
}

function socketOf(env: NodeJS.ProcessEnv): string {
  const path = hookSocketPath(env, process.execPath, CLI);
  expect(path).not.toBeNull();
  return path!;
}

const serversUnder = hookServersUnder;

async function serverUp(env: NodeJS.ProcessEnv): Promise<void> {
  const socket = socketOf(env);
  await until(() => existsSync(socket), `a hook server at ${socket}`, 15_000);
}

/** Whether the last Bash decision in the hook log was answered by a server. */
function lastAnsweredByServer(log: string): boolean {
  const lines = readFileSync(log, 'utf8').trimEnd().split('\n');
  return (JSON.parse(lines.at(-1)!) as Json).server === true;
}

describe.skipIf(!available)('the native hook client', () => {
  beforeAll(() => {
    expect(lstatSync(CLIENT).mode & 0o111).not.toBe(0);
  });

  it('answers exactly as the Node hook, first through Node (starting a server), then through the server', async () => {
    const p = project();
    const log = join(p.root, '..', `${p.root.split('/').pop()}-hook.log`);
    besides.push(log);
    const env = isolatedEnv({ VOUCH_HOOK_LOG: log });
    const calls: Array<{ stdin: string; args?: string[] }> = [
      { stdin: JSON.stringify(claudeBash(p.root, 'npm run typecheck')) },
      { stdin: JSON.stringify(claudeBash(p.root, 'npm test 2>&1 | tail -5')) },
      { stdin: JSON.stringify(claudeBash(p.root, 'ls -la && git status')) },
      { stdin: JSON.stringify(claudeBash(p.root, `npm run typecheck # ${'x'.repeat(200_000)}`)) },
      { stdin: JSON.stringify(claudeBash(p.root, 'npm run typecheck')), args: ['claude', '--shadow'] },
      { stdin: JSON.stringify({ ...claudeBash(p.root, 'npm run typecheck'), tool_input: { command: 'npm run typecheck' } }), args: ['codex'] },
      { stdin: '{not json' },
      { stdin: JSON.stringify({ hook_event_name: 'Stop', session_id: 'x' }) },
    ];
    const expected = calls.map((call) => viaNode(call.stdin, p.root, env, call.args));
    expect(expected[0]!.stdout).toContain('"permissionDecision":"deny"');
    expect(expected[1]!.stdout).toContain('run test --if-due');
    expect(expected[2]!.stdout).toBe('');

    expect(existsSync(socketOf(env))).toBe(false);
    // No server yet: the Node hook answers, then starts one.
    expect(viaClient(calls[0]!.stdin, p.root, env)).toEqual(expected[0]);
    expect(lastAnsweredByServer(log)).toBe(false);
    await serverUp(env);
    for (const [index, call] of calls.entries()) {
      expect(viaClient(call.stdin, p.root, env, call.args), `call ${index}`).toEqual(expected[index]);
    }
    expect(lastAnsweredByServer(log)).toBe(true);
    expect(serversUnder(env.XDG_RUNTIME_DIR!)).toHaveLength(1);
  });

  it('a different environment gets a server of its own, and a server refuses any environment but its own', async () => {
    const p = project();
    const env = isolatedEnv();
    const stdin = JSON.stringify(claudeBash(p.root, 'npm run typecheck'));
    viaClient(stdin, p.root, env);
    await serverUp(env);
    const other = { ...env, NODE_ENV: 'production' };
    expect(socketOf(other)).not.toBe(socketOf(env));
    expect(viaClient(stdin, p.root, other)).toEqual(viaNode(stdin, p.root, other));
    await serverUp(other);
    expect(serversUnder(env.XDG_RUNTIME_DIR!)).toHaveLength(2);

    // Straight to the first server, claiming the other environment: it says to ask the Node hook.
    const entries = Object.entries(other).map(([key, value]) => `${key}=${value}\0`);
    const answer = await exchange(socketOf(env), request({ env: entries.join(''), cwd: p.root, stdin }));
    expect(answer.subarray(4, 8).readUInt32LE()).toBe(1);
    const own = Object.entries(env).map(([key, value]) => `${key}=${value}\0`);
    const answered = await exchange(socketOf(env), request({ env: own.join(''), cwd: p.root, stdin }));
    expect(answered.subarray(4, 8).readUInt32LE()).toBe(0);
    // Another Node or entry script, even with the same environment: not its caller.
    const wrongNode = await exchange(socketOf(env), request({ env: own.join(''), cwd: p.root, stdin, node: '/bin/sh' }));
    expect(wrongNode.subarray(4, 8).readUInt32LE()).toBe(1);
    // A Node named without a slash would be looked up on the caller's PATH: not repeated here, so Node answers.
    const bareNode = await exchange(socketOf(env), request({ env: own.join(''), cwd: p.root, stdin, node: 'node' }));
    expect(bareNode.subarray(4, 8).readUInt32LE()).toBe(1);
    // A relative entry script is taken from the caller's cwd, as Node takes it: the same script, so the server answers.
    const relative = await exchange(socketOf(env), request({ env: own.join(''), cwd: REPO, stdin, entry: join('dist', 'bin', 'main.js') }));
    expect(relative.subarray(4, 8).readUInt32LE()).toBe(0);
    const elsewhere = await exchange(socketOf(env), request({ env: own.join(''), cwd: p.root, stdin, entry: join('dist', 'bin', 'main.js') }));
    expect(elsewhere.subarray(4, 8).readUInt32LE()).toBe(1);
  });

  it('never connects to a socket in a directory others can enter, or through a link', async () => {
    const p = project();
    const stdin = JSON.stringify(claudeBash(p.root, 'npm run typecheck'));
    for (const shape of ['group-writable', 'link'] as const) {
      const env = isolatedEnv();
      const runtime = env.XDG_RUNTIME_DIR!;
      const socket = socketOf(env);
      let dir = join(runtime, 'vouch');
      if (shape === 'link') {
        const real = join(runtime, 'elsewhere');
        mkdirSync(real, { mode: 0o700 });
        symlinkSync(real, dir);
        dir = real;
      } else {
        mkdirSync(dir, { mode: 0o700 });
        chmodSync(dir, 0o770);
      }
      // A server someone else could have put there: it must never be asked.
      let connections = 0;
      const fake = createServer((connection) => {
        connections += 1;
        connection.end(encodeHookAnswer(0, 0, '{"hookSpecificOutput":{"permissionDecision":"allow"}}\n', ''));
      });
      await new Promise<void>((resolve) => fake.listen(join(dir, socket.split('/').pop()!), resolve));
      try {
        expect(viaClient(stdin, p.root, env), shape).toEqual(viaNode(stdin, p.root, env));
        expect(connections, shape).toBe(0);
        // Nor does the Node hook start a server there.
        await new Promise((resolve) => setTimeout(resolve, 500));
        expect(serversUnder(runtime), shape).toEqual([]);
      } finally {
        await new Promise((resolve) => fake.close(resolve));
      }
    }
  });

  it('a killed server is replaced; a server whose build changed steps aside; an idle one stops', async () => {
    const p = project();
    // The client's deadline is part of the environment, so the server made for it is the one that hangs below.
    const env = isolatedEnv({ VOUCH_HOOK_CLIENT_TIMEOUT_MS: '2000' });
    const stdin = JSON.stringify(claudeBash(p.root, 'npm run typecheck'));
    const expected = viaNode(stdin, p.root, env);
    viaClient(stdin, p.root, env);
    await serverUp(env);
    const [first] = serversUnder(env.XDG_RUNTIME_DIR!);
    process.kill(first!, 'SIGKILL');
    await until(() => serversUnder(env.XDG_RUNTIME_DIR!).length === 0, 'the server gone', 10_000);
    // Its socket is left behind: refused, so the Node hook answers and starts another.
    const stale = lstatSync(socketOf(env)).ino;
    expect(viaClient(stdin, p.root, env)).toEqual(expected);
    await until(() => existsSync(socketOf(env)) && lstatSync(socketOf(env)).ino !== stale, 'a new server in its place', 15_000);

    // A hung server: the client gives up at its deadline and the Node hook answers.
    const [second] = serversUnder(env.XDG_RUNTIME_DIR!);
    process.kill(second!, 'SIGSTOP');
    try {
      const started = Date.now();
      expect(viaClient(stdin, p.root, env)).toEqual(expected);
      expect(Date.now() - started).toBeGreaterThanOrEqual(2000);
    } finally {
      process.kill(second!, 'SIGCONT');
    }
    process.kill(second!, 'SIGKILL');

    // A build change: a copy of the entry script beside the real one, touched after its server started.
    const copy = join(REPO, 'dist', 'bin', `main-hook-test-${process.pid}.js`);
    copyFileSync(CLI, copy);
    try {
      const firstCall = spawnSync(CLIENT, [process.execPath, copy, 'hook', 'claude'], { cwd: p.root, env, input: stdin, encoding: 'utf8' });
      expect(ran(firstCall).stdout).toBe(expected.stdout);
      const socket = hookSocketPath(env, process.execPath, copy)!;
      await until(() => existsSync(socket), 'a server for the copy', 15_000);
      const future = new Date(Date.now() + 5_000);
      utimesSync(copy, future, future);
      const again = spawnSync(CLIENT, [process.execPath, copy, 'hook', 'claude'], { cwd: p.root, env, input: stdin, encoding: 'utf8' });
      expect(ran(again).stdout).toBe(expected.stdout);
      await until(() => !existsSync(socket), 'the stale server gone', 10_000);
    } finally {
      rmSync(copy, { force: true });
    }

    // Idle: a server told to stop after 300 ms of quiet removes its socket and exits.
    const idle = isolatedEnv({ VOUCH_HOOK_SERVER_IDLE_MS: '300' });
    viaClient(stdin, p.root, idle);
    await serverUp(idle);
    await until(() => !existsSync(socketOf(idle)) && serversUnder(idle.XDG_RUNTIME_DIR!).length === 0, 'the idle server gone', 10_000);
  });

  it(`at most ${MAX_SERVERS} servers run in one directory; a dead one's socket does not count and is removed`, async () => {
    const p = project();
    const base = isolatedEnv();
    const stdin = JSON.stringify(claudeBash(p.root, 'npm run typecheck'));
    const envs = Array.from({ length: MAX_SERVERS + 1 }, (_, index) => ({ ...base, HOOK_CAP_CASE: String(index) }));
    for (const env of envs.slice(0, MAX_SERVERS)) {
      viaClient(stdin, p.root, env);
      await serverUp(env);
    }
    const extra = envs[MAX_SERVERS]!;
    expect(viaClient(stdin, p.root, extra)).toEqual(viaNode(stdin, p.root, extra));
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(existsSync(socketOf(extra))).toBe(false);
    expect(serversUnder(base.XDG_RUNTIME_DIR!)).toHaveLength(MAX_SERVERS);

    // The refusal is marked, so that for a minute the Node hook starts no server that would only refuse.
    const full = join(base.XDG_RUNTIME_DIR!, 'vouch', 'hook-servers.full');
    expect(existsSync(full)).toBe(true);

    // One dies without removing its socket. Once the mark is a minute old, the next server starts, and that socket is gone.
    const [victim] = serversUnder(base.XDG_RUNTIME_DIR!);
    const victimSocket = envs.map(socketOf).find((path) => readFileSync(`/proc/${victim}/cmdline`, 'utf8').includes(path))!;
    process.kill(victim!, 'SIGKILL');
    await until(() => !serversUnder(base.XDG_RUNTIME_DIR!).includes(victim!), 'the killed server gone', 10_000);
    expect(existsSync(victimSocket)).toBe(true);
    viaClient(stdin, p.root, extra);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(existsSync(socketOf(extra)), 'no server while the mark is fresh').toBe(false);
    const past = new Date(Date.now() - 61_000);
    utimesSync(full, past, past);
    viaClient(stdin, p.root, extra);
    await serverUp(extra);
    expect(existsSync(victimSocket)).toBe(false);
  });

  it('a socket that cannot be made is marked, and the Node hook starts no server for it for a minute', async () => {
    const p = project();
    const env = isolatedEnv();
    const stdin = JSON.stringify(claudeBash(p.root, 'npm run typecheck'));
    const socket = socketOf(env);
    // A directory where the socket should go: the server binds, cannot rename its socket into place, and says so.
    mkdirSync(join(socket, 'in-the-way'), { recursive: true, mode: 0o700 });
    const served = spawnSync(process.execPath, [CLI, 'hook', 'serve', socket], { env, encoding: 'utf8', timeout: 30_000 });
    expect(served.status).not.toBe(0);
    expect(existsSync(`${socket}.failed`)).toBe(true);
    // Nothing else left behind: the marker beside the directory in the way, and no temporary socket.
    expect(readdirSync(dirname(socket)).sort()).toEqual([basename(socket), `${basename(socket)}.failed`].sort());
    // The client's fallback asks the Node hook to start one: it answers, and starts none.
    const asked = ran(spawnSync(process.execPath, [CLI, 'hook', 'claude', '--serve', socket], { cwd: p.root, env, input: stdin, encoding: 'utf8' }));
    expect(asked).toEqual(viaNode(stdin, p.root, env));
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(serversUnder(env.XDG_RUNTIME_DIR!)).toEqual([]);
  });

  it('VOUCH_HOOK_SERVER=0 keeps every call in a Node hook, and starts no server', async () => {
    const p = project();
    const env = isolatedEnv({ VOUCH_HOOK_SERVER: '0' });
    const stdin = JSON.stringify(claudeBash(p.root, 'npm run typecheck'));
    expect(viaClient(stdin, p.root, env)).toEqual(viaNode(stdin, p.root, env));
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(serversUnder(env.XDG_RUNTIME_DIR!)).toEqual([]);
    expect(existsSync(join(env.XDG_RUNTIME_DIR!, 'vouch'))).toBe(false);
  });

  it('a malformed call gets the Node hook\'s usage line, and exits 0', () => {
    const p = project();
    const env = isolatedEnv();
    for (const args of [['nobody'], ['claude', '--loud'], ['claude', '--shadow', 'x'], ['claude', '--shadow', 'x', 'y', 'z']]) {
      expect(viaClient('{}', p.root, env, args), args.join(' ')).toEqual(viaNode('{}', p.root, env, args));
    }
    const bare = spawnSync(CLIENT, [], { encoding: 'utf8' });
    expect(bare.status).toBe(0);
    expect(bare.stderr).toMatch(/vouch agent setup/);
  });
});

describe('the hook server protocol', () => {
  it('reads a whole request and nothing else', () => {
    const whole = request({ env: 'A=1\0B=2\0', cwd: '/x', stdin: '{}' });
    expect(parseHookRequest(whole)).toEqual({ node: process.execPath, entry: CLI, args: ['hook', 'claude'], cwd: '/x', env: ['A=1', 'B=2'], stdin: Buffer.from('{}') });
    expect(parseHookRequest(whole.subarray(0, whole.length - 1))).toBeNull();
    expect(parseHookRequest(Buffer.concat([whole, Buffer.from('x')]))).toBeNull();
    const badMagic = Buffer.from(whole);
    badMagic.write('XXXX', 0);
    expect(parseHookRequest(badMagic)).toBeNull();
    const lying = Buffer.from(whole);
    lying.writeUInt32LE(0xffffffff, 8);
    expect(parseHookRequest(lying)).toBeNull();
  });
});

/** A request as the client writes it. */
function request(parts: { env: string; cwd: string; stdin: string; node?: string; entry?: string }): Buffer {
  const fields = [parts.node ?? process.execPath, parts.entry ?? CLI, 'hook\0claude\0', parts.cwd, parts.env, parts.stdin].map((text) => {
    const bytes = Buffer.from(text);
    const length = Buffer.alloc(4);
    length.writeUInt32LE(bytes.length);
    return Buffer.concat([length, bytes]);
  });
  const body = Buffer.concat(fields);
  const head = Buffer.alloc(8);
  head.write('VHK1', 0);
  head.writeUInt32LE(body.length, 4);
  return Buffer.concat([head, body]);
}

function exchange(socket: string, bytes: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const connection = createConnection(socket, () => connection.write(bytes));
    connection.on('data', (chunk: Buffer) => chunks.push(chunk));
    connection.on('end', () => resolve(Buffer.concat(chunks)));
    connection.on('error', reject);
  });
}

