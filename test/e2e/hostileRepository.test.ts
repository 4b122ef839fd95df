import Database from 'better-sqlite3';
import { deflateRawSync } from 'node:zlib';
import { evidenceOf } from '../../src/core/evidence.js';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { DEMO_APP } from '../helpers/claims.js';
import { inProcess } from '../helpers/inProcess.js';
import { isVouchProcess, until } from '../helpers/observer.js';
import { CLI, cleanEnv, REPO, type CliResult, type TempProject } from '../helpers/project.js';
import { newestChangeMs, SETTLE_MS } from '../helpers/settle.js';

/*
 * A cloned repository is untrusted input: an agent clones it and its hooks run
 * vouch there without anyone deciding to. Each case below is a repository that
 * carries one hostile thing (a link in .vouch/, a committed .vouch/, a root or
 * globs that point outside), cloned with git as a user would get it, and
 * driven through status, run, the agent hook and prove. A tree outside the
 * clone, whose every file's bytes and mtime are recorded, must be exactly as it
 * was after each step.
 *
 * status, run and stop run in this process, through the CLI's dispatch (test/helpers/inProcess.ts):
 * what they may touch does not depend on a process of their own. The hook stays the process the
 * host starts (its stdin, and the `vouch start` SessionStart spawns), and prove its own process:
 * a prover loads the workspace's tools into the process it runs in.
 */

const TMP = join(REPO, '.tmp');
const made: string[] = [];
afterEach(async () => {
  for (const dir of made.splice(0)) {
    await stopObservers(dir);
    rmSync(dir, { recursive: true, force: true });
  }
});
afterAll(() => rmSync(join(TMP, 'hostile-outside-keep'), { force: true }));

const ENV = cleanEnv();

interface Place {
  /** The clone: what vouch runs in. */
  clone: string;
  /** The tree outside the clone that nothing may touch. */
  outside: string;
}

/** The tree outside: a victim file, a directory of files shaped like vouch's leftovers, and an empty directory. */
function outsideTree(base: string): string {
  const outside = join(base, 'outside');
  mkdirSync(join(outside, 'o'), { recursive: true });
  mkdirSync(join(outside, 'empty'));
  writeFileSync(join(outside, 'victim'), 'precious\n');
  writeFileSync(join(outside, 'o', 'keep.vouch-99999-abcdefabcdef.ts'), 'export const keep = 1;\n');
  writeFileSync(join(outside, 'o', 'notes.vouch-99997-aaaaaaaaaaaa.md'), '# notes\n');
  return outside;
}

/** Every entry under `dir`: type, bytes, mtime and link target. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (path: string) => {
    const stats = lstatSync(path, { bigint: true });
    const key = relative(dir, path) || '.';
    if (stats.isSymbolicLink()) out[key] = `link ${readlinkSync(path)} ${stats.mtimeNs}`;
    else if (stats.isDirectory()) {
      out[key] = `dir ${stats.mode} ${stats.mtimeNs}`;
      for (const name of readdirSync(path).sort()) walk(join(path, name));
    } else if (!stats.isFile()) out[key] = `special ${stats.mode} ${stats.mtimeNs}`;
    else out[key] = `file ${stats.mode} ${stats.size} ${stats.mtimeNs} ${createHash('sha256').update(readFileSync(path)).digest('hex')}`;
  };
  walk(dir);
  return out;
}

const PACKAGE_JSON = (scripts: Record<string, string>) => JSON.stringify({ name: 'hostile', version: '1.0.0', private: true, type: 'module', scripts }, null, 2) + '\n';
const CHECKS = [{ name: 'test', kind: 'test', script: 'test' }];
const CONFIG = (extra: Record<string, unknown> = {}, checks: unknown[] = CHECKS) => JSON.stringify({ schema: 1, packageManager: 'npm', checks, ...extra }, null, 2) + '\n';

/** A claim whose draft lies under `linkdir`, a link in the repository to the tree outside. */
const CLAIM = JSON.stringify({
  project: 'tsconfig.json',
  case: {
    drafts: [{ path: 'linkdir/evil.ts', text: 'export const evil = 1;\n' }],
    test: { path: 'test/evil.test.ts', text: "import { it, expect } from 'vitest';\nimport { evil } from '../linkdir/evil.js';\nit('is', () => expect(evil).toBe(1));\n" },
  },
  control: {
    drafts: [{ path: 'linkdir/evil.ts', text: 'export const evil = 2;\n' }],
    stage: 'runtime',
    reason: 'evil is 2, the test expects 1',
  },
});

