import { spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import type { Json } from '../helpers/answers.js';
import { inProcess } from '../helpers/inProcess.js';
import { answersOf, ObserverTracker, observerLogTail, observerRecords, PATIENT, rpcExchange, timedStatusOf, until, type Answer, type TimedStatus } from '../helpers/observer.js';
import { cleanEnv, tempProject, type TempProject } from '../helpers/project.js';
import { mulberry32, testSeed, withSeed } from '../helpers/seed.js';
import { newestChangeMs, SETTLE_MS } from '../helpers/settle.js';

/*
 * The observer's promise, tested as a property: after any burst of file
 * mutations, `status --sync` answered by a live observer equals a direct
 * scan (`status --no-observer`) on every check. The mutations are the
 * freshness campaign's, plus directory renames, rm -rf of a subtree, a git
 * checkout of another branch and npm ci, all made while the observer runs.
 *
 * VOUCH_SEED=N replays one sequence (test/helpers/seed.ts; a fixed one without it);
 * VOUCH_PROPERTY_BURSTS=N sets its length.
 *
 * The runs, the questions (status --sync, status --no-observer, vouch observer) and the stops
 * run in this process (test/helpers/inProcess.ts): the same commands, without a Node start each.
 * The observer under test is a process of its own all the same (vouch start, which spawns it,
 * keeps the CLI), and a --sync question reaches it over its socket as from a CLI process. A run
 * it follows waits first until the last edit is settled (see runIn below), as one through the CLI
 * did. Seeds, sequence, burst counts and what is compared are as before.
 */

const SEED_OF_RUN = testSeed(import.meta.url, 424_242);
const SEED = SEED_OF_RUN.value;
const BURSTS = Number(process.env.VOUCH_PROPERTY_BURSTS ?? 16);

const projects: TempProject[] = [];
const observers = new ObserverTracker();
afterEach(async () => {
  // Stopped in this process first: the same `vouch stop`, without a Node start. The tracker then
  // stops (through the CLI) or kills whatever is left, and says so.
  const problems: string[] = [];
  for (const p of projects) {
    const stopped = await inProcess(p).vouch(['stop', '--json']);
    if (stopped.code !== 0) problems.push(`vouch stop exited ${stopped.code}: ${stopped.stdout}${stopped.stderr}`);
  }
  problems.push(...(await observers.cleanup()));
  for (const p of projects.splice(0)) p.remove();
  expect(problems, 'observers that would not stop').toEqual([]);
});

/** The seeded numbers of one sequence (test/helpers/seed.ts's mulberry32), with the draws the mutations need. */
class Rng {
  readonly next: () => number;
  constructor(seed: number) {
    this.next = mulberry32(seed);
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from nothing');
    return items[this.int(items.length)] as T;
  }
}

const SCAN_ENV = cleanEnv();
const OBSERVER_ENV = cleanEnv({ VOUCH_OBSERVER_TIMEOUT_MS: PATIENT });
const npmEnv = () => cleanEnv({ npm_config_update_notifier: 'false' });

function npm(cwd: string, ...args: string[]) {
  const result = spawnSync('npm', args, { cwd, encoding: 'utf8', env: npmEnv(), timeout: 120_000 });
  if (result.status !== 0) throw new Error(`npm ${args.join(' ')}\n${result.stdout}\n${result.stderr}`);
}

/** Sets atime and mtime to exact nanoseconds (utimes with a Date rounds to microseconds). */
function setTimesNs(path: string, atimeNs: bigint, mtimeNs: bigint) {
  const at = (ns: bigint) => `@${ns / 1_000_000_000n}.${(ns % 1_000_000_000n).toString().padStart(9, '0')}`;
  for (const [flag, ns] of [['-a', atimeNs], ['-m', mtimeNs]] as const) {
    const touched = spawnSync('touch', ['-h', flag, '-d', at(ns), path], { encoding: 'utf8' });
    if (touched.status !== 0) throw new Error(`touch ${flag} ${path}: ${touched.stderr}`);
  }
}

// The fixture: a git project with a command check and a script check on the
// default inputs (every source file, and node_modules/** by identity), and a
// narrowed one, so that one burst can leave some checks CURRENT and others not.
const CMD = { name: 'cmd', kind: 'custom', command: ['node', 'check.js'] };
const SCR = { name: 'scr', kind: 'test', script: 'check' };
const NARROW_INPUTS = [['src/lib/**'], ['src/**/*.js', 'package.json']] as const;
const narrow = (variant: 0 | 1) => ({ name: 'narrow', kind: 'typecheck', command: ['node', 'check.js'], inputs: NARROW_INPUTS[variant], installed: [] });
const configFor = (variant: 0 | 1) => JSON.stringify({ schema: 1, packageManager: 'npm', checks: [CMD, SCR, narrow(variant)] }, null, 2) + '\n';

const DEP_JS = 'module.exports = 42;\n';
const FIXTURE: Record<string, string> = {
  'vouch.config.json': configFor(0),
  '.gitignore': 'node_modules/\nbuild/\n',
  'package.json':
    JSON.stringify(
      { name: 'fx', version: '1.0.0', private: true, scripts: { check: 'node check.js' }, dependencies: { dep: 'file:./vendor/dep-1.0.0.tgz' } },
      null,
      2,
    ) + '\n',
  // A FAIL receipt now and then, so results differ between checks too.
  'check.js': "process.exit(require('fs').existsSync('src/fail.flag') ? 1 : 0);\n",
  'vendor/dep/package.json': JSON.stringify({ name: 'dep', version: '1.0.0', main: 'index.js' }, null, 2) + '\n',
  'vendor/dep/index.js': DEP_JS,
  'docs/readme.md': '# fixture\n',
  'src/a.js': 'export const a = 1;\n',
  'src/b.js': 'export const b = 2;\n',
  'src/same.js': 'export const a = 1;\n',
  'src/lib/c.js': 'export const c = 3;\n',
  'src/lib/d.ts': 'export const d: number = 4;\n',
  'src/lib/deep/e.js': 'export const e = 5;\n',
  'src/lib/deep/f.txt': 'notes\n',
  'src/util/g.js': 'export const g = 7;\n',
};

interface World {
  p: TempProject;
  rng: Rng;
  counter: number;
  mainBranch: string;
  onOther: boolean;
  narrowVariant: 0 | 1;
  txtIgnored: boolean;
  /** src/ as each `vouch run` found it: a revert to one of them is a state an earlier receipt was made on. */
  runStates: SrcState[];
}

/** src/'s directories, regular files (bytes and mode) and symlinks, to put back exactly. */
interface SrcState {
  dirs: string[];
  files: { path: string; bytes: Buffer; mode: number }[];
  links: { path: string; target: string }[];
}

function srcState(root: string): SrcState {
  const { files, regular, dirs } = tree(root);
  return {
    dirs,
    files: regular.map((path) => ({ path, bytes: readFileSync(join(root, path)), mode: statSync(join(root, path)).mode & 0o777 })),
    links: files.filter((path) => !regular.includes(path)).map((path) => ({ path, target: readlinkSync(join(root, path)) })),
  };
}

/** Every path under src/, sorted so that a seed picks the same paths on every machine. */
function tree(root: string): { files: string[]; regular: string[]; dirs: string[] } {
  const files: string[] = [];
  const regular: string[] = [];
  const dirs: string[] = [];
  const walk = (rel: string) => {
    let entries;
    try {
      entries = readdirSync(join(root, rel), { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const path = `${rel}/${entry.name}`;
      if (entry.isSymbolicLink()) files.push(path);
      else if (entry.isFile()) {
        files.push(path);
        regular.push(path);
      } else if (entry.isDirectory()) {
        dirs.push(path);
        walk(path);
      }
    }
  };
  walk('src');
  return { files, regular, dirs };
}

interface Mutation {
  kind: string;
  weight: number;
  /** Changes the project; returns what it did, for the failure report, or null when it could not apply. */
  apply(w: World): string | null;
}

const abs = (w: World, rel: string) => join(w.p.root, rel);
const fresh = (w: World, prefix: string) => `${prefix}${++w.counter}`;

function sameSizeOtherBytes(text: string, rng: Rng): string {
  const at = rng.int(text.length);
  const old = text[at];
  const now = old === 'q' ? 'z' : 'q';
  return text.slice(0, at) + now + text.slice(at + 1);
}

const MUTATIONS: Mutation[] = [
  {
    kind: 'edit',
    weight: 8,
    apply: (w) => {
      const { regular } = tree(w.p.root);
      if (regular.length === 0) return null;
      const path = w.rng.pick(regular);
      writeFileSync(abs(w, path), `export const v${w.counter++} = ${w.rng.int(1e6)};\n`);
      return `edit ${path}`;
    },
  },
  {
    kind: 'same-size rewrite, times put back',
    weight: 5,
    apply: (w) => {
      const candidates = tree(w.p.root).regular.filter((path) => statSync(abs(w, path)).size > 0);
      if (candidates.length === 0) return null;
      const path = w.rng.pick(candidates);
      const before = statSync(abs(w, path), { bigint: true });
      writeFileSync(abs(w, path), sameSizeOtherBytes(readFileSync(abs(w, path), 'latin1'), w.rng), 'latin1');
      setTimesNs(abs(w, path), before.atimeNs, before.mtimeNs);
      return `same-size rewrite ${path}`;
    },
  },
  {
    kind: 'touch',
    weight: 4,
    apply: (w) => {
      const { regular } = tree(w.p.root);
      if (regular.length === 0) return null;
      const path = w.rng.pick(regular);
      const when = new Date(Date.now() + w.rng.int(10_000));
      utimesSync(abs(w, path), when, when);
      return `touch ${path}`;
    },
  },
  {
    kind: 'chmod',
    weight: 4,
    apply: (w) => {
      const { regular } = tree(w.p.root);
      if (regular.length === 0) return null;
      const path = w.rng.pick(regular);
      const executable = (statSync(abs(w, path)).mode & 0o100) !== 0;
      chmodSync(abs(w, path), executable ? 0o644 : 0o755);
      return `chmod ${executable ? '-x' : '+x'} ${path}`;
    },
  },
  {
    kind: 'create',
    weight: 6,
    apply: (w) => {
      const dir = w.rng.pick(['src', ...tree(w.p.root).dirs]);
      const path = `${dir}/${fresh(w, 'n')}${w.rng.pick(['.js', '.ts', '.txt'])}`;
      w.p.write(path, `// created ${w.counter}\n`);
      return `create ${path}`;
    },
  },
  {
    kind: 'delete',
    weight: 4,
    apply: (w) => {
      const { files } = tree(w.p.root);
      if (files.length < 3) return null;
      const path = w.rng.pick(files);
      unlinkSync(abs(w, path));
      return `delete ${path}`;
    },
  },
  {
    kind: 'rename file',
    weight: 4,
    apply: (w) => {
      const { files, dirs } = tree(w.p.root);
      if (files.length === 0) return null;
      const from = w.rng.pick(files);
      const to = `${w.rng.pick(['src', ...dirs])}/${fresh(w, 'r')}.js`;
      renameSync(abs(w, from), abs(w, to));
      return `rename ${from} -> ${to}`;
    },
  },
  {
    kind: 'symlink',
    weight: 3,
    apply: (w) => {
      const { regular } = tree(w.p.root);
      if (regular.length < 2) return null;
      const link = w.rng.pick(regular);
      const target = w.rng.pick(regular.filter((path) => path !== link));
      unlinkSync(abs(w, link));
      symlinkSync(relative(dirname(link), target), abs(w, link));
      return `replace ${link} with a symlink to ${target}`;
    },
  },
  {
    kind: 'rename directory',
    weight: 3,
    apply: (w) => {
      const { dirs } = tree(w.p.root);
      if (dirs.length === 0) return null;
      const from = w.rng.pick(dirs);
      // Into src/ or next to itself; never into itself.
      const parent = w.rng.chance(0.5) ? 'src' : dirname(from);
      const to = `${parent}/${fresh(w, 'dir')}`;
      renameSync(abs(w, from), abs(w, to));
      return `rename directory ${from} -> ${to}`;
    },
  },
  {
    kind: 'rm -rf',
    weight: 2,
    apply: (w) => {
      const { dirs } = tree(w.p.root);
      if (dirs.length === 0) return null;
      const dir = w.rng.pick(dirs);
      rmSync(abs(w, dir), { recursive: true, force: true });
      return `rm -rf ${dir}`;
    },
  },
  {
    kind: 'new subtree',
    weight: 3,
    apply: (w) => {
      const dir = `src/${fresh(w, 't')}/sub`;
      for (const name of ['x.js', 'y.ts', 'z.txt']) w.p.write(`${dir}/${name}`, `// ${dir}/${name}\n`);
      w.p.write(`${dirname(dir)}/top.js`, '// top\n');
      return `create subtree ${dirname(dir)}`;
    },
  },
  {
    kind: 'git checkout',
    weight: 2,
    apply: (w) => {
      const branch = w.onOther ? w.mainBranch : 'other';
      // -f: local edits and untracked files in the way give way, as in a hurried switch.
      w.p.git('checkout', '-q', '-f', branch);
      w.onOther = !w.onOther;
      return `git checkout -f ${branch}`;
    },
  },
  {
    kind: 'git commit',
    weight: 1,
    apply: (w) => {
      w.p.git('add', '-A');
      w.p.git('commit', '-qm', fresh(w, 'c'), '--allow-empty');
      return 'git add -A && git commit';
    },
  },
  {
    kind: 'npm ci',
    weight: 1,
    apply: (w) => {
      npm(w.p.root, 'ci', '--offline', '--no-audit', '--no-fund');
      return 'npm ci --offline';
    },
  },
  {
    kind: 'installed file',
    weight: 3,
    apply: (w) => {
      const dir = abs(w, 'node_modules/dep');
      if (!existsSync(dir)) return null;
      const extras = readdirSync(dir).filter((name) => name.startsWith('extra-'));
      const choice = w.rng.int(3);
      if (choice === 0) {
        writeFileSync(join(dir, 'index.js'), readFileSync(join(dir, 'index.js')));
        return 'rewrite node_modules/dep/index.js with its own bytes';
      }
      if (choice === 1 || extras.length === 0) {
        const name = `${fresh(w, 'extra-')}.js`;
        writeFileSync(join(dir, name), '// extra\n');
        return `create node_modules/dep/${name}`;
      }
      const name = w.rng.pick(extras.sort());
      unlinkSync(join(dir, name));
      return `delete node_modules/dep/${name}`;
    },
  },
  {
    kind: 'tool cache',
    weight: 1,
    apply: (w) => {
      w.p.write('node_modules/.vite/vitest/results.json', JSON.stringify({ version: '4.1.12', results: { n: w.counter++ } }));
      return 'write node_modules/.vite/vitest/results.json';
    },
  },
  {
    kind: 'ignored file',
    weight: 2,
    apply: (w) => {
      const path = `build/${fresh(w, 'out')}.js`;
      w.p.write(path, '// built\n');
      return `write ${path}`;
    },
  },
  {
    kind: '.gitignore',
    weight: 2,
    apply: (w) => {
      w.txtIgnored = !w.txtIgnored;
      w.p.write('.gitignore', `node_modules/\nbuild/\n${w.txtIgnored ? '*.txt\n' : ''}`);
      return w.txtIgnored ? 'ignore *.txt' : 'stop ignoring *.txt';
    },
  },
  {
    kind: 'fail flag',
    weight: 1,
    apply: (w) => {
      const path = abs(w, 'src/fail.flag');
      // lstat, not existsSync: the symlink mutation may have made the flag a link, dangling once
      // its target went, and writing through it would create the target's missing directories.
      if (lstatSync(path, { throwIfNoEntry: false }) !== undefined) {
        rmSync(path);
        return 'remove src/fail.flag';
      }
      w.p.write('src/fail.flag', 'fail\n');
      return 'create src/fail.flag';
    },
  },
  {
    // An edit and its revert: src/ put back as an earlier run found it, so an earlier receipt may answer.
    kind: 'revert to a run',
    weight: 4,
    apply: (w) => {
      if (w.runStates.length === 0) return null;
      const at = w.rng.int(w.runStates.length);
      const state = w.runStates[at]!;
      rmSync(abs(w, 'src'), { recursive: true, force: true });
      mkdirSync(abs(w, 'src'));
      for (const dir of state.dirs) mkdirSync(abs(w, dir), { recursive: true });
      for (const file of state.files) {
        writeFileSync(abs(w, file.path), file.bytes);
        chmodSync(abs(w, file.path), file.mode);
      }
      for (const link of state.links) symlinkSync(link.target, abs(w, link.path));
      return `src/ put back as run ${at + 1} found it`;
    },
  },
  {
    kind: 'config',
    weight: 1,
    apply: (w) => {
      w.narrowVariant = w.narrowVariant === 0 ? 1 : 0;
      w.p.write('vouch.config.json', configFor(w.narrowVariant));
      return `narrow's inputs -> ${JSON.stringify(NARROW_INPUTS[w.narrowVariant])}`;
    },
  },
];

/** Kinds that every sequence includes at least once, whatever the seed: one is forced every second burst until all have run. */
const REQUIRED = ['git checkout', 'npm ci', 'rename directory', 'rm -rf', 'symlink', 'same-size rewrite, times put back', 'git checkout', 'revert to a run'];

function pickMutation(rng: Rng): Mutation {
  const total = MUTATIONS.reduce((sum, m) => sum + m.weight, 0);
  let roll = rng.next() * total;
  for (const m of MUTATIONS) {
    roll -= m.weight;
    if (roll < 0) return m;
  }
  return MUTATIONS[MUTATIONS.length - 1] as Mutation;
}

function setUp(): World {
  const p = tempProject('obsprop', FIXTURE);
  projects.push(p);
  npm(join(p.root, 'vendor/dep'), 'pack', '--pack-destination', '..');
  npm(p.root, 'install', '--offline', '--no-audit', '--no-fund');
  p.git('add', '-A');
  p.git('commit', '-qm', 'install');
  const mainBranch = p.git('rev-parse', '--abbrev-ref', 'HEAD').trim();
  // The other branch, prepared in advance: an edit, a deletion, a new directory, a changed lockfile-free package.json.
  p.git('checkout', '-q', '-b', 'other');
  p.write('src/a.js', 'export const a = "other";\n');
  rmSync(join(p.root, 'src/lib/c.js'));
  p.write('src/branch/x.js', 'export const x = 1;\n');
  p.write('src/lib/deep/e.js', 'export const e = "other";\n');
  p.git('add', '-A');
  p.git('commit', '-qm', 'other');
  p.git('checkout', '-q', mainBranch);
  return { p, rng: new Rng(SEED), counter: 0, mainBranch, onOther: false, narrowVariant: 0, txtIgnored: false, runStates: [] };
}

/**
 * An observer that follows a run takes a source whose ctime is within 50 ms of the run's start
 * (core/identity.ts, racyWindowNs) for one that may have changed during it, and the receipt is
 * then not reusable. A run through the CLI starts long after the test's last edit (a Node start
 * and vouch's loading); one in this process may start a few milliseconds after it. So a run in
 * this process first waits until nothing in the project changed within SETTLE_MS: the edits are
 * then made before the run, as the test means them.
 */


/** `vouch ARGS` in this process, once the last edit is settled. */
async function runIn(p: TempProject, args: string[], env: NodeJS.ProcessEnv = cleanEnv()) {
  const newest = newestChangeMs(p.root);
  await until(() => Date.now() > newest + SETTLE_MS, `the last edit to be ${SETTLE_MS} ms old`, 5_000, 5);
  return await inProcess(p).vouch(args, { env });
}

/** `vouch status --json ARGS`, in this process, with its wall time. */
async function timedStatus(p: TempProject, args: string[], env: NodeJS.ProcessEnv = cleanEnv()): Promise<TimedStatus> {
  const started = performance.now();
  const result = await inProcess(p).vouch(['status', ...args, '--json'], { env });
  return timedStatusOf(args, result, performance.now() - started);
}

/**
 * `vouch status --json ARGS` as the observer serves it to a CLI process (docs/observer.md, "A status
 * answered whole"): its `status` method, called over the socket with this process's build and Node.
 */
async function servedStatus(p: TempProject, args: string[], env: NodeJS.ProcessEnv): Promise<TimedStatus> {
  const record = observerRecords(join(p.root, '.vouch'))[0]?.record;
  if (!record) throw new Error('no observer record');
  const ping = await rpcExchange(record.socket, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: {} }) + '\n');
  const call = { argv: [...args, '--json'], cwd: p.root, env: Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined)), node: process.version, version: ping!.result.version, build: ping!.result.build };
  const started = performance.now();
  const answer = await rpcExchange(record.socket, JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'status', params: call }) + '\n', 60_000);
  if (!answer?.result) throw new Error(`the observer served no status: ${JSON.stringify(answer?.error ?? answer)}`);
  return timedStatusOf(args, { code: answer.result.code, signal: null, stdout: answer.result.stdout, stderr: answer.result.stderr }, performance.now() - started);
}

