import { spawnSync } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { chmodSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanEnv, REPO, tempProject, type TempProject } from '../helpers/project.js';
import { configText, expectCurrent, statusOf, type Json } from '../helpers/answers.js';

/*
 * The freshness mutation campaign: each mutation of what a check depends on
 * must take its receipt out of CURRENT, `explain` must name the change, and
 * undoing the mutation (where that is possible) must bring CURRENT back.
 */

const projects: TempProject[] = [];
afterEach(() => {
  for (const project of projects.splice(0)) project.remove();
});

function project(name: string, files: Record<string, string>, options: { git?: boolean } = {}): TempProject {
  const created = tempProject(name, files, options);
  projects.push(created);
  return created;
}

const config = configText;

const CHECK = { name: 'check', kind: 'custom', command: ['node', 'check.js'], env: ['MY_SETTING'] };
// Its command line mentions vitest, so VITEST_* variables are part of its context.
const TOOL = { name: 'tool', kind: 'test', command: ['node', 'check.js', 'vitest'] };
// A script check whose inputs leave package.json out: only the context binds it to the scripts.
const SCRIPTED = { name: 'scripted', kind: 'typecheck', script: 'typecheck', inputs: ['src/**'] };
const SCRIPTS: Record<string, string> = {
  typecheck: 'node check.js && npm run gen',
  pretypecheck: 'node check.js',
  gen: 'node check.js',
  lint: 'node check.js',
};
const packageJson = (scripts: Record<string, string> = SCRIPTS) => JSON.stringify({ name: 'fx', version: '1.0.0', private: true, scripts }, null, 2) + '\n';
const LOCKFILE = JSON.stringify({ name: 'fx', version: '1.0.0', lockfileVersion: 3, requires: true, packages: { '': { name: 'fx', version: '1.0.0' } } }, null, 2) + '\n';
const A_JS = 'export const a = 1;\n';
const B_JS = 'export const b = 2;\n';
const DEP_JS = 'module.exports = 42;\n';

const BASE_FILES: Record<string, string> = {
  'vouch.config.json': config([CHECK, TOOL, SCRIPTED]),
  '.gitignore': 'node_modules/\ndist/\n',
  'package.json': packageJson(),
  'package-lock.json': LOCKFILE,
  'check.js': 'process.exit(0);\n',
  'README.md': '# fixture\n',
  'src/a.js': A_JS,
  // Same bytes as src/a.js: the target of the symlink mutation.
  'src/same.js': A_JS,
  'src/b.js': B_JS,
  'node_modules/dep/package.json': '{ "name": "dep", "version": "1.0.0" }\n',
  'node_modules/dep/index.js': DEP_JS,
};

function explainOf(p: TempProject, check: string, env?: NodeJS.ProcessEnv): Json {
  const out = p.json(['explain', check], env ? { env } : {});
  expect(out.schema).toBe(1);
  return out;
}

function runCheck(p: TempProject, args: string[], env?: NodeJS.ProcessEnv, expectedCode = 0) {
  const result = p.vouch(['run', ...args], env ? { env } : {});
  expect(result.code, `vouch run ${args.join(' ')}\n${result.stdout}\n${result.stderr}`).toBe(expectedCode);
  return result;
}

function expectOutOfCurrent(p: TempProject, check: string, env?: NodeJS.ProcessEnv, exactly: 'STALE' | null = null): Json {
  const status = statusOf(p, check, env);
  expect(['STALE', 'UNVERIFIED'], JSON.stringify(status)).toContain(status.freshness);
  if (exactly) expect(status.freshness, JSON.stringify(status.reasons)).toBe(exactly);
  expect(status.reuse_eligible).toBe(false);
  return status;
}

function logJson(p: TempProject, check?: string): Json {
  return p.json(check ? ['log', check] : ['log']);
}

/** Every byte vouch keeps: state.db, its WAL, logs, marks. */
function stateBytes(p: TempProject): Buffer[] {
  const out: Buffer[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) out.push(readFileSync(path));
    }
  };
  walk(join(p.root, '.vouch'));
  return out;
}

function expectNoLeak(p: TempProject, secrets: string[], outputs: string[], names: string[] = []) {
  const files = stateBytes(p);
  expect(files.length).toBeGreaterThan(0);
  // The receipts' contexts are there, names and all: the search below looks where values would be.
  for (const name of names) expect(files.some((bytes) => bytes.includes(Buffer.from(`"${name}"`))), name).toBe(true);
  for (const secret of secrets) {
    for (const output of outputs) expect(output).not.toContain(secret);
    for (const bytes of files) expect(bytes.includes(Buffer.from(secret))).toBe(false);
  }
}