/**
 * Makes the hostile origin: the example workspace (its tools are the repo's),
 * a quick `test` script, `prepare` adding whatever makes it hostile, all
 * committed with -f (.vouch/ ignores itself), then cloned.
 */
function hostileClone(name: string, prepare: (origin: string, outside: string) => void, config = CONFIG()): Place {
  mkdirSync(TMP, { recursive: true });
  const base = mkdtempSync(join(TMP, `hostile-${name}-`));
  made.push(base);
  const outside = outsideTree(base);
  const origin = join(base, 'origin');
  cpSync(DEMO_APP, origin, { recursive: true, filter: (source) => !/[\\/](node_modules|\.vouch)$/.test(source) });
  writeFileSync(join(origin, 'package.json'), PACKAGE_JSON({ test: 'node check.mjs' }));
  writeFileSync(join(origin, 'check.mjs'), 'process.exit(0);\n');
  writeFileSync(join(origin, 'vouch.config.json'), config);
  writeFileSync(join(origin, 'claim.json'), CLAIM);
  symlinkSync(join(outside, 'o'), join(origin, 'linkdir'));
  prepare(origin, outside);
  git(origin, 'init', '-q');
  git(origin, 'add', '-A');
  git(origin, 'add', '-f', '--', '.');
  git(origin, 'commit', '-qm', 'hostile');
  const clone = join(base, 'clone');
  git(base, 'clone', '-q', origin, clone);
  return { clone, outside };
}

