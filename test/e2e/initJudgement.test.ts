import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/core/configSchema.js';
import { inProcess } from '../helpers/inProcess.js';
import type { TempProject } from '../helpers/project.js';

/*
 * vouch init proposes only checks that are real: each kind of script it leaves
 * out, on a real project, with the reason it shows; what --all and --verify
 * change; the order it proposes where a check reads build output; and the
 * PACKAGE#SCRIPT checks of a workspace.
 *
 * `vouch init` runs in this process, through the CLI's dispatch (test/helpers/inProcess.ts):
 * nothing here is about a process of its own, and the checks --verify runs are real processes
 * all the same. The fixtures' tsc loads only the ES5 library: the default one, with the DOM, is
 * most of a tsc run's time, and no fixture needs it.
 */

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const tmpBase = join(repo, '.tmp');
const repoTsc = join(repo, 'node_modules', '.bin', 'tsc');
const made: string[] = [];

beforeAll(() => {
  mkdirSync(tmpBase, { recursive: true });
});

afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** A real project under <repo>/.tmp/, so node resolution finds the repo's TypeScript. */
function project(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpBase, 'init-judge-'));
  made.push(dir);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

const pkg = (value: Record<string, unknown>) => JSON.stringify({ name: 'fixture', version: '1.0.0', ...value }, null, 2);

function installTsc(dir: string): void {
  mkdirSync(join(dir, 'node_modules', '.bin'), { recursive: true });
  symlinkSync(realpathSync(repoTsc), join(dir, 'node_modules', '.bin', 'tsc'));
}

async function vouchInit(cwd: string, ...args: string[]) {
  const { NODE_OPTIONS: _ignored, ...env } = process.env;
  // inProcess asks only for the directory the command runs in.
  const result = await inProcess({ root: cwd } as TempProject).vouch(['init', ...args], { env: { ...env, NO_COLOR: '1' } });
  return { code: result.code, stdout: result.stdout, stderr: result.stderr };
}

interface VerifyJson {
  passed: boolean;
  exit_code: number | null;
  output_head: string[];
}

interface InitJson {
  checks: {
    name: string;
    kind: string;
    script: string | null;
    command: string[] | null;
    package: { name: string; dir: string } | null;
    reason: string;
    invented: boolean;
    unverified: boolean;
    needs_first: string[];
    verify: VerifyJson | null;
  }[];
  skipped: { script: string; package: string | null; reason: string; proposed_by_all: boolean }[];
  dropped: { name: string; command: string[]; reason: string; verify: VerifyJson }[];
  notes: string[];
  config: { checks: { name: string; kind: string; script?: string; command?: string[]; package?: string; inputs?: string[] }[] };
}

async function initJson(cwd: string, ...args: string[]): Promise<InitJson> {
  const result = await vouchInit(cwd, '--json', ...args);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as InitJson;
}

const reasons = (json: InitJson, pkgName: string | null = null) =>
  Object.fromEntries(json.skipped.filter((s) => s.package === pkgName).map((s) => [s.script, s.reason]));

