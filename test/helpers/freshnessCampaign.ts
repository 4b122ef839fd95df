import { spawnSync } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { chmodSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { configText, type Json } from './answers.js';
import { expectCurrentIn, inProcess, statusIn, type AsyncProject } from './inProcess.js';
import { cleanEnv, REPO, tempProject, type TempProject } from './project.js';

/*
 * The freshness mutation campaign: each mutation of what a check depends on
 * must take its receipt out of CURRENT, `explain` must name the change, and
 * undoing the mutation (where that is possible) must bring CURRENT back.
 * test/integration/freshness.test.ts runs it with the native scan, and
 * freshnessJsWalk.test.ts with the JavaScript walk every machine has
 * (VOUCH_NATIVE=0); both run vouch in process (test/helpers/inProcess.ts).
 */

/** `shared`: a project that tests of the file take turns on, removed after the file's last test. */
export type ProjectMaker = (name: string, files: Record<string, string>, options?: { git?: boolean; shared?: boolean }) => AsyncProject;

/** Temporary projects, each removed after its test; their commands run in process unless `through` says otherwise. */
export function asyncProjects(through: (project: TempProject) => AsyncProject = inProcess): ProjectMaker {
  const made: AsyncProject[] = [];
  const shared: AsyncProject[] = [];
  afterEach(() => {
    for (const project of made.splice(0)) project.remove();
  });
  afterAll(() => {
    for (const project of shared.splice(0)) project.remove();
  });
  return (name, files, options = {}) => {
    const created = through(tempProject(name, files, options));
    (options.shared ? shared : made).push(created);
    return created;
  };
}

export const config = configText;

export const CHECK = { name: 'check', kind: 'custom', command: ['node', 'check.js'], env: ['MY_SETTING'] };
// Its command line mentions vitest, so VITEST_* variables are part of its context.
export const TOOL = { name: 'tool', kind: 'test', command: ['node', 'check.js', 'vitest'] };
// A script check whose inputs leave package.json out: only the context binds it to the scripts.
export const SCRIPTED = { name: 'scripted', kind: 'typecheck', script: 'typecheck', inputs: ['src/**'] };
export const SCRIPTS: Record<string, string> = {
  typecheck: 'node check.js && npm run gen',
  pretypecheck: 'node check.js',
  gen: 'node check.js',
  lint: 'node check.js',
};
export const packageJson = (scripts: Record<string, string> = SCRIPTS) => JSON.stringify({ name: 'fx', version: '1.0.0', private: true, scripts }, null, 2) + '\n';
export const LOCKFILE = JSON.stringify({ name: 'fx', version: '1.0.0', lockfileVersion: 3, requires: true, packages: { '': { name: 'fx', version: '1.0.0' } } }, null, 2) + '\n';
export const A_JS = 'export const a = 1;\n';
export const B_JS = 'export const b = 2;\n';
export const DEP_JS = 'module.exports = 42;\n';

export const BASE_FILES: Record<string, string> = {
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

export async function explainOf(p: AsyncProject, check: string, env?: NodeJS.ProcessEnv): Promise<Json> {
  const out = await p.json(['explain', check], env ? { env } : {});
  expect(out.schema).toBe(1);
  return out;
}

export async function runCheck(p: AsyncProject, args: string[], env?: NodeJS.ProcessEnv, expectedCode = 0) {
  const result = await p.vouch(['run', ...args], env ? { env } : {});
  expect(result.code, `vouch run ${args.join(' ')}\n${result.stdout}\n${result.stderr}`).toBe(expectedCode);
  return result;
}

export async function expectOutOfCurrent(p: AsyncProject, check: string, env?: NodeJS.ProcessEnv, exactly: 'STALE' | null = null): Promise<Json> {
  const status = await statusIn(p, check, env);
  expect(['STALE', 'UNVERIFIED'], JSON.stringify(status)).toContain(status.freshness);
  if (exactly) expect(status.freshness, JSON.stringify(status.reasons)).toBe(exactly);
  expect(status.reuse_eligible).toBe(false);
  return status;
}

export async function logJson(p: AsyncProject, check?: string): Promise<Json> {
  return p.json(check ? ['log', check] : ['log']);
}

/** Every byte vouch keeps: state.db, its WAL, logs, marks. */
function stateBytes(p: AsyncProject): Buffer[] {
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

function expectNoLeak(p: AsyncProject, secrets: string[], outputs: string[], names: string[] = []) {
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

export function changesOf(explanation: Json): { inputs: [string, string, string][]; context: string[]; definition: string[] } {
  return {
    inputs: explanation.input_changes.map((c: Json) => [c.change, c.path, c.origin]),
    context: explanation.context_changes.map((c: Json) => c.field),
    definition: explanation.definition_changes.map((c: Json) => c.field),
  };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What a mutation touches of a project: its files, in process or not. */
export type Tree = Pick<TempProject, 'root' | 'write'>;

export interface Mutation {
  name: string;
  check?: string;
  /** Environment additions for the run and for the baseline/revert observations. */
  runEnv?: NodeJS.ProcessEnv;
  /** Skip the baseline status, so the mutation lands right after the run. */
  immediate?: boolean;
  /** Changes the project; returns the environment additions to observe with, if the mutation is one. */
  mutate(p: Tree): NodeJS.ProcessEnv | void;
  expectExplain(explanation: Json): void;
  /** Undoes the mutation; absent where it cannot be undone. */
  revert?(p: Tree): void;
  /** Values that must appear nowhere vouch writes or prints. */
  secrets?: string[];
  /** False where the change is one no scan looks at (the env, the command, a script's body): one scan's run covers it. */
  scanned?: false;
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

export const mutations: Mutation[] = [
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
    scanned: false,
    runEnv: { NODE_ENV: SECRET_A },
    mutate: () => ({ NODE_ENV: SECRET_B }),
    expectExplain: onlyEnv('NODE_ENV', 'set', 'changed'),
    secrets: [SECRET_A, SECRET_B],
  },
  {
    name: 'set a declared env variable',
    scanned: false,
    mutate: () => ({ MY_SETTING: SECRET_B }),
    expectExplain: onlyEnv('MY_SETTING', 'unset', 'set'),
    secrets: [SECRET_B],
  },
  {
    name: 'change a tool-prefixed env variable (VITEST_FOO) for a check that runs vitest',
    scanned: false,
    check: 'tool',
    runEnv: { VITEST_FOO: SECRET_A },
    mutate: () => ({ VITEST_FOO: SECRET_B }),
    expectExplain: onlyEnv('VITEST_FOO', 'set', 'changed'),
    secrets: [SECRET_A, SECRET_B],
  },
  {
    name: "change the check's command args in vouch.config.json",
    scanned: false,
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
    scanned: false,
    check: 'scripted',
    mutate: (p) => p.write('package.json', packageJson({ ...SCRIPTS, typecheck: 'echo skipped' })),
    // It no longer runs gen, so gen leaves the context as well.
    expectExplain: onlyScripts(['gen', SCRIPTS.gen!, null], ['typecheck', SCRIPTS.typecheck!, 'echo skipped']),
    revert: (p) => p.write('package.json', packageJson()),
  },
  {
    name: 'change the pre script npm runs before it',
    scanned: false,
    check: 'scripted',
    mutate: (p) => p.write('package.json', packageJson({ ...SCRIPTS, pretypecheck: 'echo skipped' })),
    expectExplain: onlyScripts(['pretypecheck', SCRIPTS.pretypecheck!, 'echo skipped']),
    revert: (p) => p.write('package.json', packageJson()),
  },
  {
    name: 'add a post script',
    scanned: false,
    check: 'scripted',
    mutate: (p) => p.write('package.json', packageJson({ ...SCRIPTS, posttypecheck: 'exit 0' })),
    expectExplain: onlyScripts(['posttypecheck', null, 'exit 0']),
    revert: (p) => p.write('package.json', packageJson()),
  },
  {
    name: 'change a script its body runs through npm',
    scanned: false,
    check: 'scripted',
    mutate: (p) => p.write('package.json', packageJson({ ...SCRIPTS, gen: 'echo skipped' })),
    expectExplain: onlyScripts(['gen', SCRIPTS.gen!, 'echo skipped']),
    revert: (p) => p.write('package.json', packageJson()),
  },
];

/**
 * A mutation that leaves the project as its run left it: undone (each test asserts CURRENT after
 * the revert), no run of its own, not one that must follow the run at once. Such mutations of one
 * check take turns on one project and its one run, each from the CURRENT the one before it
 * asserted: a run of a script check is two npm processes.
 */
const takesTurns = (m: Mutation) => m.revert !== undefined && m.secrets === undefined && m.runEnv === undefined && !m.immediate;

/** Registers the campaign: every mutation, or those `only` keeps. */
export function describeMutationCampaign(scan: string, scanEnv: NodeJS.ProcessEnv, project: ProjectMaker, only: (m: Mutation) => boolean = () => true) {
  describe(`freshness mutations (${scan}): each leaves CURRENT, explain names it, reverting restores CURRENT`, () => {
    /** By check: the project run once that the mutations taking turns share. */
    const ranOnce = new Map<string, AsyncProject>();
    it.each(mutations.filter(only).map((m) => [m.name, m] as const))('%s', async (_name, m) => {
      const check = m.check ?? 'check';
      const baseEnv = cleanEnv({ ...scanEnv, ...m.runEnv });
      const outputs: string[] = [];
      const turn = takesTurns(m);
      let p = turn ? ranOnce.get(check) : undefined;
      // Taken while the test runs: one that fails may leave the project changed, and the next makes its own.
      if (turn) ranOnce.delete(check);
      if (p === undefined) {
        p = project('fresh', BASE_FILES, { shared: turn });
        outputs.push((await runCheck(p, [check], baseEnv)).stdout);
      }
      await mutationCase(p, m, check, baseEnv, scanEnv, outputs);
      if (turn) ranOnce.set(check, p);
    });
  });
}

async function mutationCase(p: AsyncProject, m: Mutation, check: string, baseEnv: NodeJS.ProcessEnv, scanEnv: NodeJS.ProcessEnv, outputs: string[]) {
  if (!m.immediate) {
    outputs.push(JSON.stringify(await expectCurrentIn(p, check, baseEnv)));
    // Past the racy window, so the stat cache now holds the file's identity.
    await sleep(60);
  }

  const extra = m.mutate(p);
  const observeEnv = extra ? cleanEnv({ ...scanEnv, ...m.runEnv, ...extra }) : baseEnv;
  const stale = await expectOutOfCurrent(p, check, observeEnv, 'STALE');
  outputs.push(JSON.stringify(stale));

  // A second look (explain) must agree: the first one's stat cache must not hide the change.
  const explanation = await explainOf(p, check, observeEnv);
  outputs.push(JSON.stringify(explanation));
  expect(explanation.check.freshness).toBe('STALE');
  expect(explanation.check.reuse_eligible).toBe(false);
  m.expectExplain(explanation);

  if (m.revert) {
    m.revert(p);
    outputs.push(JSON.stringify(await expectCurrentIn(p, check, baseEnv)));
  } else if (extra) {
    outputs.push(JSON.stringify(await expectCurrentIn(p, check, baseEnv)));
  }

  if (m.secrets) {
    // A receipt made under the mutated environment must not keep its value either.
    outputs.push((await runCheck(p, [check], observeEnv)).stdout);
    const back = await explainOf(p, check, baseEnv);
    expect(back.check.freshness).toBe('STALE');
    outputs.push(JSON.stringify(back));
    outputs.push(JSON.stringify(await logJson(p)));
    expectNoLeak(p, m.secrets, outputs, Object.keys(extra ?? {}));
  }
}

/** A reinstall, and a project inside a parent repo that ignores it, seen through one scan. */
export function describeTreeCases(scan: string, scanEnv: NodeJS.ProcessEnv, project: ProjectMaker) {
  describe(`freshness of whole trees (${scan})`, () => {
    it('npm ci recreates node_modules: STALE, with installed identity changes', async () => {
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
      // The tarball `npm pack` makes (package/ and the files in it), made by tar: npm's own start
      // is most of a second of CPU, and only the install and the reinstall are the case here.
      const packed = spawnSync('tar', ['-czf', '../dep-1.0.0.tgz', '--owner=0', '--group=0', '--numeric-owner', '--transform', 's,^,package/,', 'package.json', 'index.js'], { cwd: join(p.root, 'vendor/dep'), encoding: 'utf8' });
      expect(packed.status, packed.stderr).toBe(0);
      npm(p.root, 'install', '--offline', '--no-audit', '--no-fund');
      const env = cleanEnv(scanEnv);
      const inodeBefore = statSync(join(p.root, 'node_modules/dep/index.js')).ino;

      await runCheck(p, ['check'], env);
      await expectCurrentIn(p, 'check', env);

      npm(p.root, 'ci', '--offline', '--no-audit', '--no-fund');
      expect(readFileSync(join(p.root, 'node_modules/dep/index.js'), 'utf8')).toBe(DEP_JS);
      const status = await expectOutOfCurrent(p, 'check', env, 'STALE');
      expect(status.reasons.map((r: Json) => r.code)).toContain('inputs-changed');
      const explanation = await explainOf(p, 'check', env);
      const installed = explanation.input_changes.filter((c: Json) => c.origin === 'installed');
      expect(installed.length).toBeGreaterThan(0);
      expect(explanation.input_changes.filter((c: Json) => c.origin === 'source')).toEqual([]);
      const index = installed.find((c: Json) => c.path === 'node_modules/dep/index.js');
      expect(index, JSON.stringify(explanation.input_changes)).toBeDefined();
      expect(index.change).toBe('identity');
      expect(index.identity_fields).toContain('ctime_ns');
      if (statSync(join(p.root, 'node_modules/dep/index.js')).ino !== inodeBefore) expect(index.identity_fields).toContain('ino');

      // A new run binds the new install.
      await runCheck(p, ['check'], env);
      await expectCurrentIn(p, 'check', env);
    });

    it('edit in a project with no git repo of its own, inside a parent repo that ignores it', async () => {
      // The temp project sits under the repo's .tmp/, which the repo ignores: git lists none of its files.
      const p = project('fresh-nogit', {
        'vouch.config.json': config([{ name: 'check', kind: 'custom', command: ['node', 'check.js'] }]),
        'check.js': 'process.exit(0);\n',
        'src/a.js': A_JS,
      }, { git: false });
      const ignored = spawnSync('git', ['check-ignore', '-q', p.root], { cwd: REPO });
      expect(ignored.status, 'precondition: the parent repo ignores the temp project').toBe(0);
      const env = cleanEnv(scanEnv);

      await runCheck(p, ['check'], env);
      await expectCurrentIn(p, 'check', env);
      const [receipt] = (await logJson(p, 'check')).receipts;
      // check.js and src/a.js are what the check reads.
      expect.soft(receipt.input_count, 'inputs recorded by the receipt').toBeGreaterThanOrEqual(2);

      p.write('src/a.js', 'export const a = 100;\n');
      await expectOutOfCurrent(p, 'check', env);
      p.write('src/a.js', A_JS);
      await expectCurrentIn(p, 'check', env);
    });
  });
}
