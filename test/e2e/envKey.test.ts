import Database from 'better-sqlite3';
import { MIGRATIONS } from '../../src/store/migrations.js';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { configText, type Json } from '../helpers/answers.js';
import { inProcess } from '../helpers/inProcess.js';
import { answersOf, ObserverTracker, PATIENT } from '../helpers/observer.js';
import { CLI, cleanEnv, REPO, tempProject, type TempProject } from '../helpers/project.js';

/*
 * The key for environment digests is kept out of state.db: in a 0600 file in
 * the user's config dir, or, where that cannot be used, in the state dir.
 *
 * The runs and questions run in this process (test/helpers/inProcess.ts): vouch finds the key
 * from the command's env (XDG_CONFIG_HOME, HOME), not its process's, and reads it afresh for each
 * command, so each command here finds it as a process of its own would. What keeps the CLI:
 * vouch start (it spawns the observer), and the processes that race to make the key.
 */

const projects: TempProject[] = [];
const dirs: string[] = [];
const observers = new ObserverTracker();
afterEach(async () => {
  const problems = await observers.cleanup();
  for (const p of projects.splice(0)) p.remove();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  expect(problems, 'observers that would not stop').toEqual([]);
});

const CHECK = { name: 'secret', kind: 'custom', command: ['node', '-e', '0'], inputs: ['src/**'], env: ['SECRET'] };
const FILES = { 'vouch.config.json': configText([CHECK]), '.gitignore': 'out/\n', 'src/a.js': 'export const a = 1;\n' };
const KEY = /^[0-9a-f]{64}\n$/;

function project(name: string): TempProject {
  const p = tempProject(name, FILES);
  projects.push(p);
  return p;
}

/** A config dir of the test's own, so the key file it finds is the one this test made. */
function configHome(): string {
  mkdirSync(join(REPO, '.tmp'), { recursive: true });
  const dir = mkdtempSync(join(REPO, '.tmp', 'xdg-'));
  dirs.push(dir);
  return dir;
}

function metaRows(p: TempProject): Array<{ key: string; value: string }> {
  const db = new Database(join(p.root, '.vouch', 'state.db'), { readonly: true });
  try {
    return db.prepare('SELECT key, value FROM meta').all() as Array<{ key: string; value: string }>;
  } finally {
    db.close();
  }
}

const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);

/** `vouch ARGS` in this process, with the command's env. */
const vouchIn = (p: TempProject, args: string[], env: NodeJS.ProcessEnv) => inProcess(p).vouch(args, { env });

/** `vouch status ARGS --json` in this process: the answer. */
const statusIn = async (p: TempProject, args: string[], env: NodeJS.ProcessEnv): Promise<Json> => await inProcess(p).json(['status', ...args], { env });

async function freshness(p: TempProject, args: string[], env: NodeJS.ProcessEnv): Promise<{ freshness: string; reasons: Json[]; source: string }> {
  const status = await statusIn(p, args, env);
  const [answer] = status.checks;
  return { freshness: answer.freshness, reasons: answer.reasons, source: status.observation.source };
}