/** Sets atime and mtime to exact nanoseconds; Date-based utimes would round them to microseconds. */
function setTimesNs(path: string, atimeNs: bigint, mtimeNs: bigint) {
  const at = (ns: bigint) => `@${ns / 1_000_000_000n}.${(ns % 1_000_000_000n).toString().padStart(9, '0')}`;
  for (const [flag, ns] of [['-a', atimeNs], ['-m', mtimeNs]] as const) {
    const touched = spawnSync('touch', [flag, '-d', at(ns), path], { encoding: 'utf8' });
    expect(touched.status, touched.stderr).toBe(0);
  }
  const after = statSync(path, { bigint: true });
  expect(after.mtimeNs).toBe(mtimeNs);
  expect(after.atimeNs).toBe(atimeNs);
}

/** Rewrites a file with other bytes of the same length and puts its atime and mtime back exactly. */
function rewriteInSameTick(path: string, content: string) {
  const before = statSync(path, { bigint: true });
  expect(Buffer.byteLength(content)).toBe(Number(before.size));
  expect(readFileSync(path, 'utf8')).not.toBe(content);
  writeFileSync(path, content);
  setTimesNs(path, before.atimeNs, before.mtimeNs);
  expect(statSync(path, { bigint: true }).size).toBe(before.size);
}