describe('vouch init leaves out what verifies nothing, or not the tree alone', () => {
  const scripts = {
    test: 'vitest run',
    lint: 'eslint .',
    // cache-clearing and trace forms
    'test:clear': 'jest --clearCache',
    'vitest:clear': 'vitest --clearCache',
    'typecheck:trace': 'tsc --noEmit --generateTrace trace',
    // watch, fix and write forms
    'test:vitest': 'vitest --watch',
    'lint:fix': 'eslint --fix .',
    format: 'prettier --write .',
    'test:update': 'jest -u',
    // --noCheck: it emits, it checks no types
    typecheck: 'tsc --noCheck',
    compile: 'tsc --noCheck && rollup -c',
    // end-to-end suites that need a browser or a server
    'test:e2e': 'playwright test',
    cy: 'cypress run',
    'test:browser': 'vitest --browser',
    'test:server': 'start-server-and-test start http://localhost:3000 test:e2e',
    wdio: 'wdio run wdio.conf.js',
    // an aggregator of checks, and one of aggregators
    check: 'npm run lint && npm run test',
    'test:all': 'npm run check',
    // lifecycle: never a check
    pretest: 'tsc --noEmit',
  };

  it('says why for each script it leaves out, in --json and in its text', async () => {
    const dir = project({ 'package.json': pkg({ scripts }), 'package-lock.json': '{}' });
    const json = await initJson(dir, '--dry-run');
    expect(json.checks.map((c) => c.name)).toEqual(['lint', 'test']);
    const why = reasons(json);
    expect(Object.keys(why).sort()).toEqual(Object.keys(scripts).filter((s) => s !== 'test' && s !== 'lint').sort());
    expect(why['test:clear']).toBe('runs jest to clear its cache (--clearCache), not to verify anything');
    expect(why['vitest:clear']).toMatch(/vitest to clear its cache/);
    expect(why['typecheck:trace']).toMatch(/performance trace \(--generateTrace\)/);
    expect(why['test:vitest']).toBe('runs vitest in watch mode: it never finishes, so it cannot leave a receipt');
    expect(why['lint:fix']).toMatch(/eslint in a mode that rewrites files/);
    expect(why.format).toMatch(/prettier in a mode that rewrites files/);
    expect(why['test:update']).toMatch(/rewrites snapshots/);
    expect(why.typecheck).toBe('runs tsc --noCheck, which emits JavaScript without checking types: it is not a typecheck');
    expect(why.compile).toMatch(/tsc --noCheck/);
    expect(why['test:e2e']).toMatch(/^an end-to-end suite: playwright test drives a browser/);
    expect(why.cy).toMatch(/cypress run drives a browser/);
    expect(why['test:browser']).toMatch(/vitest runs the tests in a browser \(--browser\)/);
    expect(why['test:server']).toMatch(/start-server-and-test starts a server/);
    expect(why.wdio).toMatch(/wdio drives a browser/);
    expect(why.check).toBe('only runs "lint", "test", which are checks themselves (or made of checks): its parts are proposed');
    expect(why['test:all']).toMatch(/only runs "check", which is a check itself/);
    expect(why.pretest).toMatch(/lifecycle/);
    expect(json.skipped.filter((s) => !s.proposed_by_all).map((s) => s.script)).toEqual(['pretest']);

    const text = (await vouchInit(dir, '--dry-run')).stdout;
    expect(text).toContain('Not proposed (vouch init --all proposes all but lifecycle scripts):');
    const help = (await vouchInit(dir, '--help')).stdout;
    expect(help).toContain('vouch init --verify ');
    expect(help).toContain('vouch init --all --dry-run');
    expect(help).toMatch(/--all {2,}propose the scripts left out by default/);
    for (const [script, reason] of Object.entries(why)) expect(text).toContain(`  ${script}: ${reason}`);
  });

  it('proposes them with --all, each saying why it would be left out; never a lifecycle script', async () => {
    const dir = project({ 'package.json': pkg({ scripts }), 'package-lock.json': '{}' });
    const json = await initJson(dir, '--dry-run', '--all');
    const names = json.checks.map((c) => c.name);
    expect(names).toContain('check');
    expect(names).toContain('test:e2e');
    expect(names).toContain('typecheck');
    expect(names).not.toContain('pretest');
    expect(reasons(json)).toEqual({ pretest: expect.stringMatching(/lifecycle/) });
    const e2e = json.checks.find((c) => c.name === 'test:e2e')!;
    expect(e2e.kind).toBe('test');
    expect(e2e.reason).toMatch(/proposed because of --all; by default left out: an end-to-end suite/);
    // --noCheck emits: with --all it is proposed as what it is, a build.
    expect(json.checks.find((c) => c.name === 'compile')?.kind).toBe('build');
    expect(parseConfig(JSON.stringify(json.config), 'proposal').checks).toHaveLength(json.checks.length);
  });

  it('keeps a script that runs its own tools besides other checks, or passes them arguments', async () => {
    const dir = project({
      'package.json': pkg({
        scripts: { lint: 'eslint .', test: 'vitest run', check: 'npm run lint && tsc --noEmit', 'test:cov': 'npm run test -- --coverage' },
      }),
    });
    const json = await initJson(dir, '--dry-run');
    expect(json.checks.map((c) => c.name).sort()).toEqual(['check', 'lint', 'test', 'test:cov']);
    expect(json.skipped).toEqual([]);
  });
});

