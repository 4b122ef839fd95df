import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { hookSocketPath } from '../../src/agents/hookSocket.js';
import { probeTracing } from '../../src/exec/trace/tracer.js';
import { shellQuote } from '../../src/agents/shellQuote.js';
import { claudeBash } from '../helpers/hookInput.js';
import { hookServersUnder, killHookServers } from '../helpers/hookServers.js';
import { until } from '../helpers/observer.js';
import { SETTLE_MS } from '../helpers/settle.js';
import { CLI, cleanEnv, REPO, tempProject, type TempProject } from '../helpers/project.js';

/*
 * A rewritten command's run through the native client (build/Release/vouch_hook
 * NODE MAIN run CHECK --if-due): the resident server decides, observes and keeps
 * the receipt, and the client starts the check itself (native/clientRun.c). What
 * the caller sees (output, exit code) and what is kept (receipt, log) must be
 * what `vouch run` gives; a lost client or server may cost the receipt, never a
 * wrong one. Every call here is a process: the client, its server and the check.
 */

const CLIENT = join(REPO, 'build', 'Release', 'vouch_hook');
const available = process.platform === 'linux' && existsSync(CLIENT);
const TRACING = available && probeTracing().available;
const TMP = join(REPO, '.tmp');

// The check says who started it (its parent's name: the client, or Node when the client fell
// back), and waits for a file named `hold` to go when one is there. `code` and `hold` are not inputs.
const CHECK = `const fs = require('node:fs');
const comm = (pid) => fs.readFileSync('/proc/' + pid + '/comm', 'utf8').trim();
const ppidOf = (pid) => Number(fs.readFileSync('/proc/' + pid + '/stat', 'utf8').split(')').pop().trim().split(' ')[1]);
let parent = comm(process.ppid);
if (parent === 'strace') parent += ' under ' + comm(ppidOf(process.ppid));
console.log('started by ' + parent);
console.error('to stderr');
fs.writeFileSync('pid', String(process.pid));
process.on('SIGINT', () => { console.log('got SIGINT'); process.exit(130); });
const wait = () => { if (fs.existsSync('hold')) return setTimeout(wait, 20); if (fs.existsSync('many')) for (let i = 0; i < 5000; i++) console.log('line ' + i); const code = fs.existsSync('code') ? fs.readFileSync('code', 'utf8').trim() : '0'; if (code === 'TERM') process.kill(process.pid, 'SIGTERM'); else process.exit(Number(code)); };
wait();
`;

const FILES: Record<string, string> = {
  'vouch.config.json': JSON.stringify({ schema: 1, checks: [{ name: 'check', kind: 'custom', command: ['node', 'check.cjs'], inputs: ['*.cjs', 'src/**'] }, { name: 'traced', kind: 'custom', command: ['node', 'check.cjs', 'traced'], mode: 'traced' }] }, null, 2) + '\n',
  '.gitignore': 'code\nhold\nmany\npid\n',
  'check.cjs': CHECK,
  'src/a.js': 'export const a = 1;\n',
};

// One project and one server for the file, in order: each test leaves no run behind, and the
// last one kills the server.
let p: TempProject;
let env: NodeJS.ProcessEnv;
const children: ChildProcess[] = [];
beforeAll(() => {
  p = tempProject('run-client', FILES);
  const dir = mkdtempSync(join(TMP, 'run-client-'));
  chmodSync(dir, 0o700);
  env = cleanEnv({ XDG_RUNTIME_DIR: dir, VOUCH_HOOK_SERVER_IDLE_MS: '60000' });
  delete env._;
});
beforeEach(() => {
  for (const name of ['code', 'hold', 'many', 'pid']) rmSync(join(p.root, name), { force: true });
});
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
});
afterAll(() => {
  killHookServers(env.XDG_RUNTIME_DIR!);
  rmSync(env.XDG_RUNTIME_DIR!, { recursive: true, force: true });
  p?.remove();
});

const clientArgs = (...args: string[]) => [process.execPath, CLI, 'run', ...args];