function git(cwd: string, ...args: string[]): string {
  const result = spawnSync('git', args, { cwd, env: ENV, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`git ${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

/** vouch in this process: its answer, exit code and output are the CLI's (a process's signal is none). */
async function vouchIn(cwd: string, args: string[]): Promise<CliResult> {
  // A run started within the racy window of the clone's last write would count it as changed during
  // the run; a CLI process starts a Node start later.
  const newest = newestChangeMs(cwd);
  await until(() => Date.now() > newest + SETTLE_MS, `the last change to be ${SETTLE_MS} ms old`, 5_000, 5);
  // inProcess asks only for the directory the command runs in.
  return inProcess({ root: cwd } as TempProject).vouch(args, { env: ENV });
}

function vouch(cwd: string, args: string[], input?: string): CliResult {
  const result = spawnSync(process.execPath, [CLI, ...args], { cwd, env: ENV, encoding: 'utf8', timeout: 120_000, ...(input === undefined ? {} : { input }) });
  if (result.error) throw result.error;
  return { code: result.status, signal: result.signal, stdout: result.stdout, stderr: result.stderr };
}

function hookInput(cwd: string, event: 'PreToolUse' | 'SessionStart', command?: string): string {
  return JSON.stringify({
    session_id: 'hostile',
    transcript_path: join(cwd, 'transcript.jsonl'),
    cwd,
    hook_event_name: event,
    ...(event === 'PreToolUse' ? { tool_name: 'Bash', tool_input: { command, description: 'run the tests' }, tool_use_id: 'toolu_1' } : { source: 'startup' }),
  });
}

/** Stops every observer started under `dir`: SessionStart starts one in the background. */
async function stopObservers(dir: string) {
  for (let attempt = 0; attempt < 20; attempt++) {
    const pids = readdirSync('/proc')
      .filter((name) => /^\d+$/.test(name))
      .map(Number)
      .filter((pid) => isVouchProcess(pid) && cmdline(pid).includes(dir));
    if (pids.length === 0) return;
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    await delay(50);
  }
}

/**
 * Whether a vouch process other than an observer runs in `dir`: the `vouch start` SessionStart
 * spawns there (between its fork and exec, still the hook's command line) returns once the
 * observer has indexed, or has refused to start.
 */
function starting(dir: string): boolean {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .some((pid) => isVouchProcess(pid) && !cmdline(pid).includes('__observe') && cwdOf(pid) === dir);
}

function cwdOf(pid: number): string | null {
  try {
    return readlinkSync(`/proc/${pid}/cwd`);
  } catch {
    return null;
  }
}

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return '';
  }
}

type Step = { name: string; run(place: Place): Promise<CliResult> | CliResult };

/** What an agent and a user would do in a fresh clone. */
const STEPS: Step[] = [
  { name: 'status', run: ({ clone }) => vouchIn(clone, ['status', '--json']) },
  { name: 'run', run: ({ clone }) => vouchIn(clone, ['run', 'test', '--json']) },
  { name: 'hook SessionStart', run: async ({ clone }) => {
    const result = vouch(clone, ['hook', 'claude'], hookInput(clone, 'SessionStart'));
    // The observer starts in the background: wait until what started it has written whatever it would.
    await until(() => !starting(clone), 'the SessionStart hook\'s `vouch start` to end', 30_000, 50);
    return result;
  } },
  { name: 'hook PreToolUse', run: ({ clone }) => vouch(clone, ['hook', 'claude'], hookInput(clone, 'PreToolUse', 'npm test')) },
  { name: 'status again', run: ({ clone }) => vouchIn(clone, ['status', '--json']) },
  { name: 'run again', run: ({ clone }) => vouchIn(clone, ['run', 'test', '--if-due', '--json']) },
  { name: 'stop', run: ({ clone }) => vouchIn(clone, ['stop', '--json']) },
  { name: 'prove', run: ({ clone }) => vouch(clone, ['prove', 'claim.json', '--json']) },
];

/** Drives every step, and checks the outside tree after each; returns each step's result. */
async function drive(place: Place): Promise<Record<string, CliResult>> {
  const before = snapshot(place.outside);
  const results: Record<string, CliResult> = {};
  for (const step of STEPS) {
    const result = await step.run(place);
    results[step.name] = result;
    expect(snapshot(place.outside), `after ${step.name}: ${result.stdout}\n${result.stderr}`).toEqual(before);
    expect(result.stderr, step.name).not.toMatch(/internal error|\n\s+at /);
    expect(result.code, `${step.name}: ${result.stderr}`).not.toBe(70);
    expect(result.signal, step.name).toBeNull();
  }
  // The hook fails open: whatever it found, it exits 0 and never denies on such a repository.
  for (const name of ['hook SessionStart', 'hook PreToolUse']) {
    expect(results[name]?.code).toBe(0);
    expect(results[name]?.stdout ?? '').not.toMatch(/"deny"/);
  }
  return results;
}

/**
 * The claim's draft would land outside through linkdir: refused, naming the member and the link,
 * unless the state dir itself was refused first.
 */
function claimRefused(result: CliResult | undefined) {
  expect(result?.code, result?.stderr).toBe(2);
  const said = `${result?.stdout}${result?.stderr}`;
  if (/state-dir-unsafe/.test(said)) return;
  expect(said).toMatch(/case\.drafts\[0\]\.path/);
  expect(said).toMatch(/linkdir/);
}

function refusedAsUnsafe(result: CliResult | undefined, what: RegExp) {
  expect(result?.code, result?.stderr).toBe(2);
  const error = JSON.parse(result?.stdout ?? '{}').error;
  expect(error?.code, result?.stdout).toBe('state-dir-unsafe');
  expect(error?.message).toMatch(what);
}

/** The links a repository can plant in its state dir, each pointing outside. */
const LINKS: { name: string; plant(origin: string, outside: string): void; refused: RegExp | null }[] = [
  { name: '.vouch/config.validated to a file', plant: (o, out) => link(o, '.vouch/config.validated', join(out, 'victim')), refused: null },
  { name: '.vouch/state.db dangling', plant: (o, out) => link(o, '.vouch/state.db', join(out, 'empty', 'state.db')), refused: /state\.db is a symbolic link/ },
  { name: '.vouch/state.db-wal dangling', plant: (o, out) => link(o, '.vouch/state.db-wal', join(out, 'empty', 'wal')), refused: /state\.db-wal is a symbolic link/ },
  { name: '.vouch/logs to a directory', plant: (o, out) => link(o, '.vouch/logs', join(out, 'empty')), refused: /logs is a symbolic link/ },
  { name: '.vouch/locks to a directory', plant: (o, out) => link(o, '.vouch/locks', join(out, 'empty')), refused: /locks is a symbolic link/ },
  { name: '.vouch/observer to a directory', plant: (o, out) => link(o, '.vouch/observer', join(out, 'empty')), refused: /observer is a symbolic link/ },
  { name: '.vouch itself to a directory', plant: (o, out) => link(o, '.vouch', join(out, 'empty')), refused: /\.vouch is a symbolic link/ },
];

function link(origin: string, path: string, target: string) {
  mkdirSync(join(origin, path, '..'), { recursive: true });
  symlinkSync(target, join(origin, path));
}

describe('a hostile repository, cloned and driven through status, run, the hook and prove', () => {
  it.each(LINKS)('$name: nothing outside is written, read into state or deleted', async ({ plant, refused }) => {
    const place = hostileClone('link', plant);
    const results = await drive(place);
    claimRefused(results.prove);
    // run writes a log, a lock and a receipt: it either refuses the link by name or never follows it.
    if (refused) refusedAsUnsafe(results.run, refused);
    else expect(results.run?.code, results.run?.stderr).toBe(0);
  });

  it('a committed .vouch/ with a real store: its receipts never make a check CURRENT, and status says why', async () => {
    const place = hostileClone('committed', (origin) => {
      // A store with a PASS receipt for exactly this tree, made where the attacker made the repository.
      writeFileSync(join(origin, 'package.json'), PACKAGE_JSON({ test: 'node check.mjs' }));
      writeFileSync(join(origin, 'check.mjs'), 'process.exit(0);\n');
      writeFileSync(join(origin, 'vouch.config.json'), CONFIG());
      git(origin, 'init', '-q');
      expect(vouch(origin, ['run', 'test']).code).toBe(0);
      rmSync(join(origin, '.vouch', 'logs'), { recursive: true, force: true });
    });
    const results = await drive(place);
    for (const name of ['status', 'status again']) {
      const checks = JSON.parse(results[name]?.stdout ?? '{}').checks as { name: string; freshness: string; reasons: { code: string; message: string }[] }[];
      expect(checks.map((check) => check.freshness), name).toEqual(['UNVERIFIED']);
      expect(checks[0]?.reasons.map((r) => r.code)).toContain('state-dir-in-git');
    }
    claimRefused(results.prove);
  });

  it('a committed .vouch/ with a traced receipt that read nothing: never CURRENT, and its evidence is not looked at', async () => {
    const traced = CONFIG({}, [{ name: 'test', kind: 'test', script: 'test', mode: 'traced' }]);
    const place = hostileClone(
      'committed-traced',
      (origin) => {
        writeFileSync(join(origin, 'check.mjs'), 'process.exit(0);\n');
        git(origin, 'init', '-q');
        expect(vouch(origin, ['run', 'test']).code).toBe(0);
        // Forged: the receipt's evidence rewritten to none, so any tree would match it.
        const db = new Database(join(origin, '.vouch', 'state.db'));
        const empty = evidenceOf([]);
        db.prepare('INSERT OR IGNORE INTO manifests (digest, entries) VALUES (?, ?)').run(empty.digest, deflateRawSync(Buffer.from('[]')));
        db.exec('DROP TRIGGER receipts_are_immutable');
        db.prepare('UPDATE receipts SET manifest_digest = ?, input_count = 0').run(empty.digest);
        db.close();
        rmSync(join(origin, '.vouch', 'logs'), { recursive: true, force: true });
      },
      traced,
    );
    const results = await drive(place);
    for (const name of ['status', 'status again']) {
      const checks = JSON.parse(results[name]?.stdout ?? '{}').checks as { name: string; freshness: string; reasons: { code: string }[] }[];
      expect(checks.map((check) => check.freshness), name).toEqual(['UNVERIFIED']);
      expect(checks[0]?.reasons.map((r) => r.code)).toContain('state-dir-in-git');
    }
  });

  it('"root" pointing outside: refused before anything is written there', async () => {
    // A command check needs no package.json at the root, so nothing else stops vouch from using it.
    const place = hostileClone('root', () => {}, CONFIG({ root: '../outside' }, [{ name: 'test', kind: 'test', command: ['node', '-e', '0'] }]));
    const results = await drive(place);
    for (const name of ['status', 'run']) {
      expect(results[name]?.code, results[name]?.stderr).toBe(2);
      expect(JSON.parse(results[name]?.stdout ?? '{}').error?.message).toMatch(/root/);
    }
  });

  it('globs escaping the root: refused, never an empty and CURRENT receipt', async () => {
    const place = hostileClone('globs', () => {}, CONFIG({}, [{ ...CHECKS[0], inputs: ['../**', '/etc/**'], installed: ['../outside/**'] }]));
    const results = await drive(place);
    for (const name of ['status', 'run']) {
      expect(results[name]?.code, results[name]?.stderr).toBe(2);
      expect(JSON.parse(results[name]?.stdout ?? '{}').error?.message).toMatch(/inputs\[0\]/);
    }
  });
});