describe('an invented check is proposed only when it passes', () => {
  const tsconfig = JSON.stringify({ compilerOptions: { strict: true, noEmit: true, types: [], lib: ['es5'] }, include: ['*.ts'] });

  it('marks it invented and unverified without --verify, in --json and in its text', async () => {
    const dir = project({ 'package.json': pkg({ scripts: { test: 'node --test' } }), 'tsconfig.json': tsconfig, 'a.ts': 'export const a = 1;\n' });
    installTsc(dir);
    const json = await initJson(dir, '--dry-run');
    const typecheck = json.checks.find((c) => c.name === 'typecheck')!;
    expect(typecheck).toMatchObject({ command: ['tsc', '--noEmit'], invented: true, unverified: true, verify: null });
    expect(json.checks.find((c) => c.name === 'test')).toMatchObject({ invented: false, unverified: false });
    expect(json.notes.join('\n')).toContain('vouch init --verify');
    expect((await vouchInit(dir, '--dry-run')).stdout).toMatch(/typecheck \(typecheck, (traced, )?invented, unverified\): tsc --noEmit/);
  });

  it('--verify keeps one that passes, drops one that fails with its first output lines, and flags a failing script', async () => {
    const passing = project({ 'package.json': pkg({ scripts: {} }), 'tsconfig.json': tsconfig, 'a.ts': 'export const a: number = 1;\n' });
    installTsc(passing);
    const ok = await initJson(passing, '--verify');
    expect(ok.checks[0]).toMatchObject({ name: 'typecheck', invented: true, unverified: false, verify: { passed: true, exit_code: 0 } });
    expect(parseConfig(readFileSync(join(passing, 'vouch.config.json'), 'utf8'), 'c').checks.map((c) => c.name)).toEqual(['typecheck']);

    const failing = project({
      'package.json': pkg({ scripts: { test: 'node --test' } }),
      'tsconfig.json': tsconfig,
      'a.ts': 'export const a: number = "one";\n',
      'test/x.test.js': "require('node:test')('x', () => { throw new Error('the fixture fails'); });\n",
    });
    installTsc(failing);
    const json = await initJson(failing, '--verify', '--dry-run');
    expect(json.checks.map((c) => c.name)).toEqual(['test']);
    expect(json.config.checks.map((c) => c.name)).toEqual(['test']);
    expect(json.dropped).toHaveLength(1);
    expect(json.dropped[0]).toMatchObject({ name: 'typecheck', command: ['tsc', '--noEmit'], reason: 'it failed on this tree (exit code 2)' });
    expect(json.dropped[0]!.verify.output_head[0]).toMatch(/a\.ts\(1,14\): error TS2322/);
    const test = json.checks[0]!;
    expect(test.verify).toMatchObject({ passed: false, exit_code: 1 });
    // The package manager's banner ("> fixture@1.0.0 test") is not what a reader needs first.
    expect(test.verify!.output_head[0]).not.toMatch(/^> /);
    expect(test.verify!.output_head.join('\n')).toContain('the fixture fails');

    const text = await vouchInit(failing, '--verify', '--dry-run');
    expect(text.stdout).toContain('Dropped by --verify (invented checks that fail on this tree):');
    expect(text.stdout).toMatch(/typecheck: tsc --noEmit: it failed on this tree \(exit code 2\)\n\s+\| a\.ts\(1,14\): error TS2322/);
    expect(text.stdout).toMatch(/test \(test, (traced, )?FAILED under --verify\)/);
    expect(text.stderr).toContain('vouch init --verify: typecheck FAILED');
    expect(existsSync(join(failing, 'vouch.config.json'))).toBe(false);
  });
});