/** `vouch observer --json`, in this process. */
const observerInfo = async (p: TempProject): Promise<Json> => await inProcess(p).json(['observer']);

async function vouchRun(w: World, checks: string[]): Promise<string> {
  const result = await runIn(w.p, ['run', ...checks], SCAN_ENV);
  // 1 is a check's own failure (src/fail.flag); anything else is vouch's.
  if (result.code !== 0 && result.code !== 1) throw new Error(`vouch run ${checks.join(' ')} exited ${result.code}\n${result.stdout}\n${result.stderr}`);
  w.runStates.push(srcState(w.p.root));
  return `vouch run ${checks.join(' ') || '(all)'} -> ${result.code}`;
}

/** Each check's latest run id, read from the store as it is now. */
function latestRunIds(root: string): Map<string, string> {
  const db = new Database(join(root, '.vouch', 'state.db'), { readonly: true });
  try {
    const rows = db.prepare('SELECT check_name, run_id FROM receipts ORDER BY seq').all() as { check_name: string; run_id: string }[];
    return new Map(rows.map((row) => [row.check_name, row.run_id]));
  } finally {
    db.close();
  }
}

const show = (answers: Answer[]) => answers.map((a) => `${a.name} ${a.freshness} ${a.result} reuse=${a.reuse_eligible} ${a.run_id}`).join('\n    ');

