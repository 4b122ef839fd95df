import { spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { configText, type Json } from '../helpers/answers.js';
import { ObserverTracker, PATIENT, until } from '../helpers/observer.js';
import { inProcess } from '../helpers/inProcess.js';
import { CLI, cleanEnv, REPO, tempProject, type CliResult, type TempProject } from '../helpers/project.js';

/*
 * `vouch status` answered whole by the running observer (docs/observer.md, "A status answered
 * whole"): the CLI process finds the observer and prints what it sends, and the observer runs the
 * status command for it. What is printed must be what the process itself would have printed, for
 * the caller's arguments, working directory and environment; and wherever the observer must not
 * answer for the caller, the caller's process answers as it always did.
 *
 * Whether a status was served is told from the outside: a served one loads neither node:crypto
 * nor the 'common' chunk, which every status the process answers itself loads.
 */

const projects: TempProject[] = [];
const observers = new ObserverTracker();
const probeDir = mkdtempSync(join(tmpdir(), 'vouch-served-'));
const PROBE = join(probeDir, 'probe.cjs');
writeFileSync(
  PROBE,
  `process.on('exit', () => require('fs').writeFileSync(process.env.PROBE_OUT, JSON.stringify({
    crypto: process.moduleLoadList.includes('NativeModule crypto'),
    common: Object.keys(require.cache).some((file) => /[\\\\/]common-[^\\\\/]*\\.js$/.test(file)),
  })));\n`,
);

afterEach(async () => {
  const problems = await observers.cleanup();
  for (const p of projects.splice(0)) p.remove();
  expect(problems, 'observers that would not stop').toEqual([]);
});
afterAll(() => rmSync(probeDir, { recursive: true, force: true }));

const CHECKS = [
  { name: 'check', kind: 'custom', command: ['node', 'check.cjs'] },
  { name: 'flagged', kind: 'custom', command: ['node', 'check.cjs'], env: ['SERVED_FLAG'] },
];
const FILES: Record<string, string> = {
  'vouch.config.json': configText(CHECKS),
  '.gitignore': 'node_modules/\n',
  'check.cjs': 'process.exit(0);\n',
  'src/a.js': 'export const a = 1;\n',
  'src/deep/b.js': 'export const b = 2;\n',
};

async function ranProject(name: string, env: NodeJS.ProcessEnv = cleanEnv({ SERVED_FLAG: 'a' })): Promise<TempProject> {
  const p = tempProject(name, FILES);
  projects.push(p);
  const ran = await inProcess(p).vouch(['run'], { env });
  expect(ran.code, `${ran.stdout}${ran.stderr}`).toBe(0);
  return p;
}

interface Asked extends CliResult {
  served: boolean;
}

/** `vouch status ARGS` as a process, and whether the observer served it (see above). */
function status(p: TempProject, args: string[], options: { env?: NodeJS.ProcessEnv; cwd?: string } = {}): Asked {
  const out = join(probeDir, `${Math.random().toString(36).slice(2)}.json`);
  // A flag, not NODE_OPTIONS: that variable is part of every check's context.
  const env = { ...(options.env ?? cleanEnv({ SERVED_FLAG: 'a' })), VOUCH_OBSERVER_TIMEOUT_MS: PATIENT, PROBE_OUT: out };
  const ran = spawnSync(process.execPath, ['--require', PROBE, CLI, 'status', ...args], { cwd: options.cwd ?? p.root, env, encoding: 'utf8', timeout: 120_000 });
  const result: CliResult = { code: ran.status, signal: ran.signal, stdout: ran.stdout, stderr: ran.stderr };
  const loaded = JSON.parse(readFileSync(out, 'utf8')) as { crypto: boolean; common: boolean };
  rmSync(out);
  // Both or neither: a served status that loaded either would be no cheaper than the rest.
  expect(loaded.crypto, `crypto and common loaded together for status ${args.join(' ')}`).toBe(loaded.common);
  return { ...result, served: !loaded.common };
}

/** What differs between two answers moments apart: when they were observed, and how long ago a run was. */
function steady(text: string): string {
  return text
    .replace(/"(observed_at|duration_ms)": [^,\n]+/g, '"$1": X')
    .replace(/\b\d+[smhd] ago\b/g, 'AGO')
    .replace(/ +\n/g, '\n');
}

describe('a status answered whole by the observer', () => {
  it('prints what the process itself would have, for every form of the command', async () => {
    const p = await ranProject('served-forms');
    observers.start(p);
    const forms: { args: string[]; cwd?: string }[] = [
      { args: ['--json'] },
      { args: [] },
      { args: ['--short'] },
      { args: ['flagged', '--json'] },
      { args: ['--cached', '--json'] },
      { args: ['--sync'] },
      // From below the root, with the config named relative to there.
      { args: ['--config', '../../vouch.config.json', '--json'], cwd: join(p.root, 'src', 'deep') },
      { args: ['--json'], cwd: join(p.root, 'src') },
    ];
    for (const { args, cwd } of forms) {
      const served = status(p, args, cwd ? { cwd } : {});
      const direct = status(p, args, { env: cleanEnv({ SERVED_FLAG: 'a', VOUCH_SERVED_STATUS: '0' }), ...(cwd ? { cwd } : {}) });
      expect(served.served, `status ${args.join(' ')} in ${cwd ?? p.root} was served: ${served.stderr}`).toBe(true);
      expect(direct.served).toBe(false);
      expect({ code: served.code, stdout: steady(served.stdout), stderr: served.stderr }, `status ${args.join(' ')}`).toEqual({
        code: direct.code,
        stdout: steady(direct.stdout),
        stderr: direct.stderr,
      });
    }
    const answer = JSON.parse(status(p, ['--json']).stdout) as Json;
    expect(answer.observation.source).toBe('observer');
    expect(answer.checks.map((check: Json) => check.freshness)).toEqual(['CURRENT', 'CURRENT']);

    // An edit is seen, served as directly.
    p.write('src/a.js', 'export const a = 2;\n');
    const stale = status(p, ['--json']);
    expect(stale.served).toBe(true);
    expect(JSON.parse(stale.stdout).checks.map((check: Json) => check.freshness)).toEqual(['STALE', 'STALE']);

    // What the observer would not answer from its index alone, the process answers: an unknown
    // check's error, --no-observer, --help.
    for (const args of [['nope', '--json'], ['--no-observer', '--json'], ['--help']]) {
      const asked = status(p, args);
      const direct = status(p, args, { env: cleanEnv({ SERVED_FLAG: 'a', VOUCH_SERVED_STATUS: '0' }) });
      expect(asked.served, `status ${args.join(' ')}`).toBe(false);
      expect({ code: asked.code, stdout: steady(asked.stdout) }).toEqual({ code: direct.code, stdout: steady(direct.stdout) });
    }

    // Arguments the caller sends on without parsing them (cli/servedStatus.ts), and ones it parses
    // first: served or not, each prints what the process itself would have.
    for (const args of [['--sync', '--cached', '--json'], ['flagged', 'nope'], ['--json', '--', 'flagged'], ['-h'], ['--root', '.', '--json'], ['--jsonx']]) {
      const asked = status(p, args);
      const direct = status(p, args, { env: cleanEnv({ SERVED_FLAG: 'a', VOUCH_SERVED_STATUS: '0' }) });
      expect({ code: asked.code, stdout: steady(asked.stdout), stderr: asked.stderr }, `status ${args.join(' ')}`).toEqual({
        code: direct.code,
        stdout: steady(direct.stdout),
        stderr: direct.stderr,
      });
    }
  });

  it('decides on the caller’s environment, not the one the observer was started with', async () => {
    const p = await ranProject('served-env');
    // Started with another value: an answer on the observer's own environment would be STALE.
    observers.start(p, [], { env: cleanEnv({ SERVED_FLAG: 'observer' }) });
    const same = status(p, ['flagged', '--json'], { env: cleanEnv({ SERVED_FLAG: 'a' }) });
    expect(same.served).toBe(true);
    expect(JSON.parse(same.stdout).checks[0]).toMatchObject({ freshness: 'CURRENT', reuse_eligible: true });
    const other = status(p, ['flagged', '--json'], { env: cleanEnv({ SERVED_FLAG: 'b' }) });
    expect(other.served).toBe(true);
    const answer = JSON.parse(other.stdout).checks[0];
    expect(answer.freshness).toBe('STALE');
    expect(answer.reasons.map((reason: Json) => reason.code)).toEqual(['context-changed']);
  });

  it('an observer of another build serves nothing: the process answers, and the same', async () => {
    const p = await ranProject('served-build');
    // The same bundle copied: its entry script's mtime, so its build, is another.
    const other = join(p.root, 'node_modules', 'other-vouch');
    cpSync(join(REPO, 'dist'), join(other, 'dist'), { recursive: true });
    cpSync(join(REPO, 'package.json'), join(other, 'package.json'));
    symlinkSync(join(REPO, 'build'), join(other, 'build'));
    symlinkSync(join(REPO, 'node_modules'), join(other, 'node_modules'));
    const run = spawnJson(join(other, 'dist/bin/main.js'), ['start', '--json'], p.root);
    const pid = (await run).pid;
    observers.note(p, [], pid);
    expect(typeof pid).toBe('number');
    const asked = status(p, ['--json']);
    const direct = status(p, ['--json'], { env: cleanEnv({ SERVED_FLAG: 'a', VOUCH_SERVED_STATUS: '0' }) });
    expect(asked.served).toBe(false);
    expect(JSON.parse(asked.stdout).observation.source).toBe('observer');
    expect(steady(asked.stdout)).toBe(steady(direct.stdout));
  });

  it('an observer in the foreground (vouch start --foreground) serves a status too', async () => {
    const p = await ranProject('served-foreground');
    observers.note(p, [], 0);
    const child = spawn(process.execPath, [CLI, 'start', '--foreground'], { cwd: p.root, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let said = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (said += chunk));
    try {
      await until(() => said.includes('observer ready'), 'the foreground observer to be ready', 30_000);
      // The status it serves asks this same process: that call must neither block nor wait on itself.
      const asked = status(p, ['--json']);
      expect(asked.served, asked.stderr).toBe(true);
      expect(JSON.parse(asked.stdout).checks.map((check: Json) => check.freshness)).toEqual(['CURRENT', 'CURRENT']);
    } finally {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('close', resolve));
    }
  });
});

/** A vouch command's JSON, from a process of another build. */
function spawnJson(cli: string, args: string[], cwd: string): Promise<Json> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args], { cwd, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
    child.on('close', (code) => {
      try {
        resolve(JSON.parse(out));
      } catch {
        reject(new Error(`${args.join(' ')} exited ${code}: ${out}${err}`));
      }
    });
  });
}