function viaClient(p: TempProject, env: NodeJS.ProcessEnv, ...args: string[]) {
  const result = spawnSync(CLIENT, clientArgs(...args), { cwd: p.root, env, encoding: 'utf8', timeout: 60_000 });
  if (result.error) throw result.error;
  return { code: result.status, signal: result.signal, stdout: result.stdout, stderr: result.stderr };
}

/** The first call finds no server: Node runs it and starts one for the next. */
async function withServer(p: TempProject, env: NodeJS.ProcessEnv): Promise<void> {
  const socket = hookSocketPath(env, process.execPath, CLI)!;
  if (existsSync(socket)) return;
  const first = viaClient(p, env, 'check');
  expect(first.code, first.stderr).toBe(0);
  expect(first.stdout).toContain('started by node');
  await until(() => existsSync(socket), `a server at ${socket}`, 15_000);
}

const receipts = (p: TempProject, env: NodeJS.ProcessEnv) => p.json(['log', 'check'], { env }).receipts as Array<Record<string, unknown>>;

describe.skipIf(!available)('a run through the native client', () => {
  it('is the server\'s, its check started by the client: the output, exit code, receipt and log of `vouch run`', async () => {
    await withServer(p, env);
    p.write('src/a.js', 'export const a = 2;\n');
    // Past the racy window: a run that starts within it of an edit keeps a receipt that is never reusable.
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const ran = viaClient(p, env, 'check', '--if-due');
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toBe('started by vouch_hook\n');
    expect(ran.stderr).toMatch(/^vouch: running check: node check\.cjs \(run (\S+)\)\nto stderr\nvouch: check PASS \(exit 0\) in \d+ms, receipt \1\n$/);
    const runId = /\(run (\S+)\)/.exec(ran.stderr)![1]!;
    const [latest] = receipts(p, env);
    expect(latest).toMatchObject({ run_id: runId, result: 'PASS', exit_code: 0, signal: null });
    expect(readFileSync(join(p.root, '.vouch', 'logs', `${runId}.log`), 'utf8')).toBe('started by vouch_hook\nto stderr\n');
    // The receipt answers as one kept by `vouch run`: CURRENT, and the next --if-due is a skip.
    expect(p.json(['status', 'check', '--no-observer'], { env }).checks[0]).toMatchObject({ freshness: 'CURRENT', result: 'PASS', reuse_eligible: true });
    const skipped = viaClient(p, env, 'check', '--if-due');
    expect(skipped.code).toBe(0);
    expect(skipped.stdout).toMatch(new RegExp(`^vouch: skipped check: CURRENT PASS, receipt ${runId} from `));
    expect(skipped.stdout).not.toContain('started by');
    // Exit codes and signals pass through as the check's own, and the receipt says the same.
    writeFileSync(join(p.root, 'code'), '3');
    const failed = viaClient(p, env, 'check');
    expect(failed.code).toBe(3);
    expect(failed.stdout).toBe('started by vouch_hook\n');
    expect(receipts(p, env)[0]).toMatchObject({ result: 'FAIL', exit_code: 3 });
    writeFileSync(join(p.root, 'code'), 'TERM');
    const killed = viaClient(p, env, 'check');
    expect(killed.code).toBe(143);
    expect(receipts(p, env)[0]).toMatchObject({ result: 'FAIL', exit_code: null, signal: 'SIGTERM' });
  });

  it('leaves to Node what the server does not take: --json, an unknown check', async () => {
    await withServer(p, env);
    const json = viaClient(p, env, 'check', '--json');
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout).runs[0]).toMatchObject({ name: 'check', action: 'ran' });
    expect(json.stderr).toContain('started by node');
    const unknown = viaClient(p, env, 'nothing');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('nothing');
  });

  it.runIf(TRACING)('runs a traced check under its tracer, started by the client: a traced receipt, as `vouch run` keeps', async () => {
    await withServer(p, env);
    // The check writes `pid`: made before, so that the run adds no name to the root, which would
    // make every file it read there one that may have changed under it (fs/runEvidence.ts).
    writeFileSync(join(p.root, 'pid'), '');
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const ran = viaClient(p, env, 'traced');
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toBe('started by strace under vouch_hook\n');
    const runId = /\(run (\S+)\)/.exec(ran.stderr)![1]!;
    const [latest] = p.json(['log', 'traced'], { env }).receipts as Array<Record<string, unknown>>;
    expect(latest).toMatchObject({ run_id: runId, result: 'PASS', evidence: { mode: 'traced', notes: [] } });
    expect(readFileSync(join(p.root, '.vouch', 'logs', `${runId}.log`), 'utf8')).toBe('started by strace under vouch_hook\nto stderr\n');
    // What it read is its evidence: check.cjs among them.
    const { evidence } = p.json(['explain', 'traced', '--inputs', '--all'], { env }) as { evidence: Array<Record<string, unknown>> };
    expect(evidence).toContainEqual(expect.objectContaining({ path: 'check.cjs', use: 'read', type: 'file', own: false }));
    const status = p.json(['status', 'traced', '--no-observer'], { env }).checks[0];
    expect(status, JSON.stringify(status.reasons)).toMatchObject({ freshness: 'CURRENT', receipt: { run_id: runId } });
  });

  it.runIf(TRACING)('leaves a traced check to Node when the client is traced itself: its tracer could not start the check', async () => {
    await withServer(p, env);
    // Under another tracer, as in an agent's sandbox that refuses ptrace: the server's probe does
    // not hold for this client, and Node's own probe finds tracing refused.
    const result = spawnSync('strace', ['-f', '-qq', '-e', 'trace=none', '-o', '/dev/null', '--', CLIENT, ...clientArgs('traced')], { cwd: p.root, env, encoding: 'utf8', timeout: 60_000 });
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toBe('started by node\n');
    const [latest] = p.json(['log', 'traced'], { env }).receipts as Array<{ evidence: { notes: Array<{ code: string }> } }>;
    expect(latest!.evidence.notes.map((note) => note.code)).toEqual(['trace-unavailable']);
  });

  it('passes Ctrl-C on to the check\'s group, and the run is not reusable', async () => {
    await withServer(p, env);
    writeFileSync(join(p.root, 'hold'), '');
    const child = spawn(CLIENT, clientArgs('check'), { cwd: p.root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    let stdout = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    await until(() => existsSync(join(p.root, 'pid')), 'the check started', 15_000);
    const ended = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    child.kill('SIGINT');
    expect(await ended).toBe(130);
    expect(stdout).toBe('started by vouch_hook\ngot SIGINT\n');
    expect(receipts(p, env)[0]).toMatchObject({ result: 'FAIL', exit_code: 130 });
  });

  it('a reader that quits early (| head -1) costs neither the check nor its receipt', async () => {
    const before = receipts(p, env).length;
    writeFileSync(join(p.root, 'hold'), '');
    writeFileSync(join(p.root, 'many'), '');
    const child = spawn(CLIENT, clientArgs('check'), { cwd: p.root, env, stdio: ['ignore', 'pipe', 'ignore'] });
    children.push(child);
    await new Promise((resolve) => child.stdout.once('data', resolve));
    child.stdout.destroy();
    const ended = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    rmSync(join(p.root, 'hold'));
    expect(await ended).toBe(0);
    const all = receipts(p, env);
    expect(all).toHaveLength(before + 1);
    expect(all[0]).toMatchObject({ result: 'PASS', exit_code: 0 });
    expect(readFileSync(join(p.root, '.vouch', 'logs', `${all[0]!.run_id as string}.log`), 'utf8')).toContain('line 4999\n');
  });

  it('kill -9 of the client ends the check\'s group and keeps no receipt; the next run is not held up', async () => {
    await withServer(p, env);
    const before = receipts(p, env).length;
    writeFileSync(join(p.root, 'hold'), '');
    const child = spawn(CLIENT, clientArgs('check'), { cwd: p.root, env, stdio: 'ignore' });
    children.push(child);
    await until(() => existsSync(join(p.root, 'pid')), 'the check started', 15_000);
    const pid = Number(readFileSync(join(p.root, 'pid'), 'utf8'));
    child.kill('SIGKILL');
    await until(() => !existsSync(`/proc/${pid}`) || readFileSync(`/proc/${pid}/stat`, 'utf8').split(' ')[2] === 'Z', 'the check ended', 15_000);
    rmSync(join(p.root, 'hold'));
    const next = viaClient(p, env, 'check');
    expect(next.code, next.stderr).toBe(0);
    expect(next.stderr).not.toContain('waiting for');
    expect(receipts(p, env)).toHaveLength(before + 1);
  });

  it.runIf(TRACING)('kill -9 of the client mid traced run ends the tracer and the check, and keeps no receipt', async () => {
    await withServer(p, env);
    const logged = () => (p.json(['log', 'traced'], { env }).receipts as unknown[]).length;
    const before = logged();
    writeFileSync(join(p.root, 'pid'), '');
    writeFileSync(join(p.root, 'hold'), '');
    const child = spawn(CLIENT, clientArgs('traced'), { cwd: p.root, env, stdio: 'ignore' });
    children.push(child);
    await until(() => /^\d+$/.test(readFileSync(join(p.root, 'pid'), 'utf8')), 'the traced check started', 15_000);
    const pid = Number(readFileSync(join(p.root, 'pid'), 'utf8'));
    const tracer = Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(')').pop()!.trim().split(' ')[1]);
    expect(readFileSync(`/proc/${tracer}/comm`, 'utf8').trim()).toBe('strace');
    child.kill('SIGKILL');
    const gone = (id: number) => !existsSync(`/proc/${id}`) || readFileSync(`/proc/${id}/stat`, 'utf8').split(')').pop()!.trim().startsWith('Z');
    await until(() => gone(pid) && gone(tracer), 'the check and its tracer ended', 15_000);
    rmSync(join(p.root, 'hold'));
    expect(logged()).toBe(before);
    const next = viaClient(p, env, 'traced');
    expect(next.code, next.stderr).toBe(0);
    expect(next.stderr).not.toContain('waiting for');
    expect(logged()).toBe(before + 1);
  });

  it('is what the hook\'s rewrite runs when the hook came through the client', async () => {
    // STALE, so the hook rewrites rather than denies.
    p.write('src/a.js', 'export const a = 3;\n');
    const hook = spawnSync(CLIENT, [process.execPath, CLI, 'hook', 'claude'], { cwd: p.root, env, input: JSON.stringify(claudeBash(p.root, 'node check.cjs')), encoding: 'utf8' });
    const viaNode = spawnSync(process.execPath, [CLI, 'hook', 'claude'], { cwd: p.root, env, input: JSON.stringify(claudeBash(p.root, 'node check.cjs')), encoding: 'utf8' });
    const command = JSON.parse(hook.stdout).hookSpecificOutput.updatedInput.command as string;
    expect(command).toBe(`${[CLIENT, process.execPath, CLI].map(shellQuote).join(' ')} run check --if-due`);
    // The Node hook reached directly keeps the program it always wrote.
    expect(JSON.parse(viaNode.stdout).hookSpecificOutput.updatedInput.command).toBe(`${[process.execPath, CLI].map(shellQuote).join(' ')} run check --if-due`);
    const shell = spawnSync('/bin/sh', ['-c', command], { cwd: p.root, env, encoding: 'utf8' });
    expect(shell.status, shell.stderr).toBe(0);
    expect(shell.stdout).toContain('started by');
  });
  // Last: it kills the file's server.
  it('a server that dies mid-run costs the receipt, not the check: its output and exit code reach the caller', async () => {
    await withServer(p, env);
    const before = receipts(p, env).length;
    writeFileSync(join(p.root, 'hold'), '');
    writeFileSync(join(p.root, 'code'), '4');
    const child = spawn(CLIENT, clientArgs('check'), { cwd: p.root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    await until(() => existsSync(join(p.root, 'pid')), 'the check started', 15_000);
    // Every server there: the shell of the test before has an environment, and so a server, of its own.
    const servers = hookServersUnder(env.XDG_RUNTIME_DIR!);
    expect(servers.length).toBeGreaterThan(0);
    for (const pid of servers) process.kill(pid, 'SIGKILL');
    const ended = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    rmSync(join(p.root, 'hold'));
    expect(await ended).toBe(4);
    expect(stdout).toBe('started by vouch_hook\n');
    expect(stderr).toContain('vouch: the resident server ended while check ran, so no receipt was kept');
    expect(receipts(p, env)).toHaveLength(before);
  });

});