function reasonsOf(out: Json): string {
  return out.checks.map((c: Json) => `${c.name}: ${c.reasons.map((r: Json) => r.code).join(', ')}`).join('; ');
}

describe('the observer answers as a direct scan does', () => {
  it(`after each burst of random mutations, status --sync equals status --no-observer on every check (seed ${SEED})`, { timeout: Math.max(240_000, BURSTS * 6_000) }, async () => {
    const w = setUp();
    const history: { burst: number; ops: string[] }[] = [];
    const counts = new Map<string, number>();
    let currentAnswers = 0;
    /** CURRENT answers from a receipt older than the check's latest: an edit and its revert. */
    let earlierAnswers = 0;
    const freshnessCounts = new Map<string, number>();
    let disagreements = 0;
    const report = (burst: number, message: string) =>
      `${SEED_OF_RUN.replay()}, burst ${burst}: ${message}\n` +
      history
        .slice(-4)
        .map((h) => `  burst ${h.burst}: ${h.ops.join(' | ') || '(no mutation)'}`)
        .join('\n');

    // Any failure inside, an unexpected throw included, names the seed and how to replay it.
    await withSeed(SEED_OF_RUN, async () => {
      await vouchRun(w, []);
      const started = observers.start(w.p);
      expect(started.action).toBe('started');

      for (let burst = 0; burst < BURSTS; burst++) {
        const ops: string[] = [];
        history.push({ burst, ops });
        const runFirst = w.rng.chance(0.15);
        if (runFirst) ops.push(await vouchRun(w, []));
        const planned: Mutation[] = [];
        if (burst % 2 === 1 && REQUIRED[Math.floor(burst / 2)] !== undefined) {
          const kind = REQUIRED[Math.floor(burst / 2)];
          planned.push(MUTATIONS.find((m) => m.kind === kind) as Mutation);
        }
        const size = w.rng.int(6);
        for (let i = 0; i < size; i++) planned.push(pickMutation(w.rng));
        for (const m of planned) {
          const did = m.apply(w);
          if (did !== null) {
            ops.push(did);
            counts.set(m.kind, (counts.get(m.kind) ?? 0) + 1);
          }
        }
        const runAfter = !runFirst && w.rng.chance(0.3);
        if (runAfter) ops.push(await vouchRun(w, w.rng.chance(0.3) ? ['cmd'] : []));
        // Mostly at once, to ask before the events can have arrived: the barrier's job.
        if (w.rng.chance(0.3)) await delay(w.rng.int(40));

        const scanFirst = w.rng.chance(0.25);
        const scan = async () => (await timedStatus(w.p, ['--no-observer'], SCAN_ENV)).out;
        let fellBack = '';
        // Every other burst, the status the observer serves whole to a CLI process: the same
        // command, run inside the observer. Chosen by the burst, not the seed's sequence.
        const observed = async () => {
          const answer = burst % 2 === 0 ? await servedStatus(w.p, ['--sync'], OBSERVER_ENV) : await timedStatus(w.p, ['--sync'], OBSERVER_ENV);
          fellBack = answer.out.observation?.source === 'observer' ? '' : `${answer.stderr.trim() || 'it said nothing'}\nthe observer's log:\n${observerLogTail(join(w.p.root, '.vouch'))}`;
          return answer.out;
        };
        const first = scanFirst ? await scan() : await observed();
        const second = scanFirst ? await observed() : await scan();
        const [fromObserver, fromScan] = scanFirst ? [second, first] : [first, second];

        expect(fromObserver.observation?.source, report(burst, `the answer did not come from the observer: ${fellBack}`)).toBe('observer');
        expect(fromObserver.observation?.mode, report(burst, 'observation.mode')).toBe('sync');
        expect(fromScan.observation?.source, report(burst, 'the --no-observer answer')).toBe('scan');
        const a = answersOf(fromObserver);
        const b = answersOf(fromScan);
        if (JSON.stringify(a) !== JSON.stringify(b)) disagreements++;
        expect(
          a,
          report(
            burst,
            `${scanFirst ? 'scan asked first' : 'observer asked first'}\n  observer:\n    ${show(a)}\n    reasons: ${reasonsOf(fromObserver)}\n  scan:\n    ${show(b)}\n    reasons: ${reasonsOf(fromScan)}`,
          ),
        ).toEqual(b);
        currentAnswers += b.filter((answer) => answer.freshness === 'CURRENT').length;
        const latest = latestRunIds(w.p.root);
        earlierAnswers += b.filter((answer) => answer.freshness === 'CURRENT' && answer.run_id !== latest.get(answer.name)).length;
        for (const answer of b) freshnessCounts.set(answer.freshness, (freshnessCounts.get(answer.freshness) ?? 0) + 1);
      }
    });

    console.log(
      `[observer property] seed ${SEED}, ${BURSTS} bursts: ${JSON.stringify(Object.fromEntries(freshnessCounts))} answers (${earlierAnswers} CURRENT from an earlier receipt); mutations ${JSON.stringify(Object.fromEntries([...counts].sort()))}`,
    );
    expect(disagreements, SEED_OF_RUN.replay()).toBe(0);
    // The sequence must have exercised both sides of the answer and every required kind.
    expect(currentAnswers, `${SEED_OF_RUN.replay()}: no CURRENT answer in ${BURSTS} bursts`).toBeGreaterThan(0);
    for (const kind of new Set(REQUIRED)) expect(counts.get(kind) ?? 0, `${SEED_OF_RUN.replay()}: ${kind} never ran`).toBeGreaterThan(0);
  });
});