describe('a check that reads build output is proposed after the build', () => {
  it('puts tsc -b before a tsc --noEmit beside project references, and that order passes on a clean tree', async () => {
    const dir = project({
      'package.json': pkg({ scripts: { test: 'node --test' } }),
      'tsconfig.json': '{\n  // the solution\n  "compilerOptions": { "strict": true, "noEmit": true, "types": [], "lib": ["es5"] },\n  "files": ["main.ts"],\n  "references": [{ "path": "./lib" }],\n}\n',
      'main.ts': "import { one } from './lib/src/index';\nexport const two: number = one + 1;\n",
      'lib/tsconfig.json': JSON.stringify({ compilerOptions: { composite: true, strict: true, outDir: 'dist', rootDir: 'src', types: [], lib: ['es5'] }, include: ['src'] }),
      'lib/src/index.ts': 'export const one: number = 1;\n',
      'test/ok.test.js': "require('node:test')('ok', () => {});\n",
    });
    installTsc(dir);
    // The premise: on a clean tree, tsc --noEmit fails until the references are built.
    const clean = spawnSync(join(dir, 'node_modules', '.bin', 'tsc'), ['--noEmit'], { cwd: dir, encoding: 'utf8' });
    expect(clean.status, clean.stdout).not.toBe(0);
    expect(clean.stdout).toContain('TS6305');

    const json = await initJson(dir, '--dry-run');
    expect(json.config.checks.map((c) => c.name)).toEqual(['tsc-build', 'typecheck', 'test']);
    expect(json.config.checks[0]).toMatchObject({ kind: 'build', command: ['tsc', '-b'] });
    expect(json.checks.find((c) => c.name === 'typecheck')?.needs_first).toEqual(['tsc-build']);
    expect(json.notes.join('\n')).toMatch(/project references .*"typecheck" runs tsc without -b.*So "tsc-build" is proposed before it/);

    const verified = await initJson(dir, '--verify', '--dry-run');
    expect(verified.dropped).toEqual([]);
    expect(verified.checks.map((c) => [c.name, c.verify?.passed])).toEqual([
      ['tsc-build', true],
      ['typecheck', true],
      ['test', true],
    ]);
  });

  it('invents tsc -b, not a tsc --noEmit that checks nothing, beside a solution tsconfig.json', async () => {
    const dir = project({
      'package.json': pkg({ scripts: {} }),
      'tsconfig.json': JSON.stringify({ files: [], references: [{ path: './lib' }] }),
      'lib/tsconfig.json': JSON.stringify({ compilerOptions: { composite: true, strict: true, outDir: 'dist', rootDir: 'src', types: [], lib: ['es5'] }, include: ['src'] }),
      'lib/src/index.ts': 'export const one: number = "one";\n',
    });
    installTsc(dir);
    const json = await initJson(dir, '--dry-run');
    expect(json.config.checks.map((c) => [c.name, c.command])).toEqual([['typecheck', ['tsc', '-b']]]);
    expect(json.checks[0]?.reason).toContain('"tsc --noEmit" would check nothing');
    // It is real: the type error in the reference fails it, so --verify drops it and init has nothing to propose.
    const verified = await vouchInit(dir, '--verify', '--dry-run');
    expect(verified.code).toBe(2);
    expect(verified.stderr).toMatch(/"typecheck" \(tsc -b\) dropped: it failed on this tree[\s\S]*error TS2322/);
  });

  it('puts a package\'s build before the checks of the packages that import it, when its "types" point into ignored output', async () => {
    const dir = project({
      'package.json': pkg({ private: true, workspaces: ['packages/*'] }),
      '.gitignore': 'dist/\n',
      'packages/a/package.json': pkg({ name: '@demo/a', types: 'dist/index.d.ts', main: 'dist/index.js', scripts: { build: 'tsc', test: 'node --test' } }),
      'packages/b/package.json': pkg({ name: '@demo/b', dependencies: { '@demo/a': '*' }, scripts: { test: 'node --test', typecheck: 'tsc --noEmit' } }),
    });
    spawnSync('git', ['init', '-q'], { cwd: dir });
    const json = await initJson(dir, '--dry-run');
    const order = json.config.checks.map((c) => c.name);
    expect(order.indexOf('@demo/a#build')).toBeLessThan(order.indexOf('@demo/b#typecheck'));
    expect(order.indexOf('@demo/a#build')).toBeLessThan(order.indexOf('@demo/b#test'));
    expect(json.checks.find((c) => c.name === '@demo/b#typecheck')?.needs_first).toEqual(['@demo/a#build']);
    expect(json.notes.join('\n')).toMatch(/Packages point their package.json entry into build output that is not in the repository.*: @demo\/a \("types": packages\/a\/dist\/index\.d\.ts\) before @demo\/b#typecheck, @demo\/b#test\./);
  });

  it('reads nothing outside the root, and takes a malformed tsconfig.json or entry for none', async () => {
    const dir = project({
      'package.json': pkg({ private: true, workspaces: ['packages/*'], scripts: { typecheck: 'tsc --noEmit' } }),
      'tsconfig.json': '{ "references": [ { "path": ',
      'packages/a/package.json': pkg({
        name: '@demo/a',
        types: '../../../outside/index.d.ts',
        main: '/etc/index.js',
        exports: { '.': { import: { types: ['x'], default: 42 } }, './*': './dist/*.js' },
        scripts: { build: 'tsc' },
      }),
      'packages/b/package.json': pkg({ name: '@demo/b', dependencies: { '@demo/a': '*' }, scripts: { test: 'node --test' } }),
    });
    const json = await initJson(dir, '--dry-run');
    expect(json.checks.every((c) => c.needs_first.length === 0)).toBe(true);
    expect(json.notes.join('\n')).not.toMatch(/references|build output/);
  });
});

describe('in a workspace, each package\'s scripts are proposed as PACKAGE#SCRIPT', () => {
  it('proposes package checks with their directory, leaves out root scripts that fan out, and lists skipped package scripts by package', async () => {
    const dir = project({
      'package.json': pkg({
        private: true,
        workspaces: ['packages/*'],
        scripts: {
          lint: 'eslint .',
          test: 'npm test --workspaces',
          'test:pnpm': 'pnpm -r test',
          'test:turbo': 'turbo run test',
          'lint:nx': 'nx run-many -t lint',
          'test:yarn': 'yarn workspaces foreach -A run test',
        },
      }),
      'package-lock.json': '{}',
      'packages/a/package.json': pkg({ name: '@demo/a', scripts: { test: 'vitest run', dev: 'vitest', build: 'tsc -p .' } }),
      'packages/b/package.json': pkg({ name: '@demo/b', dependencies: { '@demo/a': '1.0.0' }, scripts: { test: 'jest', lint: 'eslint src', e2e: 'playwright test' } }),
    });
    const json = await initJson(dir, '--dry-run');
    expect(json.config.checks.filter((c) => c.package !== undefined)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: '@demo/a#test', kind: 'test', script: 'test', package: 'packages/a' }),
        expect.objectContaining({ name: '@demo/a#build', kind: 'build', script: 'build', package: 'packages/a' }),
        expect.objectContaining({ name: '@demo/b#test', kind: 'test', script: 'test', package: 'packages/b' }),
        expect.objectContaining({ name: '@demo/b#lint', kind: 'lint', script: 'lint', package: 'packages/b' }),
      ]),
    );
    for (const check of json.config.checks.filter((c) => c.package !== undefined)) expect(check).not.toHaveProperty('inputs');
    expect(json.checks.find((c) => c.name === '@demo/a#test')?.package).toEqual({ name: '@demo/a', dir: 'packages/a' });
    expect(json.config.checks.filter((c) => c.package === undefined).map((c) => c.name)).toEqual(['lint']);
    const root = reasons(json);
    for (const script of ['test', 'test:pnpm', 'test:turbo', 'lint:nx', 'test:yarn']) {
      expect(root[script], script).toBe("runs the packages' own checks: each is proposed as PACKAGE#SCRIPT");
    }
    expect(reasons(json, '@demo/a')).toEqual({ dev: expect.stringMatching(/watch mode/) });
    expect(reasons(json, '@demo/b')).toEqual({ e2e: expect.stringMatching(/end-to-end/) });
    expect(parseConfig(JSON.stringify(json.config), 'proposal').checks).toHaveLength(json.config.checks.length);

    const text = (await vouchInit(dir, '--dry-run')).stdout;
    expect(text).toMatch(/ {2}@demo\/a \(packages\/a\):\n {4}@demo\/a#test \(test(, traced)?\): vitest run/);
    expect(text).toMatch(/ {2}@demo\/b:\n {4}e2e: an end-to-end suite/);
  });

  it('reads a pnpm workspace, and --verify runs a package check in its package\'s directory', async () => {
    const dir = project({
      'package.json': pkg({ private: true, packageManager: 'npm@10.0.0', scripts: { test: 'pnpm -r test' } }),
      'pnpm-workspace.yaml': "packages:\n  - 'packages/*'\n",
      'packages/a/package.json': pkg({ name: '@demo/a', scripts: { test: 'node --test' } }),
      'packages/a/test/cwd.test.js':
        "const assert = require('node:assert');\nrequire('node:test')('runs in its package', () => assert.match(process.cwd().replaceAll('\\\\', '/'), /packages\\/a$/));\n",
    });
    const json = await initJson(dir, '--verify', '--dry-run');
    expect(json.checks.map((c) => [c.name, c.verify?.passed])).toEqual([['@demo/a#test', true]]);
    expect(reasons(json)).toEqual({ test: "runs the packages' own checks: each is proposed as PACKAGE#SCRIPT" });
    const text = await vouchInit(dir, '--dry-run');
    expect(text.stdout).toContain('Proposed checks: none at the root');
  });

  it('stays readable for 20 packages: one heading per package, one line per check', async () => {
    const files: Record<string, string> = { 'package.json': pkg({ private: true, workspaces: ['packages/*'], scripts: { test: 'pnpm -r test' } }) };
    for (let i = 0; i < 20; i += 1) {
      files[`packages/p${String(i).padStart(2, '0')}/package.json`] = pkg({ name: `@demo/p${i}`, scripts: { test: 'vitest run', lint: 'eslint .', typecheck: 'tsc --noEmit', dev: 'vite' } });
    }
    const dir = project(files);
    const json = await initJson(dir, '--dry-run');
    expect(json.config.checks).toHaveLength(60);
    const text = (await vouchInit(dir, '--dry-run')).stdout;
    const section = text.slice(text.indexOf('Package checks'), text.indexOf('Not proposed'));
    for (let i = 0; i < 20; i += 1) expect(section.match(new RegExp(` {2}@demo/p${i} \\(packages/p${String(i).padStart(2, '0')}\\):\\n`, 'g')), `p${i}`).toHaveLength(1);
    // A heading per package, a line per check, and the section's own heading and blank line.
    expect(section.trimEnd().split('\n').length).toBe(1 + 20 + 60);
  });

  it('still proposes the root\'s checks when the workspace cannot be read, and says why', async () => {
    const dir = project({
      'package.json': pkg({ private: true, workspaces: ['packages/*'], scripts: { lint: 'eslint .' } }),
      'packages/a/package.json': pkg({ name: 'same', scripts: { test: 'vitest run' } }),
      'packages/b/package.json': pkg({ name: 'same', scripts: { test: 'vitest run' } }),
    });
    const json = await initJson(dir, '--dry-run');
    expect(json.config.checks.map((c) => c.name)).toEqual(['lint']);
    expect(json.notes.join('\n')).toMatch(/No package checks are proposed: .*the name "same" is used by two workspace packages/);
  });

  it('leaves out a package whose name cannot name a check, saying why', async () => {
    const dir = project({
      'package.json': pkg({ private: true, workspaces: ['packages/*'] }),
      'packages/a/package.json': JSON.stringify({ scripts: { test: 'vitest run' } }),
    });
    const result = await vouchInit(dir, '--dry-run', '--json');
    expect(result.code).toBe(2);
    expect(JSON.parse(result.stdout).error.message).toContain('"packages/a#test" not proposed: the package\'s name "packages/a" cannot name a check');
  });
});