function changesOf(explanation: Json): { inputs: [string, string, string][]; context: string[]; definition: string[] } {
  return {
    inputs: explanation.input_changes.map((c: Json) => [c.change, c.path, c.origin]),
    context: explanation.context_changes.map((c: Json) => c.field),
    definition: explanation.definition_changes.map((c: Json) => c.field),
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Mutation {
  name: string;
  check?: string;
  /** Environment additions for the run and for the baseline/revert observations. */
  runEnv?: NodeJS.ProcessEnv;
  /** Skip the baseline status, so the mutation lands right after the run. */
  immediate?: boolean;
  /** Changes the project; returns the environment additions to observe with, if the mutation is one. */
  mutate(p: TempProject): NodeJS.ProcessEnv | void;
  expectExplain(explanation: Json): void;
  /** Undoes the mutation; absent where it cannot be undone. */
  revert?(p: TempProject): void;
  /** Values that must appear nowhere vouch writes or prints. */
  secrets?: string[];
}

const SECRET_A = `vouch-secret-a-${randomUUID()}`;
const SECRET_B = `vouch-secret-b-${randomUUID()}`;

const onlyInput = (kind: string, path: string, origin = 'source') => (e: Json) => {
  const changes = changesOf(e);
  expect(changes.inputs).toEqual([[kind, path, origin]]);
  expect(changes.context).toEqual([]);
  expect(changes.definition).toEqual([]);
};

const onlyEnv = (name: string, old: string, now: string) => (e: Json) => {
  const changes = changesOf(e);
  expect(changes.inputs).toEqual([]);
  expect(changes.definition).toEqual([]);
  expect(e.context_changes).toEqual([{ field: `env.${name}`, old, new: now }]);
};

/** Only these scripts' bodies changed, each [name, old, now] (null: not run), sorted by name; nothing else. The reason names them. */
const onlyScripts = (...scripts: [string, string | null, string | null][]) => (e: Json) => {
  const changes = changesOf(e);
  expect(changes.inputs).toEqual([]);
  expect(changes.definition).toEqual([]);
  const body = (text: string | null) => (text === null ? null : { body: text, digest: createHash('sha256').update(text).digest('hex') });
  expect(e.context_changes).toEqual(scripts.map(([name, old, now]) => ({ field: `script.${name}`, old: body(old), new: body(now) })));
  const names = scripts.map(([name]) => name).join(', ');
  expect(e.check.reasons.map((r: Json) => r.message).join('\n')).toContain(`${scripts.length === 1 ? 'script' : 'scripts'} ${names} changed`);
};

const mutations: Mutation[] = [
  {
    name: 'edit a source file',
    mutate: (p) => p.write('src/a.js', 'export const a = 100;\n'),
    expectExplain: (e) => {
      onlyInput('modified', 'src/a.js')(e);
      const [change] = e.input_changes;
      expect(change.old.digest).not.toBe(change.new.digest);
    },
    revert: (p) => p.write('src/a.js', A_JS),
  },
  {
    name: 'same-size rewrite with atime and mtime put back to the nanosecond',
    mutate: (p) => rewriteInSameTick(join(p.root, 'src/a.js'), 'export const a = 9;\n'),
    expectExplain: onlyInput('modified', 'src/a.js'),
    revert: (p) => rewriteInSameTick(join(p.root, 'src/a.js'), A_JS),
  },
  {
    name: 'same-size rewrite with times put back, immediately after the run',
    immediate: true,
    mutate: (p) => rewriteInSameTick(join(p.root, 'src/a.js'), 'export const a = 9;\n'),
    expectExplain: onlyInput('modified', 'src/a.js'),
    revert: (p) => rewriteInSameTick(join(p.root, 'src/a.js'), A_JS),
  },
  {
    name: 'add a file matching the inputs',
    mutate: (p) => p.write('src/new.js', 'export const n = 3;\n'),
    expectExplain: onlyInput('added', 'src/new.js'),
    revert: (p) => rmSync(join(p.root, 'src/new.js')),
  },
  {
    name: 'delete a tracked file',
    mutate: (p) => rmSync(join(p.root, 'src/b.js')),
    expectExplain: onlyInput('removed', 'src/b.js'),
    revert: (p) => p.write('src/b.js', B_JS),
  },
  {
    name: 'rename a tracked file',
    mutate: (p) => renameSync(join(p.root, 'src/b.js'), join(p.root, 'src/c.js')),
    expectExplain: (e) => {
      const changes = changesOf(e);
      expect(changes.inputs).toEqual([
        ['removed', 'src/b.js', 'source'],
        ['added', 'src/c.js', 'source'],
      ]);
      expect(e.input_changes[0].old.digest).toBe(e.input_changes[1].new.digest);
    },
    revert: (p) => renameSync(join(p.root, 'src/c.js'), join(p.root, 'src/b.js')),
  },
  {
    name: 'chmod +x a source file',
    mutate: (p) => chmodSync(join(p.root, 'src/a.js'), 0o755),
    expectExplain: (e) => {
      onlyInput('mode', 'src/a.js')(e);
      const [change] = e.input_changes;
      expect([change.old.executable, change.new.executable]).toEqual([false, true]);
      expect(change.old.digest).toBe(change.new.digest);
    },
    revert: (p) => chmodSync(join(p.root, 'src/a.js'), 0o644),
  },
  {
    name: 'replace a file with a symlink to a file of identical content',
    mutate: (p) => {
      unlinkSync(join(p.root, 'src/a.js'));
      symlinkSync('same.js', join(p.root, 'src/a.js'));
      expect(readFileSync(join(p.root, 'src/a.js'), 'utf8')).toBe(A_JS);
    },
    expectExplain: (e) => {
      onlyInput('type', 'src/a.js')(e);
      const [change] = e.input_changes;
      expect(change.old.type).toBe('file');
      expect(change.new.type).toBe('symlink');
      expect(change.new.target).toBe('same.js');
    },
    revert: (p) => {
      unlinkSync(join(p.root, 'src/a.js'));
      p.write('src/a.js', A_JS);
    },
  },
  {
    name: 'rewrite an installed node_modules file with identical bytes',
    mutate: (p) => {
      const path = join(p.root, 'node_modules/dep/index.js');
      writeFileSync(path, readFileSync(path));
    },
    expectExplain: (e) => {
      onlyInput('identity', 'node_modules/dep/index.js', 'installed')(e);
      const [change] = e.input_changes;
      expect(change.identity_fields).toContain('ctime_ns');
      expect(change.old.identity).not.toBe(change.new.identity);
    },
  },
  {
    name: 'change the lockfile',
    mutate: (p) => p.write('package-lock.json', LOCKFILE.replace('"requires": true', '"requires": false')),
    expectExplain: onlyInput('modified', 'package-lock.json'),
    revert: (p) => p.write('package-lock.json', LOCKFILE),
  },
  {
    name: 'change NODE_ENV',
    runEnv: { NODE_ENV: SECRET_A },
    mutate: () => ({ NODE_ENV: SECRET_B }),
    expectExplain: onlyEnv('NODE_ENV', 'set', 'changed'),
    secrets: [SECRET_A, SECRET_B],
  },
  {
    name: 'set a declared env variable',
    mutate: () => ({ MY_SETTING: SECRET_B }),
    expectExplain: onlyEnv('MY_SETTING', 'unset', 'set'),
    secrets: [SECRET_B],
  },
  {
    name: 'change a tool-prefixed env variable (VITEST_FOO) for a check that runs vitest',
    check: 'tool',
    runEnv: { VITEST_FOO: SECRET_A },
    mutate: () => ({ VITEST_FOO: SECRET_B }),
    expectExplain: onlyEnv('VITEST_FOO', 'set', 'changed'),
    secrets: [SECRET_A, SECRET_B],
  },
  {
    name: "change the check's command args in vouch.config.json",
    mutate: (p) => p.write('vouch.config.json', config([{ ...CHECK, command: ['node', 'check.js', '--flag'] }, TOOL, SCRIPTED])),
    expectExplain: (e) => {
      const changes = changesOf(e);
      expect(changes.definition).toEqual(['command']);
      expect(e.definition_changes[0]).toEqual({ field: 'command', old: ['node', 'check.js'], new: ['node', 'check.js', '--flag'] });
      expect(changes.context).toEqual(['argv']);
      expect(changes.inputs).toEqual([]);
    },
    revert: (p) => p.write('vouch.config.json', config([CHECK, TOOL, SCRIPTED])),
  },
  {
    name: "change the check's inputs in vouch.config.json",
    mutate: (p) => p.write('vouch.config.json', config([{ ...CHECK, inputs: ['**', '!README.md'] }, TOOL, SCRIPTED])),
    expectExplain: (e) => {
      const changes = changesOf(e);
      expect(changes.definition).toEqual(['inputs']);
      expect(e.definition_changes[0]).toEqual({ field: 'inputs', old: ['**'], new: ['**', '!README.md'] });
      expect(changes.context).toEqual([]);
      expect(changes.inputs).toEqual([['removed', 'README.md', 'source']]);
    },
    revert: (p) => p.write('vouch.config.json', config([CHECK, TOOL, SCRIPTED])),
  },
  {
    name: "change a script check's body to `echo skipped`, its inputs narrowed to src/**",
    check: 'scripted',
    mutate: (p) => p.write('package.json', packageJson({ ...SCRIPTS, typecheck: 'echo skipped' })),
    // It no longer runs gen, so gen leaves the context as well.
    expectExplain: onlyScripts(['gen', SCRIPTS.gen!, null], ['typecheck', SCRIPTS.typecheck!, 'echo skipped']),
    revert: (p) => p.write('package.json', packageJson()),
  },
  {
    name: 'change the pre script npm runs before it',
    check: 'scripted',
    mutate: (p) => p.write('package.json', packageJson({ ...SCRIPTS, pretypecheck: 'echo skipped' })),
    expectExplain: onlyScripts(['pretypecheck', SCRIPTS.pretypecheck!, 'echo skipped']),
    revert: (p) => p.write('package.json', packageJson()),
  },
  {
    name: 'add a post script',
    check: 'scripted',
    mutate: (p) => p.write('package.json', packageJson({ ...SCRIPTS, posttypecheck: 'exit 0' })),
    expectExplain: onlyScripts(['posttypecheck', null, 'exit 0']),
    revert: (p) => p.write('package.json', packageJson()),
  },
  {
    name: 'change a script its body runs through npm',
    check: 'scripted',
    mutate: (p) => p.write('package.json', packageJson({ ...SCRIPTS, gen: 'echo skipped' })),
    expectExplain: onlyScripts(['gen', SCRIPTS.gen!, 'echo skipped']),
    revert: (p) => p.write('package.json', packageJson()),
  },
];

// Both ways of looking at installed files: the native tree scan, and the JavaScript walk every
// machine has (VOUCH_NATIVE=0). Each must see every mutation.
const SCANS = [
  { scan: 'native scan', env: {} },
  { scan: 'JavaScript scan', env: { VOUCH_NATIVE: '0' } },
];

describe.each(SCANS)('freshness mutations ($scan): each leaves CURRENT, explain names it, reverting restores CURRENT', ({ env: scanEnv }) => {
  it.each(mutations.map((m) => [m.name, m] as const))('%s', async (_name, m) => {
    const p = project('fresh', BASE_FILES);
    const check = m.check ?? 'check';
    const baseEnv = cleanEnv({ ...scanEnv, ...m.runEnv });
    const outputs: string[] = [];

    outputs.push(runCheck(p, [check], baseEnv).stdout);
    if (!m.immediate) {
      outputs.push(JSON.stringify(expectCurrent(p, check, baseEnv)));
      // Past the racy window, so the stat cache now holds the file's identity.
      await sleep(60);
    }

    const extra = m.mutate(p);
    const observeEnv = extra ? cleanEnv({ ...scanEnv, ...m.runEnv, ...extra }) : baseEnv;
    const stale = expectOutOfCurrent(p, check, observeEnv, 'STALE');
    outputs.push(JSON.stringify(stale));

    // A second look (explain) must agree: the first one's stat cache must not hide the change.
    const explanation = explainOf(p, check, observeEnv);
    outputs.push(JSON.stringify(explanation));
    expect(explanation.check.freshness).toBe('STALE');
    expect(explanation.check.reuse_eligible).toBe(false);
    m.expectExplain(explanation);

    if (m.revert) {
      m.revert(p);
      outputs.push(JSON.stringify(expectCurrent(p, check, baseEnv)));
    } else if (extra) {
      outputs.push(JSON.stringify(expectCurrent(p, check, baseEnv)));
    }

    if (m.secrets) {
      // A receipt made under the mutated environment must not keep its value either.
      outputs.push(runCheck(p, [check], observeEnv).stdout);
      const back = explainOf(p, check, baseEnv);
      expect(back.check.freshness).toBe('STALE');
      outputs.push(JSON.stringify(back));
      outputs.push(JSON.stringify(logJson(p)));
      expectNoLeak(p, m.secrets, outputs, Object.keys(extra ?? {}));
    }
  });

  it('npm ci recreates node_modules: STALE, with installed identity changes', () => {
    const dep = { name: 'dep', version: '1.0.0', main: 'index.js' };
    const p = project('fresh-npmci', {
      'vendor/dep/package.json': JSON.stringify(dep, null, 2) + '\n',
      'vendor/dep/index.js': DEP_JS,
      'package.json': JSON.stringify({ name: 'fx', version: '1.0.0', private: true, dependencies: { dep: 'file:./vendor/dep-1.0.0.tgz' } }, null, 2) + '\n',
      '.gitignore': 'node_modules/\n',
      'check.js': "process.exit(require('dep') === 42 ? 0 : 1);\n",
      'vouch.config.json': config([{ name: 'check', kind: 'custom', command: ['node', 'check.js'] }]),
    });
    const npm = (cwd: string, ...args: string[]) => {
      const result = spawnSync('npm', args, { cwd, encoding: 'utf8', env: cleanEnv({ npm_config_update_notifier: 'false' }) });
      expect(result.status, `npm ${args.join(' ')}\n${result.stdout}\n${result.stderr}`).toBe(0);
    };
    npm(join(p.root, 'vendor/dep'), 'pack', '--pack-destination', '..');
    npm(p.root, 'install', '--offline', '--no-audit', '--no-fund');
    const env = cleanEnv(scanEnv);
    const inodeBefore = statSync(join(p.root, 'node_modules/dep/index.js')).ino;

    runCheck(p, ['check'], env);
    expectCurrent(p, 'check', env);

    npm(p.root, 'ci', '--offline', '--no-audit', '--no-fund');
    expect(readFileSync(join(p.root, 'node_modules/dep/index.js'), 'utf8')).toBe(DEP_JS);
    const status = expectOutOfCurrent(p, 'check', env, 'STALE');
    expect(status.reasons.map((r: Json) => r.code)).toContain('inputs-changed');
    const explanation = explainOf(p, 'check', env);
    const installed = explanation.input_changes.filter((c: Json) => c.origin === 'installed');
    expect(installed.length).toBeGreaterThan(0);
    expect(explanation.input_changes.filter((c: Json) => c.origin === 'source')).toEqual([]);
    const index = installed.find((c: Json) => c.path === 'node_modules/dep/index.js');
    expect(index, JSON.stringify(explanation.input_changes)).toBeDefined();
    expect(index.change).toBe('identity');
    expect(index.identity_fields).toContain('ctime_ns');
    if (statSync(join(p.root, 'node_modules/dep/index.js')).ino !== inodeBefore) expect(index.identity_fields).toContain('ino');

    // A new run binds the new install.
    runCheck(p, ['check'], env);
    expectCurrent(p, 'check', env);
  });

  it('edit in a project with no git repo of its own, inside a parent repo that ignores it', () => {
    // The temp project sits under the repo's .tmp/, which the repo ignores: git lists none of its files.
    const p = project('fresh-nogit', {
      'vouch.config.json': config([{ name: 'check', kind: 'custom', command: ['node', 'check.js'] }]),
      'check.js': 'process.exit(0);\n',
      'src/a.js': A_JS,
    }, { git: false });
    const ignored = spawnSync('git', ['check-ignore', '-q', p.root], { cwd: REPO });
    expect(ignored.status, 'precondition: the parent repo ignores the temp project').toBe(0);
    const env = cleanEnv(scanEnv);

    runCheck(p, ['check'], env);
    expectCurrent(p, 'check', env);
    const [receipt] = logJson(p, 'check').receipts;
    // check.js and src/a.js are what the check reads.
    expect.soft(receipt.input_count, 'inputs recorded by the receipt').toBeGreaterThanOrEqual(2);

    p.write('src/a.js', 'export const a = 100;\n');
    expectOutOfCurrent(p, 'check', env);
    p.write('src/a.js', A_JS);
    expectCurrent(p, 'check', env);
  });
});

/** The mutations of files alone: after a run on the mutated tree and the revert, the first receipt must answer again. */
const FILE_ONLY = new Set([
  'edit a source file',
  'same-size rewrite with atime and mtime put back to the nanosecond',
  'add a file matching the inputs',
  'delete a tracked file',
  'rename a tracked file',
  'chmod +x a source file',
  'replace a file with a symlink to a file of identical content',
  'change the lockfile',
]);

describe('edit, run, revert: the first receipt answers again, never the run made on the mutated tree', () => {
  const cases = mutations.filter((m) => m.revert !== undefined && m.runEnv === undefined && !m.immediate);
  it.each(cases.map((m) => [m.name, m] as const))('%s', async (_name, m) => {
    const p = project('fresh-revert', BASE_FILES);
    const check = m.check ?? 'check';
    runCheck(p, [check]);
    const first = expectCurrent(p, check).receipt.run_id;
    await sleep(60);
    const extra = m.mutate(p);
    if (extra) return; // an environment change: not a tree to revert
    expectOutOfCurrent(p, check);
    runCheck(p, [check]);
    const mutated = logJson(p, check).receipts[0].run_id;
    expect(mutated).not.toBe(first);
    m.revert!(p);
    const back = statusOf(p, check);
    // A run on the mutated tree never answers for the reverted one.
    expect(back.receipt.run_id === mutated && back.freshness === 'CURRENT', JSON.stringify(back)).toBe(false);
    if (back.freshness === 'CURRENT') expect(back.receipt.run_id).toBe(first);
    if (FILE_ONLY.has(m.name)) {
      expect(back.freshness, JSON.stringify(back.reasons)).toBe('CURRENT');
      expect(back.receipt.run_id).toBe(first);
      // --if-due agrees, and skips on the first receipt.
      expect(runCheck(p, [check, '--if-due']).stdout).toContain(first);
    }
  });

  it('names every file-only mutation it expects CURRENT from', () => {
    for (const name of FILE_ONLY) expect(cases.map((m) => m.name)).toContain(name);
  });
});

describe('an input that changes while the check runs', () => {
  it('rewritten and restored to the same bytes during the run: the receipt is not reusable', () => {
    // The check sees other bytes than the ones its receipt is bound to: it passes only on "a = 2",
    // while src/a.js says "a = 1" before and after. This models a concurrent writer (an editor save
    // and undo, a code generator) that puts the file back before the run ends.
    const p = project('fresh-aba', {
      'vouch.config.json': config([{ name: 'check', kind: 'custom', command: ['node', 'check.cjs'] }]),
      'check.cjs': [
        "const fs = require('fs');",
        "const original = fs.readFileSync('src/a.js');",
        "fs.writeFileSync('src/a.js', 'export const a = 2;\\n');",
        "const seen = fs.readFileSync('src/a.js', 'utf8');",
        'fs.writeFileSync(\'src/a.js\', original);',
        "process.exit(seen.includes('a = 2') ? 0 : 1);",
        '',
      ].join('\n'),
      'src/a.js': A_JS,
    });
    runCheck(p, ['check']);
    expect(readFileSync(join(p.root, 'src/a.js'), 'utf8')).toBe(A_JS);
    const [receipt] = logJson(p, 'check').receipts;
    expect(receipt.reuse_eligible, JSON.stringify(receipt)).toBe(false);
    expect(receipt.reasons.map((r: Json) => r.code)).toContain('inputs-changed-during-run');
    const status = statusOf(p, 'check');
    expect(status).toMatchObject({ freshness: 'STALE', reuse_eligible: false });
    expect(status.reasons.map((r: Json) => r.code)).toEqual(['inputs-changed-during-run']);
  });
});

describe('narrowed inputs', () => {
  it('a typecheck check narrowed to code files ignores README.md but not a .ts file', () => {
    const p = project('fresh-narrow', {
      'vouch.config.json': config([{ name: 'typecheck', kind: 'typecheck', command: ['node', 'check.js'], inputs: ['**/*.{ts,js,json}'] }]),
      'check.js': 'process.exit(0);\n',
      'src/index.ts': 'export const n: number = 1;\n',
      'README.md': '# readme\n',
    });
    runCheck(p, ['typecheck']);
    expectCurrent(p, 'typecheck');

    p.write('README.md', '# readme, edited\n');
    expectCurrent(p, 'typecheck');
    expect(explainOf(p, 'typecheck').input_changes).toEqual([]);

    p.write('src/index.ts', 'export const n: number = 2;\n');
    expectOutOfCurrent(p, 'typecheck', undefined, 'STALE');
    expect(changesOf(explainOf(p, 'typecheck')).inputs).toEqual([['modified', 'src/index.ts', 'source']]);
    p.write('src/index.ts', 'export const n: number = 1;\n');
    expectCurrent(p, 'typecheck');
  });
});

describe("a script's body is part of its check's context, whatever the inputs", () => {
  it('`echo skipped` makes it STALE naming the script, reverting brings CURRENT back, an unrelated script does not matter', () => {
    // The command form of the same check: `npm run typecheck` in "command" binds the scripts too.
    const COMMAND = { name: 'command', kind: 'typecheck', command: ['npm', 'run', 'typecheck'], inputs: ['src/**'] };
    const p = project('fresh-script', { ...BASE_FILES, 'vouch.config.json': config([SCRIPTED, COMMAND]) });
    runCheck(p, ['scripted', 'command']);
    expectCurrent(p, 'scripted');
    expectCurrent(p, 'command');

    p.write('package.json', packageJson({ ...SCRIPTS, lint: 'echo skipped' }));
    expectCurrent(p, 'scripted');
    expectCurrent(p, 'command');

    p.write('package.json', packageJson({ ...SCRIPTS, typecheck: 'echo skipped' }));
    for (const check of ['scripted', 'command']) {
      const stale = expectOutOfCurrent(p, check, undefined, 'STALE');
      expect(stale.reasons.map((r: Json) => r.code)).toEqual(['context-changed']);
      expect(stale.reasons[0].message).toContain('scripts gen, typecheck changed');
    }
    const human = p.vouch(['explain', 'scripted']);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain(`script typecheck: \`${SCRIPTS.typecheck}\` -> \`echo skipped\``);
    expect(human.stdout).toContain(`script gen: \`${SCRIPTS.gen}\` -> (not run)`);

    p.write('package.json', packageJson());
    expectCurrent(p, 'scripted');
    expectCurrent(p, 'command');
  });
});

describe('the tool prefixes of the scripts a check runs are part of its context', () => {
  it('VITEST_* matters to a test script that runs vitest through another script, and not to one that does not', () => {
    const scripts = { test: 'npm run unit', unit: 'node check.js vitest', lint: 'node check.js' };
    const p = project('fresh-script-env', {
      ...BASE_FILES,
      'package.json': packageJson(scripts),
      'vouch.config.json': config([
        { name: 'test', kind: 'test', script: 'test', inputs: ['src/**'] },
        { name: 'lint', kind: 'lint', script: 'lint', inputs: ['src/**'] },
      ]),
    });
    runCheck(p, ['test', 'lint'], cleanEnv());
    expectCurrent(p, 'test');
    const withVitestVariable = cleanEnv({ VITEST_POOL_ID: '7' });
    const stale = expectOutOfCurrent(p, 'test', withVitestVariable, 'STALE');
    expect(stale.reasons.map((r: Json) => r.code)).toEqual(['context-changed']);
    expect(JSON.stringify(explainOf(p, 'test', withVitestVariable).context_changes)).toContain('VITEST_POOL_ID');
    expect(statusOf(p, 'lint', withVitestVariable).freshness).toBe('CURRENT');
  });
});

describe('run --if-due, FAIL receipts, latest receipt wins', () => {
  const verdictFiles = {
    // The outcome file is deliberately not an input, so the result can flip while inputs stay put.
    'vouch.config.json': config([{ name: 'verdict', kind: 'custom', command: ['node', 'verdict.cjs'], inputs: ['verdict.cjs'] }]),
    'verdict.cjs': "process.exit(require('fs').readFileSync('outcome.txt', 'utf8').trim() === 'fail' ? 1 : 0);\n",
    'outcome.txt': 'pass\n',
  };

  it('--if-due skips a CURRENT PASS and runs a STALE one', () => {
    const p = project('fresh-ifdue', BASE_FILES);
    runCheck(p, ['check']);
    const [first] = logJson(p, 'check').receipts;

    const skipped = runCheck(p, ['check', '--if-due']);
    const line = skipped.stdout.split('\n').find((l) => l.includes('skipped check'));
    expect(line, skipped.stdout).toBeDefined();
    expect(line).toContain(first.run_id);
    expect(line).toContain('saved');
    expect(logJson(p, 'check').receipts).toHaveLength(1);

    p.write('src/a.js', 'export const a = 100;\n');
    expectOutOfCurrent(p, 'check', undefined, 'STALE');
    const ran = runCheck(p, ['check', '--if-due']);
    expect(ran.stdout).not.toContain('skipped');
    const receipts = logJson(p, 'check').receipts;
    expect(receipts).toHaveLength(2);
    expect(receipts[0].run_id).not.toBe(first.run_id);
    expect(expectCurrent(p, 'check').receipt.run_id).toBe(receipts[0].run_id);
  });

  it('a CURRENT FAIL stays a failure, is not reusable, and --if-due reruns it', () => {
    const p = project('fresh-fail', { ...verdictFiles, 'outcome.txt': 'fail\n' });
    runCheck(p, ['verdict'], undefined, 1);
    const status = statusOf(p, 'verdict');
    expect(status.freshness).toBe('CURRENT');
    expect(status.result).toBe('FAIL');
    expect(status.reuse_eligible).toBe(false);
    expect(status.receipt.exit_code).toBe(1);
    expect(status.reasons.map((r: Json) => r.code)).toContain('failed');

    const rerun = runCheck(p, ['verdict', '--if-due'], undefined, 1);
    expect(rerun.stdout).not.toContain('skipped');
    const receipts = logJson(p, 'verdict').receipts;
    expect(receipts).toHaveLength(2);
    expect(receipts.every((r: Json) => r.result === 'FAIL' && r.reuse_eligible === false)).toBe(true);
  });

  it('the latest receipt wins: PASS then FAIL says FAIL, FAIL then PASS says PASS', () => {
    const p = project('fresh-latest', verdictFiles);
    runCheck(p, ['verdict']);
    p.write('outcome.txt', 'fail\n');
    runCheck(p, ['verdict'], undefined, 1);
    let status = statusOf(p, 'verdict');
    expect(status.freshness).toBe('CURRENT');
    expect(status.result).toBe('FAIL');
    expect(status.reuse_eligible).toBe(false);
    const [latest, earlier] = logJson(p, 'verdict').receipts;
    expect(status.receipt.run_id).toBe(latest.run_id);
    expect([latest.result, earlier.result]).toEqual(['FAIL', 'PASS']);

    p.write('outcome.txt', 'pass\n');
    runCheck(p, ['verdict']);
    status = expectCurrent(p, 'verdict');
    expect(status.receipt.run_id).toBe(logJson(p, 'verdict').receipts[0].run_id);
  });
});

describe('the real TypeScript compiler', () => {
  it('tsc --noEmit: PASS CURRENT, a type error makes it STALE then FAIL, the fix brings the first PASS back', () => {
    const p = project('fresh-tsc', {
      'vouch.config.json': config([{ name: 'tsc', kind: 'typecheck', command: ['tsc', '--noEmit'] }]),
      'tsconfig.json': JSON.stringify({ compilerOptions: { strict: true, noEmit: true, types: [], skipLibCheck: true, lib: ['ES2022'], target: 'ES2022' }, include: ['src'] }, null, 2) + '\n',
      'src/index.ts': 'export const n: number = 1;\n',
    });
    // No repo directory on the caller's PATH: "tsc" must be found through node_modules/.bin of the
    // directories above the project root, as npm gives its scripts.
    const callerPath = (process.env.PATH ?? '').split(delimiter).filter((dir) => dir !== '' && !dir.startsWith(REPO));
    const env = cleanEnv({ PATH: callerPath.join(delimiter) });
    expect(spawnSync('tsc', ['--version'], { env }).error, 'precondition: tsc is not on the caller PATH').toBeDefined();

    runCheck(p, ['tsc'], env);
    const firstRun = expectCurrent(p, 'tsc', env).receipt.run_id;
    const db = new Database(join(p.root, '.vouch', 'state.db'), { readonly: true });
    try {
      const row = db.prepare('SELECT context FROM receipts ORDER BY seq DESC LIMIT 1').get() as { context: string };
      const context = JSON.parse(row.context);
      expect(context.executable.path).toBe(realpathSync(join(REPO, 'node_modules', 'typescript', 'bin', 'tsc')));
    } finally {
      db.close();
    }

    p.write('src/index.ts', 'export const n: number = "one";\n');
    expectOutOfCurrent(p, 'tsc', env, 'STALE');
    const failed = p.vouch(['run', 'tsc'], { env });
    expect(failed.code).not.toBe(0);
    expect(failed.code).not.toBeNull();
    expect(failed.stdout + failed.stderr).toContain('TS2322');
    const status = statusOf(p, 'tsc', env);
    expect(status.freshness).toBe('CURRENT');
    expect(status.result).toBe('FAIL');
    expect(status.receipt.exit_code).toBe(failed.code);

    // The fix puts back the inputs of the first run: its receipt answers, and a rerun finds the same.
    p.write('src/index.ts', 'export const n: number = 1;\n');
    expect(expectCurrent(p, 'tsc', env).receipt.run_id).toBe(firstRun);
    runCheck(p, ['tsc'], env);
    expect(expectCurrent(p, 'tsc', env).receipt.run_id).not.toBe(firstRun);
  });
});