/** A node script that rewrites every churn file `rounds` times with its own bytes, and hides one real edit halfway through. */
const CHURN = `const { writeFileSync } = require('fs');
const [root, count, rounds, hidden, hiddenText] = process.argv.slice(2);
const n = Number(count), total = n * Number(rounds);
let done = 0;
for (let round = 0; round < Number(rounds); round++) {
  for (let i = 0; i < n; i++) {
    if (done++ === Math.floor(total / 2)) writeFileSync(hidden, hiddenText);
    writeFileSync(root + '/churn/d' + (i % 30) + '/f' + i + '.txt', 'churn ' + i + '\\n');
  }
}
`;

/** Writes out/one.log and out/two.log in turn (so the kernel merges none of their events), then edits src/a.js. */
const TURNS = `const { openSync, writeSync, writeFileSync } = require('fs');
const [root, count] = process.argv.slice(2);
const files = [openSync(root + '/out/one.log', 'r+'), openSync(root + '/out/two.log', 'r+')];
for (let i = 0; i < Number(count); i++) writeSync(files[i % 2], String(i % 10), 0);
writeFileSync(root + '/src/a.js', 'export const a = 7;\\n');
`;

describe('a burst that can overflow the kernel event queue', () => {
  it('30,000 rewrites with one real edit halfway, the observer paused and then live: it never answers CURRENT', { timeout: 180_000 }, async () => {
    const FILES = 30_000;
    const p = tempProject('obsflood', {
      'vouch.config.json': JSON.stringify(
        {
          schema: 1,
          checks: [
            // Only src/: the churn is not its input, so the hidden edit is the one change it may see.
            { name: 'narrow', kind: 'custom', command: ['node', 'check.js'], inputs: ['src/**'], installed: [] },
            // Every source file, the 30,000 churn files included: rewritten with their own bytes, they are unchanged.
            { name: 'wide', kind: 'custom', command: ['node', 'check.js'], installed: [] },
          ],
        },
        null,
        2,
      ),
      '.gitignore': 'out/\n',
      'check.js': 'process.exit(0);\n',
      'src/a.js': 'export const a = 1;\n',
      'src/b.js': 'export const b = 2;\n',
      'out/churn.cjs': CHURN,
    });
    projects.push(p);
    // Untracked and not ignored: source files, and watched like any other.
    for (let d = 0; d < 30; d++) mkdirSync(join(p.root, 'churn', `d${d}`), { recursive: true });
    for (let i = 0; i < FILES; i++) writeFileSync(join(p.root, 'churn', `d${i % 30}`, `f${i}.txt`), `churn ${i}\n`);

    const ran = await runIn(p, ['run']);
    expect(ran.code, ran.stderr).toBe(0);
    const started = observers.start(p);
    expect(started.action).toBe('started');
    const before = (await timedStatus(p, ['--sync'], OBSERVER_ENV)).out;
    expect(before.observation.source).toBe('observer');
    expect(answersOf(before).map((a) => a.freshness)).toEqual(['CURRENT', 'CURRENT']);

    /** Rewrites every churn file with its own bytes, with one same-size edit of `hidden` halfway through. */
    const churn = async (hidden: string, hiddenText: string): Promise<number> => {
      expect(Buffer.byteLength(hiddenText)).toBe(statSync(join(p.root, hidden)).size);
      const churnStarted = performance.now();
      const child = spawn(process.execPath, [join(p.root, 'out/churn.cjs'), p.root, String(FILES), '1', join(p.root, hidden), hiddenText], {
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let childErr = '';
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (childErr += chunk));
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      expect(code, childErr).toBe(0);
      expect(readFileSync(join(p.root, hidden), 'utf8')).toBe(hiddenText);
      return performance.now() - churnStarted;
    };

    /** Asked the moment the writer is done: STALE or UNVERIFIED, never CURRENT; a scan says STALE. */
    const expectNotCurrent = async (phase: string, churnMs: number) => {
      const after = await timedStatus(p, ['--sync'], OBSERVER_ENV);
      const info = await observerInfo(p);
      const summary = `${phase}: churn ${Math.round(churnMs)} ms; status --sync (source ${after.out.observation.source}) took ${Math.round(after.ms)} ms; observer: events ${info.events}, overflows ${info.overflows}, rescans ${info.rescans}, healthy ${info.healthy} ${JSON.stringify(info.reasons)}`;
      console.log(`[observer flood] ${summary}`);
      // An observer that declines (unhealthy) lets the client scan: that answer must hold too.
      for (const check of after.out.checks) {
        expect(['STALE', 'UNVERIFIED'], `${check.name}: ${JSON.stringify(check)}\n${summary}`).toContain(check.freshness);
        expect(check.reuse_eligible).toBe(false);
      }
      // The edit is real: a direct scan sees it.
      expect(answersOf((await timedStatus(p, ['--no-observer'])).out).map((a) => a.freshness)).toEqual(['STALE', 'STALE']);
      return info;
    };

    /** Once the checks run again, the observer agrees with a scan again, on its own. */
    const expectRecovery = async (phase: string) => {
      expect((await runIn(p, ['run'])).code).toBe(0);
      const target = answersOf((await timedStatus(p, ['--no-observer'])).out);
      expect(target.map((a) => a.freshness)).toEqual(['CURRENT', 'CURRENT']);
      await until(
        async () => {
          const now = (await timedStatus(p, ['--sync'], OBSERVER_ENV)).out;
          return now.observation.source === 'observer' && JSON.stringify(answersOf(now)) === JSON.stringify(target);
        },
        `${phase}: the observer to agree with the scan again`,
        30_000,
        200,
      );
    };

    // 1. The observer is paused (as a descheduled or swapped-out process is) while the burst lands:
    //    the kernel queue (fs.inotify.max_queued_events, 16384 by default) surely overflows.
    const overflowsBefore = (await observerInfo(p)).overflows;
    process.kill(started.pid, 'SIGSTOP');
    let pausedMs: number;
    try {
      pausedMs = await churn('src/a.js', 'export const a = 7;\n');
    } finally {
      process.kill(started.pid, 'SIGCONT');
    }
    const info = await expectNotCurrent('paused', pausedMs);
    // Never silent: the overflow is counted.
    expect(info.overflows, 'a kernel queue overflow was counted').toBeGreaterThan(overflowsBefore);
    await expectRecovery('paused');

    // 2. The observer live, the writer as fast as it can go.
    const liveMs = await churn('src/b.js', 'export const b = 8;\n');
    await expectNotCurrent('live', liveMs);
    await expectRecovery('live');
  });

  it('two ignored files written in turn 40,000 times, then one real edit, the observer paused: the dropped edit is found, never CURRENT', { timeout: 120_000 }, async () => {
    // Few paths, so no burst of paths shows the overflow; they are ignored, so their events are quiet
    // and alone would make no scan. Only the sampled queue says events may have been lost.
    const p = tempProject('obsturns', {
      'vouch.config.json': JSON.stringify({ schema: 1, checks: [{ name: 'narrow', kind: 'custom', command: ['node', 'check.js'], inputs: ['src/**'], installed: [] }] }, null, 2),
      '.gitignore': 'out/\n',
      'check.js': 'process.exit(0);\n',
      'src/a.js': 'export const a = 1;\n',
      'out/one.log': '0',
      'out/two.log': '0',
      'out/turns.cjs': TURNS,
    });
    projects.push(p);
    expect((await runIn(p, ['run'])).code).toBe(0);
    const started = observers.start(p);
    expect(started.action).toBe('started');
    expect(answersOf((await timedStatus(p, ['--sync'], OBSERVER_ENV)).out).map((a) => a.freshness)).toEqual(['CURRENT']);
    process.kill(started.pid, 'SIGSTOP');
    try {
      const wrote = spawnSync(process.execPath, [join(p.root, 'out/turns.cjs'), p.root, '40000'], { encoding: 'utf8' });
      expect(wrote.status, wrote.stderr).toBe(0);
      // Stopped for a while, as a descheduled or suspended process is.
      await delay(300);
    } finally {
      process.kill(started.pid, 'SIGCONT');
    }
    const after = await timedStatus(p, ['--sync'], OBSERVER_ENV);
    const info = await observerInfo(p);
    const summary = `source ${after.out.observation.source}; observer: events ${info.events}, rescans ${info.rescans} (last: ${info.last_rescan?.reason}), patches ${info.patches}`;
    expect(answersOf(after.out).map((a) => a.freshness), summary).toEqual(['STALE']);
    expect(answersOf((await timedStatus(p, ['--no-observer'])).out).map((a) => a.freshness)).toEqual(['STALE']);
  });
});
