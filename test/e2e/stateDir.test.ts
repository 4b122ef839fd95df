import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { claudeBash } from '../helpers/hookInput.js';
import { inProcess } from '../helpers/inProcess.js';
import { ObserverTracker } from '../helpers/observer.js';
import { CLI, cleanEnv, REPO, tempProject, type CliResult, type TempProject } from '../helpers/project.js';

/*
 * A repository's contents are untrusted, and so is a state dir that came with
 * it: links in it must never carry vouch's writes outside, and a state dir
 * that git lists is itself a warning. Every "victim" lives outside the
 * project (under the repo's .tmp/); each test checks its bytes and mtime.
 *
 * Status, run, log and the other questions go through vouch in this process
 * (test/helpers/inProcess.ts). What needs a process keeps the built CLI: the hook (its JSON on
 * stdin), the MCP server, `vouch start` and `vouch agent` (they record the script their process
 * runs), a temporary file named by the pid, a status that could block on a FIFO (its timeout
 * ends a process), and the modes under a process's umask.
 */

const TMP = join(REPO, '.tmp');
const PASSING = 'process.exitCode = 0;\n';
const CHECK = { name: 't', kind: 'test', command: ['node', 'check.mjs'] };
const CONFIG = JSON.stringify({ schema: 1, checks: [CHECK] }, null, 2) + '\n';
const FILES = { 'vouch.config.json': CONFIG, 'check.mjs': PASSING };
/** Far in the past: a rewrite within the same second would still show in the mtime. */
const LONG_AGO = new Date('2001-02-03T04:05:06Z');

let cleanups: (() => void)[] = [];
const observers = new ObserverTracker();
afterEach(async () => {
  const problems = await observers.cleanup();
  for (const cleanup of cleanups.reverse()) cleanup();
  cleanups = [];
  expect(problems, 'observers that would not stop').toEqual([]);
});

function track(project: TempProject): TempProject {
  cleanups.push(() => project.remove());
  return project;
}