describe('the environment key', () => {
  it('lives in a 0600 file in $XDG_CONFIG_HOME/vouch, not in state.db', async () => {
    const p = project('envkey-xdg');
    const home = configHome();
    const env = cleanEnv({ XDG_CONFIG_HOME: home, SECRET: 'hunter2' });
    expect((await vouchIn(p, ['run'], env)).code).toBe(0);

    const keyFile = join(home, 'vouch', 'env-key');
    expect(readFileSync(keyFile, 'utf8')).toMatch(KEY);
    expect(mode(keyFile)).toBe('600');
    expect(mode(join(home, 'vouch'))).toBe('700');
    expect(readdirSync(join(home, 'vouch'))).toEqual(['env-key']);
    const key = readFileSync(keyFile, 'utf8').trim();
    expect(metaRows(p).filter((row) => row.key === 'env_key' || row.value.includes(key))).toEqual([]);
    expect(existsSync(join(p.root, '.vouch', 'env-key'))).toBe(false);
    expect((await freshness(p, [], env)).freshness).toBe('CURRENT');
  });

  it('the observer digests with the same key as a direct scan: both CURRENT', async () => {
    const p = project('envkey-observer');
    const home = configHome();
    const env = cleanEnv({ XDG_CONFIG_HOME: home, SECRET: 'hunter2', VOUCH_OBSERVER_TIMEOUT_MS: PATIENT });
    expect((await vouchIn(p, ['run'], env)).code).toBe(0);
    observers.start(p, [], { env });
    const viaObserver = await statusIn(p, [], env);
    expect(viaObserver.observation.source).toBe('observer');
    expect(answersOf(viaObserver).map((a) => a.freshness)).toEqual(['CURRENT']);
    expect(await freshness(p, ['--no-observer'], env)).toMatchObject({ freshness: 'CURRENT', source: 'scan' });
    // A changed value is seen by both.
    const changed = { ...env, SECRET: 'hunter3' };
    expect(answersOf(await statusIn(p, [], changed)).map((a) => a.freshness)).toEqual(['STALE']);
    expect((await freshness(p, ['--no-observer'], changed)).freshness).toBe('STALE');
  });

  it('never in the project: with HOME in the project and no XDG_CONFIG_HOME, the key goes to the state dir', async () => {
    const p = project('envkey-home');
    const env = cleanEnv({ HOME: p.root, SECRET: 'hunter2' });
    delete env.XDG_CONFIG_HOME;
    expect((await vouchIn(p, ['run'], env)).code).toBe(0);
    expect(existsSync(join(p.root, '.config')), 'nothing written under the project\'s .config').toBe(false);
    const keyFile = join(p.root, '.vouch', 'env-key');
    expect(readFileSync(keyFile, 'utf8')).toMatch(KEY);
    expect(mode(keyFile)).toBe('600');
    expect(metaRows(p).filter((row) => row.key === 'env_key')).toEqual([]);
    expect((await freshness(p, [], env)).freshness).toBe('CURRENT');
  });

  it('a config dir that cannot be written (a file in the way) falls back to the state dir', async () => {
    const p = project('envkey-ro');
    const home = configHome();
    writeFileSync(join(home, 'vouch'), 'not a directory\n');
    const env = cleanEnv({ XDG_CONFIG_HOME: home, SECRET: 'hunter2' });
    expect((await vouchIn(p, ['run'], env)).code).toBe(0);
    expect(readFileSync(join(p.root, '.vouch', 'env-key'), 'utf8')).toMatch(KEY);
    expect(readFileSync(join(home, 'vouch'), 'utf8')).toBe('not a directory\n');
    expect((await freshness(p, [], env)).freshness).toBe('CURRENT');
  });

  it('processes racing to make the key agree on one, and leave no temporary file', async () => {
    const p = project('envkey-race');
    const home = configHome();
    const env = cleanEnv({ XDG_CONFIG_HOME: home, SECRET: 'hunter2' });
    expect((await vouchIn(p, ['run'], cleanEnv({ XDG_CONFIG_HOME: configHome(), SECRET: 'hunter2' }))).code).toBe(0);
    const racers = Array.from({ length: 6 }, () => spawn(process.execPath, [CLI, 'status', '--no-observer', '--json'], { cwd: p.root, env, stdio: 'ignore' }));
    await Promise.all(racers.map((child) => new Promise((resolve) => child.on('close', resolve))));
    expect(readdirSync(join(home, 'vouch'))).toEqual(['env-key']);
    // A receipt made under the key that won reads CURRENT for every later process.
    expect((await vouchIn(p, ['run'], env)).code).toBe(0);
    expect((await freshness(p, [], env)).freshness).toBe('CURRENT');
  });

  it('a changed key reads STALE (context-changed), never CURRENT', async () => {
    const p = project('envkey-changed');
    const home = configHome();
    const env = cleanEnv({ XDG_CONFIG_HOME: home, SECRET: 'hunter2' });
    expect((await vouchIn(p, ['run'], env)).code).toBe(0);
    writeFileSync(join(home, 'vouch', 'env-key'), `${'ab'.repeat(32)}\n`, { mode: 0o600 });
    const after = await freshness(p, [], env);
    expect(after.freshness).toBe('STALE');
    expect(after.reasons.map((reason: Json) => reason.code)).toContain('context-changed');
  });

  it('a database from before the key moved loses its key row, and keeps its receipts', async () => {
    const p = project('envkey-migrate');
    const home = configHome();
    const env = cleanEnv({ XDG_CONFIG_HOME: home, SECRET: 'hunter2' });
    expect((await vouchIn(p, ['run'], env)).code).toBe(0);
    const db = new Database(join(p.root, '.vouch', 'state.db'));
    const receipts = (db.prepare('SELECT COUNT(*) AS n FROM receipts').get() as { n: number }).n;
    // As the first schema left it: the key beside the digests, and receipts without evidence.
    db.prepare("INSERT INTO meta (key, value) VALUES ('env_key', ?)").run('cd'.repeat(32));
    db.exec('ALTER TABLE receipts DROP COLUMN evidence');
    db.pragma('user_version = 1');
    db.close();

    expect((await vouchIn(p, ['status', '--json'], env)).code).toBe(0);
    expect(metaRows(p).filter((row) => row.key === 'env_key')).toEqual([]);
    const after = new Database(join(p.root, '.vouch', 'state.db'), { readonly: true });
    try {
      expect(after.pragma('user_version', { simple: true })).toBe(MIGRATIONS.length);
      expect((after.prepare('SELECT COUNT(*) AS n FROM receipts').get() as { n: number }).n).toBe(receipts);
      // Every receipt from before traced runs existed was declared.
      expect(after.prepare('SELECT DISTINCT evidence FROM receipts').all()).toEqual([{ evidence: '{"mode":"declared","notes":[]}' }]);
    } finally {
      after.close();
    }
  });
});