/** A directory outside every project, for links to point into. */
function outside(name: string): string {
  mkdirSync(TMP, { recursive: true });
  const dir = mkdtempSync(join(TMP, `victim-${name}-`));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A file outside the project holding "precious", with an old mtime. */
function victimFile(name: string): string {
  const path = join(outside(name), 'victim');
  writeFileSync(path, 'precious\n');
  utimesSync(path, LONG_AGO, LONG_AGO);
  return path;
}

/** Everything under `dir`: names, kinds, bytes and mtimes. */
function snapshot(dir: string): string[] {
  const lines: string[] = [];
  const visit = (path: string, rel: string) => {
    const stats = lstatSync(path);
    if (stats.isDirectory()) {
      lines.push(`${rel}/ ${stats.mtimeMs}`);
      for (const name of readdirSync(path).sort()) visit(join(path, name), `${rel}/${name}`);
    } else if (stats.isFile()) {
      lines.push(`${rel} ${stats.mtimeMs} ${readFileSync(path, 'base64')}`);
    } else {
      lines.push(`${rel} ${stats.mode.toString(8)} ${stats.mtimeMs}`);
    }
  };
  visit(dir, '.');
  return lines;
}

function fileState(path: string): { bytes: string; mtimeMs: number } {
  return { bytes: readFileSync(path, 'utf8'), mtimeMs: statSync(path).mtimeMs };
}

/** A clone of `origin` in a new temporary directory. */
function cloneOf(origin: TempProject, name: string): TempProject {
  const clone = track(tempProject(name, {}, { git: false }));
  const cloned = spawnSync('git', ['clone', '-q', origin.root, clone.root], { encoding: 'utf8', env: cleanEnv() });
  expect(cloned.status, cloned.stderr).toBe(0);
  return clone;
}

/** Exit 2 with `{schema:1,error:{code:"state-dir-unsafe"}}` whose message names `path`. */
function expectRefused(result: CliResult, path: string, what: string): void {
  expect(result.code, `${what}: ${result.stdout}\n${result.stderr}`).toBe(2);
  const parsed = JSON.parse(result.stdout);
  expect(parsed.error.code, what).toBe('state-dir-unsafe');
  expect(parsed.error.message, what).toContain(path);
  expect(parsed.error.message, what).toMatch(/symbolic link/);
}

function hook(cwd: string, command: string): CliResult {
  const result = spawnSync(process.execPath, [CLI, 'hook', 'claude'], { cwd, input: JSON.stringify(claudeBash(cwd, command)), env: cleanEnv(), encoding: 'utf8', timeout: 60_000 });
  if (result.error) throw result.error;
  return { code: result.status, signal: result.signal, stdout: result.stdout, stderr: result.stderr };
}

/** `vouch ARGS` in this process, in the project. */
function vouch(project: TempProject, args: string[], options: { env?: NodeJS.ProcessEnv } = {}): Promise<CliResult> {
  return inProcess(project).vouch(args, options);
}

async function statusOf(project: TempProject, args: string[] = []): Promise<any> {
  const out = await inProcess(project).json(['status', ...args]);
  return out.checks.find((check: { name: string }) => check.name === 't');
}

describe('a cloned .vouch/config.validated linked to a file outside', () => {
  function cloneWithLink(victim: string, name: string): TempProject {
    const origin = track(tempProject(`${name}-origin`, FILES));
    mkdirSync(join(origin.root, '.vouch'));
    symlinkSync(victim, join(origin.root, '.vouch', 'config.validated'));
    origin.git('add', '-f', '.vouch/config.validated');
    origin.git('commit', '-qm', 'a link in the state dir');
    const clone = cloneOf(origin, `${name}-clone`);
    expect(lstatSync(join(clone.root, '.vouch', 'config.validated')).isSymbolicLink()).toBe(true);
    return clone;
  }

  for (const step of ['status', 'run', 'hook'] as const) {
    it(`${step} in the clone leaves the victim's bytes and mtime alone`, async () => {
      const victim = victimFile(`validated-${step}`);
      const clone = cloneWithLink(victim, `sd-validated-${step}`);
      const before = fileState(victim);
      let status: any = null;
      if (step === 'status') {
        status = await statusOf(clone);
      } else if (step === 'run') {
        const run = await vouch(clone, ['run', 't', '--json']);
        expect(run.code, run.stderr).toBe(0);
      } else {
        const run = hook(clone.root, 'node check.mjs');
        expect(run.code, run.stderr).toBe(0);
      }
      expect(fileState(victim)).toEqual(before);
      expect(readFileSync(victim, 'utf8')).toBe('precious\n');
      if (status !== null) {
        // The link is tracked: the state dir is in git.
        expect(status.freshness).toBe('UNVERIFIED');
        expect(status.reasons.map((r: { code: string }) => r.code)).toContain('state-dir-in-git');
      }
    });
  }
});

describe('links in the state dir are refused or replaced, never followed', () => {
  it('a dangling .vouch/state.db link: status and run are refused, and no database appears at its target', async () => {
    const project = track(tempProject('sd-db-link', FILES));
    const target = outside('db-link');
    const link = join(project.root, '.vouch', 'state.db');
    mkdirSync(join(project.root, '.vouch'), { mode: 0o700 });
    symlinkSync(join(target, 'state.db'), link);
    for (const command of ['status', 'run', 'log']) expectRefused(await vouch(project, [command, '--json']), link, command);
    expect(readdirSync(target)).toEqual([]);
  });

  it('a .vouch/logs link: run is refused naming it, the check does not run, and no log is written there', async () => {
    const project = track(tempProject('sd-logs-link', { ...FILES, 'check.mjs': "import { writeFileSync } from 'node:fs';\nwriteFileSync('ran', '');\n" }));
    const target = outside('logs-link');
    const link = join(project.root, '.vouch', 'logs');
    mkdirSync(join(project.root, '.vouch'), { mode: 0o700 });
    symlinkSync(target, link);
    const before = snapshot(target);
    expectRefused(await vouch(project, ['run', 't', '--json']), link, 'run');
    expect(existsSync(join(project.root, 'ran'))).toBe(false);
    expect(snapshot(target)).toEqual(before);
  });

  it('a .vouch/locks link: run is refused naming it, and no lock file is created or removed there', async () => {
    const project = track(tempProject('sd-locks-link', FILES));
    const target = outside('locks-link');
    // A file named like the lock: a run that followed the link would create or remove such files.
    writeFileSync(join(target, 't.lock'), '{"pid":1}');
    const link = join(project.root, '.vouch', 'locks');
    mkdirSync(join(project.root, '.vouch'), { mode: 0o700 });
    symlinkSync(target, link);
    const before = snapshot(target);
    expectRefused(await vouch(project, ['run', 't', '--json']), link, 'run');
    expect(snapshot(target)).toEqual(before);
  });

  it('.vouch itself a link: every command is refused naming it (the hook fails open), and nothing is written at its target', async () => {
    const project = track(tempProject('sd-dir-link', { ...FILES, 'package.json': '{"name":"x","private":true}\n', 'claim.json': '{}' }));
    const target = outside('dir-link');
    const link = join(project.root, '.vouch');
    symlinkSync(target, link);
    const before = snapshot(target);
    const home = outside('dir-link-home');
    // In this process, but for start and agent: what they would record names their process's script.
    const commands: [string[], 'in process' | 'a process'][] = [
      [['status'], 'in process'],
      [['status', '--no-observer'], 'in process'],
      [['run', 't'], 'in process'],
      [['log'], 'in process'],
      [['explain', 't'], 'in process'],
      [['start'], 'a process'],
      [['stop'], 'in process'],
      [['observer'], 'in process'],
      [['prove', 'claim.json'], 'in process'],
      [['agent', 'setup', 'claude', '--apply'], 'a process'],
      [['agent', 'remove', 'claude', '--apply'], 'a process'],
    ];
    for (const [args, where] of commands) {
      const options = { env: cleanEnv({ HOME: home }) };
      const result = where === 'in process' ? await vouch(project, [...args, '--json'], options) : project.vouch([...args, '--json'], options);
      expectRefused(result, link, args.join(' '));
    }
    // The hook fails open: nothing on stdout, the command runs as typed.
    expect(hook(project.root, 'node check.mjs')).toMatchObject({ code: 0, stdout: '' });

    // The MCP server answers each tool call with the refusal.
    const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp'], cwd: project.root, env: cleanEnv() as Record<string, string>, stderr: 'pipe' });
    const client = new Client({ name: 'vouch-test', version: '0' });
    await client.connect(transport);
    try {
      for (const [name, args] of [
        ['status', {}],
        ['run', { checks: ['t'] }],
      ] as const) {
        const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
        expect(result.isError, name).toBe(true);
        expect(JSON.stringify(result.content), name).toContain('state-dir-unsafe');
      }
    } finally {
      await client.close();
    }
    expect(snapshot(target)).toEqual(before);

    // init, in a project with no config yet: refused before it writes the config.
    const fresh = track(tempProject('sd-dir-link-init', { 'package.json': JSON.stringify({ name: 'x', private: true, scripts: { test: 'node check.mjs' } }) }));
    symlinkSync(target, join(fresh.root, '.vouch'));
    expectRefused(await vouch(fresh, ['init', '--json']), join(fresh.root, '.vouch'), 'init');
    expect(existsSync(join(fresh.root, 'vouch.config.json'))).toBe(false);
    expect(snapshot(target)).toEqual(before);
  });
});

describe('agent records', () => {
  it('a link at the record\'s temporary path (named by the pid, as vouch used to) is never written through', () => {
    const project = track(tempProject('sd-agent-temp', FILES));
    mkdirSync(join(project.root, '.vouch'), { mode: 0o700 });
    const victim = victimFile('agent-temp');
    const before = fileState(victim);
    const record = join(project.root, '.vouch', 'agent-claude.json');
    const script = 'ln -s "$1" "$2.$$.tmp" && exec "$3" "$4" agent setup claude --apply --json';
    const result = spawnSync('sh', ['-c', script, 'sh', victim, record, process.execPath, CLI], { cwd: project.root, env: cleanEnv({ HOME: outside('agent-temp-home') }), encoding: 'utf8', timeout: 60_000 });
    expect(result.status, result.stderr).toBe(0);
    expect(fileState(victim)).toEqual(before);
    expect(lstatSync(record).isFile()).toBe(true);
    expect(JSON.parse(readFileSync(record, 'utf8')).host).toBe('claude');
  });

  it('a record that is a link to a file outside is not read: setup replaces it with its own', () => {
    const project = track(tempProject('sd-agent-link', FILES));
    mkdirSync(join(project.root, '.vouch'), { mode: 0o700 });
    const victim = victimFile('agent-link');
    const before = fileState(victim);
    const record = join(project.root, '.vouch', 'agent-claude.json');
    symlinkSync(victim, record);
    const result = project.vouch(['agent', 'setup', 'claude', '--apply', '--json'], { env: cleanEnv({ HOME: outside('agent-link-home') }) });
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(fileState(victim)).toEqual(before);
    expect(lstatSync(record).isFile()).toBe(true);
  });
});

describe('the native tree caches', () => {
  const INSTALLED = JSON.stringify({ schema: 1, checks: [{ ...CHECK, installed: ['node_modules/**'] }] }, null, 2) + '\n';
  const INSTALLED_FILES = { 'vouch.config.json': INSTALLED, 'check.mjs': PASSING, '.gitignore': 'node_modules/\n', 'node_modules/dep/index.js': 'export {};\n', 'node_modules/dep/package.json': '{"name":"dep"}\n' };

  /** The tree cache's path, found after a first status, then removed so the next status writes it again. */
  async function cachePath(project: TempProject): Promise<string> {
    // The first status makes the state dir (after the walks began); the second keeps a cache there.
    for (let index = 0; index < 2; index++) expect((await statusOf(project)).freshness).toBe('UNVERIFIED');
    const caches = readdirSync(join(project.root, '.vouch')).filter((name) => /^tree-[0-9a-f]{16}\.cache$/.test(name));
    // Without the addon there is no cache to attack: the JavaScript walk keeps none.
    expect(caches, 'the native addon should have written a tree cache').toHaveLength(1);
    const path = join(project.root, '.vouch', caches[0]!);
    unlinkSync(path);
    return path;
  }

  it('a link at a cache\'s path, to a FIFO outside, is not opened (a plain open would block) and is replaced by a file', async () => {
    const project = track(tempProject('sd-cache-fifo', INSTALLED_FILES));
    const path = await cachePath(project);
    const fifo = join(outside('cache-fifo'), 'fifo');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    symlinkSync(fifo, path);
    const result = project.vouch(['status', '--json'], { timeout: 30_000 });
    expect(result.signal, 'status blocked opening the FIFO through the link').toBeNull();
    expect(result.code, result.stderr).toBe(0);
    expect(lstatSync(fifo).isFIFO()).toBe(true);
    const cache = lstatSync(path);
    expect(cache.isFile()).toBe(true);
    expect(cache.mode & 0o777).toBe(0o600);
  });

  it('a link at a cache\'s temporary path (named by the pid, as vouch used to) is never written through', async () => {
    const project = track(tempProject('sd-cache-temp', INSTALLED_FILES));
    const path = await cachePath(project);
    const victim = victimFile('cache-temp');
    const before = fileState(victim);
    // exec keeps the shell's pid, so the link sits at exactly the name a pid-named temporary file would take.
    const script = 'ln -s "$1" "$2.$$.tmp" && exec "$3" "$4" status --json';
    const result = spawnSync('sh', ['-c', script, 'sh', victim, path, process.execPath, CLI], { cwd: project.root, env: cleanEnv(), encoding: 'utf8', timeout: 60_000 });
    expect(result.status, result.stderr).toBe(0);
    expect(fileState(victim)).toEqual(before);
    expect(lstatSync(path).isFile()).toBe(true);
  });
});

describe('a state dir that git lists is flagged: state-dir-in-git', () => {
  /** A project whose .vouch/state.db, holding a real PASS receipt of this very check, is committed. */
  async function committedStateDb(name: string): Promise<TempProject> {
    const origin = track(tempProject(`${name}-origin`, FILES));
    expect((await vouch(origin, ['run', 't'])).code).toBe(0);
    expect((await statusOf(origin)).freshness).toBe('CURRENT');
    origin.git('add', '-f', '.vouch/state.db');
    origin.git('commit', '-qm', 'commit the receipts');
    return cloneOf(origin, `${name}-clone`);
  }

  function expectFlagged(status: any, paths: string[]): void {
    expect(status.freshness).toBe('UNVERIFIED');
    expect(status.reuse_eligible).toBe(false);
    const flagged = status.reasons.find((r: { code: string }) => r.code === 'state-dir-in-git');
    expect(flagged, JSON.stringify(status.reasons)).toBeDefined();
    for (const path of paths) expect(flagged.message).toContain(path);
    expect(flagged.message).toContain('git rm -r --cached .vouch');
  }

  it('a clone with a committed state.db holding a PASS receipt is UNVERIFIED, directly and from the observer, and the hook does not deny', async () => {
    const clone = await committedStateDb('sd-committed');
    // The receipt in it matches the clone exactly: only the flag keeps it from reading CURRENT.
    expectFlagged(await statusOf(clone, ['--no-observer']), ['.vouch/state.db']);
    const run = hook(clone.root, 'node check.mjs');
    expect(run.code, run.stderr).toBe(0);
    if (run.stdout !== '') expect(JSON.parse(run.stdout).hookSpecificOutput?.permissionDecision).not.toBe('deny');

    observers.start(clone);
    const observed = await inProcess(clone).json(['status']);
    expect(observed.observation.source).toBe('observer');
    expectFlagged(observed.checks.find((check: { name: string }) => check.name === 't'), ['.vouch/state.db']);

    // The fix the message names: untracked, with its .gitignore back, the flag goes.
    clone.git('rm', '-rq', '--cached', '.vouch');
    writeFileSync(join(clone.root, '.vouch', '.gitignore'), '*\n');
    const untracked = await statusOf(clone, ['--no-observer']);
    expect(untracked.reasons.map((r: { code: string }) => r.code)).not.toContain('state-dir-in-git');
    expect(untracked.freshness).toBe('CURRENT');
  });

  for (const [scan, env] of [
    ['native listing', {}],
    ['JavaScript listing (git ls-files)', { VOUCH_NATIVE: '0' }],
  ] as const) {
    it(`a state dir whose .gitignore is gone shows as untracked files: flagged until it is back (${scan})`, async () => {
      const project = track(tempProject('sd-untracked', FILES));
      const status = async () => (await inProcess(project).json(['status', '--no-observer'], { env: cleanEnv(env) })).checks[0];
      expect((await vouch(project, ['run', 't'])).code).toBe(0);
      expect((await status()).freshness).toBe('CURRENT');
      unlinkSync(join(project.root, '.vouch', '.gitignore'));
      expectFlagged(await status(), ['.vouch/state.db']);
      writeFileSync(join(project.root, '.vouch', '.gitignore'), '*\n');
      expect((await status()).freshness).toBe('CURRENT');
    });
  }

  it('a running observer sees the .gitignore go, as a direct look does, and sees it come back', async () => {
    const project = track(tempProject('sd-untracked-observed', FILES));
    expect((await vouch(project, ['run', 't'])).code).toBe(0);
    observers.start(project);
    const observed = async () => {
      const answer = await inProcess(project).json(['status']);
      expect(answer.observation.source).toBe('observer');
      return answer.checks[0];
    };
    expect((await observed()).freshness).toBe('CURRENT');
    unlinkSync(join(project.root, '.vouch', '.gitignore'));
    // Which of the state dir's files git names first depends on what the observer keeps there.
    expectFlagged(await observed(), ['.vouch/config.validated']);
    writeFileSync(join(project.root, '.vouch', '.gitignore'), '*\n');
    expect((await observed()).freshness).toBe('CURRENT');
  });
});

describe('owner-only modes, whatever the umask', () => {
  it('under umask 000, the state dir and its subdirectories are 0700 and its files 0600', () => {
    const project = track(tempProject('sd-modes', {
      'vouch.config.json': JSON.stringify({ schema: 1, checks: [{ ...CHECK, installed: ['node_modules/**'] }] }, null, 2) + '\n',
      '.gitignore': 'node_modules/\n',
      'node_modules/dep/index.js': 'export {};\n',
      // The lock exists only while the check runs: the check itself reports its mode.
      'check.mjs': "import { statSync, writeFileSync } from 'node:fs';\nwriteFileSync(process.env.LOCK_MODE_FILE, (statSync('.vouch/locks/t.lock').mode & 0o777).toString(8));\n",
    }));
    const lockMode = join(outside('modes'), 'lock-mode');
    const home = outside('modes-home');
    const env = cleanEnv({ LOCK_MODE_FILE: lockMode, HOME: home });
    const underUmask000 = (args: string[]) => {
      const result = spawnSync('sh', ['-c', 'umask 000; exec "$@"', 'sh', process.execPath, CLI, ...args], { cwd: project.root, env, encoding: 'utf8', timeout: 60_000 });
      expect(result.status, `${args.join(' ')}: ${result.stdout}\n${result.stderr}`).toBe(0);
      return result.stdout;
    };
    underUmask000(['run', 't']);
    underUmask000(['status']);
    underUmask000(['agent', 'setup', 'claude', '--apply']);
    // A running observer keeps the database open: its WAL and shared memory are there too.
    observers.note(project, [], JSON.parse(underUmask000(['start', '--json'])).pid);
    underUmask000(['run', 't']);

    const stateDir = join(project.root, '.vouch');
    const mode = (path: string) => (lstatSync(path).mode & 0o777).toString(8);
    expect(mode(stateDir)).toBe('700');
    for (const dir of ['logs', 'locks']) expect(mode(join(stateDir, dir)), dir).toBe('700');
    const files = readdirSync(stateDir).filter((name) => lstatSync(join(stateDir, name)).isFile());
    for (const name of ['.gitignore', 'state.db', 'state.db-wal', 'state.db-shm', 'config.validated', 'agent-claude.json']) expect(files).toContain(name);
    expect(files.some((name) => name.startsWith('tree-'))).toBe(true);
    for (const name of files) expect(mode(join(stateDir, name)), name).toBe('600');
    expect(readFileSync(lockMode, 'utf8')).toBe('600');
  });
});
