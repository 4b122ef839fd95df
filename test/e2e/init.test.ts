import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import picomatch from 'picomatch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/core/configSchema.js';
import { isVouchError } from '../../src/core/errors.js';
import { proposeConfig, sanitiseName, type ProposalInput } from '../../src/api/initProposal.js';
import { detectPackageManager } from '../../src/exec/detectPackageManager.js';
import { probeTracing } from '../../src/exec/trace/tracer.js';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const cli = join(repo, 'dist', 'bin', 'main.js');
const tmpBase = join(repo, '.tmp');
const repoTsc = join(repo, 'node_modules', '.bin', 'tsc');
const made: string[] = [];
/** Whether a run can be traced here: init then proposes every check "traced". */
const TRACING = probeTracing().available;
const tracedHere = TRACING ? { mode: 'traced' } : {};

beforeAll(() => {
  if (!existsSync(cli)) {
    throw new Error('dist/ has no CLI: build first with "npm run build"');
  }
  mkdirSync(tmpBase, { recursive: true });
});

afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** A real project directory under <repo>/.tmp/, so node resolution finds the repo's TypeScript. */
function project(files: Record<string, string>, base = tmpBase): string {
  const dir = mkdtempSync(join(base, 'init-'));
  made.push(dir);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

function pkg(value: Record<string, unknown>): string {
  return JSON.stringify({ name: 'fixture', version: '1.0.0', ...value }, null, 2);
}

/** Gives the project its own node_modules/.bin/tsc, as an install would. */
function installTsc(dir: string): void {
  mkdirSync(join(dir, 'node_modules', '.bin'), { recursive: true });
  symlinkSync(realpathSync(repoTsc), join(dir, 'node_modules', '.bin', 'tsc'));
}

function vouchInit(cwd: string, ...args: string[]) {
  const result = spawnSync(process.execPath, [cli, 'init', ...args], { cwd, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

function initJson(cwd: string, ...args: string[]) {
  const result = vouchInit(cwd, '--json', ...args);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as {
    schema: number;
    root: string;
    config_path: string;
    written: boolean;
    existing: boolean;
    dry_run: boolean;
    package_manager: { name: string; source: string; lockfile: string | null; variant: string | null };
    checks: { name: string; kind: string; script: string | null; command: string[] | null; reason: string }[];
    skipped: { script: string; reason: string }[];
    notes: string[];
    config: { checks: { name: string; kind: string; inputs?: string[]; installed?: string[]; command?: string[]; script?: string }[] };
  };
}

function detectError(dir: string): { code: string; message: string } {
  try {
    detectPackageManager(dir);
  } catch (error) {
    if (isVouchError(error)) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error('expected detectPackageManager to fail');
}

const input = (over: Partial<ProposalInput>): ProposalInput => ({
  packageJson: {},
  packageManager: { name: 'npm', lockfile: 'package-lock.json' },
  hasTsconfig: false,
  tsc: null,
  ...over,
});

describe('detectPackageManager', () => {
  it('detects npm from package-lock.json and npm-shrinkwrap.json', () => {
    expect(detectPackageManager(project({ 'package.json': pkg({}), 'package-lock.json': '{}' }))).toMatchObject({
      name: 'npm',
      source: 'lockfile',
      lockfile: 'package-lock.json',
    });
    expect(detectPackageManager(project({ 'package.json': pkg({}), 'npm-shrinkwrap.json': '{}' }))).toMatchObject({
      name: 'npm',
      lockfile: 'npm-shrinkwrap.json',
    });
  });

  it('detects pnpm from pnpm-lock.yaml', () => {
    const detected = detectPackageManager(project({ 'package.json': pkg({}), 'pnpm-lock.yaml': "lockfileVersion: '9.0'\n" }));
    expect(detected).toMatchObject({ name: 'pnpm', source: 'lockfile', lockfile: 'pnpm-lock.yaml' });
    expect(detected.variant).toBeUndefined();
  });

  it('tells yarn classic from yarn berry', () => {
    const classic = project({ 'package.json': pkg({}), 'yarn.lock': '# yarn lockfile v1\n\n"a@^1.0.0":\n  version "1.0.0"\n' });
    expect(detectPackageManager(classic)).toMatchObject({ name: 'yarn', source: 'lockfile', lockfile: 'yarn.lock', variant: 'classic' });
    const berryByLockfile = project({ 'package.json': pkg({}), 'yarn.lock': '__metadata:\n  version: 8\n  cacheKey: 10c0\n' });
    expect(detectPackageManager(berryByLockfile)).toMatchObject({ name: 'yarn', variant: 'berry' });
    const berryByRc = project({ 'package.json': pkg({}), 'yarn.lock': '', '.yarnrc.yml': 'nodeLinker: node-modules\n' });
    expect(detectPackageManager(berryByRc)).toMatchObject({ name: 'yarn', variant: 'berry' });
    const berryByField = project({ 'package.json': pkg({ packageManager: 'yarn@4.5.0' }) });
    expect(detectPackageManager(berryByField)).toMatchObject({ name: 'yarn', source: 'packageManager-field', lockfile: null, variant: 'berry' });
    const classicByField = project({ 'package.json': pkg({ packageManager: 'yarn@1.22.22' }), '.yarnrc.yml': '' });
    expect(detectPackageManager(classicByField)).toMatchObject({ variant: 'classic' });
  });

  it('detects bun from bun.lock and bun.lockb', () => {
    expect(detectPackageManager(project({ 'package.json': pkg({}), 'bun.lock': '{}' }))).toMatchObject({ name: 'bun', lockfile: 'bun.lock' });
    expect(detectPackageManager(project({ 'package.json': pkg({}), 'bun.lockb': '\0' }))).toMatchObject({ name: 'bun', lockfile: 'bun.lockb' });
  });

  it('lets the packageManager field win over a lockfile of another manager', () => {
    const dir = project({ 'package.json': pkg({ packageManager: 'pnpm@9.1.0+sha512.abc' }), 'package-lock.json': '{}', 'yarn.lock': '' });
    expect(detectPackageManager(dir)).toMatchObject({ name: 'pnpm', source: 'packageManager-field', lockfile: null, field: 'pnpm@9.1.0+sha512.abc' });
    const withOwnLock = project({ 'package.json': pkg({ packageManager: 'pnpm@9.1.0' }), 'package-lock.json': '{}', 'pnpm-lock.yaml': '' });
    expect(detectPackageManager(withOwnLock)).toMatchObject({ name: 'pnpm', lockfile: 'pnpm-lock.yaml' });
  });

  it('refuses to guess between lockfiles of different managers, naming them', () => {
    const error = detectError(project({ 'package.json': pkg({}), 'package-lock.json': '{}', 'pnpm-lock.yaml': '' }));
    expect(error.code).toBe('package-manager-ambiguous');
    expect(error.message).toContain('package-lock.json');
    expect(error.message).toContain('pnpm-lock.yaml');
    expect(error.message).toContain('"packageManager"');
  });

  it('rejects a packageManager it cannot run scripts with', () => {
    expect(detectError(project({ 'package.json': pkg({ packageManager: 'deno@2.0.0' }) })).code).toBe('package-manager-unsupported');
  });

  it('defaults to npm, and a project nested in an unrelated one does not inherit its lockfile', () => {
    // The temp project sits inside this repository, which has package-lock.json but no workspaces.
    expect(detectPackageManager(project({ 'package.json': pkg({}) }))).toMatchObject({ name: 'npm', source: 'default', lockfile: null });
  });

  it('lets a workspace member inherit the workspace root\'s package manager', () => {
    const root = project({
      'package.json': pkg({ private: true }),
      'pnpm-workspace.yaml': "packages:\n  - 'packages/*'\n  - \"!packages/skip\"\n",
      'pnpm-lock.yaml': '',
      'packages/app/package.json': pkg({}),
      'packages/skip/package.json': pkg({}),
    });
    expect(detectPackageManager(join(root, 'packages', 'app'))).toMatchObject({
      name: 'pnpm',
      source: 'lockfile',
      lockfile: '../../pnpm-lock.yaml',
      decidedBy: root,
    });
    expect(detectPackageManager(join(root, 'packages', 'skip'))).toMatchObject({ name: 'npm', source: 'default' });
  });
});

describe('proposeConfig', () => {
  it('matches scripts by name and gives each a kind', () => {
    const proposal = proposeConfig(
      input({
        packageJson: {
          scripts: {
            typecheck: 'tsc --noEmit',
            'type-check': 'tsc -p tsconfig.app.json --noEmit',
            tsc: 'tsc -b',
            lint: 'eslint .',
            test: 'vitest run',
            'test:unit': 'vitest run test/unit',
            build: 'vite build',
            check: 'npm run typecheck && eslint src',
            clean: 'rm -rf dist',
          },
        },
      }),
    );
    const kinds = Object.fromEntries(proposal.checks.map((p) => [p.check.name, p.check.kind]));
    expect(kinds).toEqual({
      typecheck: 'typecheck',
      'type-check': 'typecheck',
      tsc: 'typecheck',
      lint: 'lint',
      test: 'test',
      'test:unit': 'test',
      build: 'build',
      // It runs eslint itself besides the typecheck script: more than its parts, so it is proposed.
      check: 'custom',
    });
    for (const p of proposal.checks) expect(p.check.script).toBe(p.check.name);
    expect(parseConfig(JSON.stringify(proposal.config), 'proposal')).toEqual(proposal.config);
  });

  it('matches scripts by the tool they run, through npx, cross-env and variable prefixes', () => {
    const scripts = {
      types: 'vue-tsc --noEmit',
      es: 'npx eslint src',
      ox: 'oxlint --deny-warnings',
      'biome-check': 'biome check .',
      'biome-lint': 'biome lint src',
      'biome-format': 'biome format .',
      'fmt:check': 'prettier --check .',
      verify: 'cross-env NODE_ENV=test vitest run',
      jester: 'FORCE_COLOR=0 jest --ci',
      spec: 'mocha "test/**/*.spec.js"',
      unit: 'node --test test/',
      av: 'ava --verbose',
      cov: 'c8 --reporter lcov mocha',
      serve: 'node server.js',
      fmt: 'prettier .',
    };
    const proposal = proposeConfig(input({ packageJson: { scripts } }));
    const kinds = Object.fromEntries(proposal.checks.map((p) => [p.check.name, p.check.kind]));
    expect(kinds).toEqual({
      types: 'typecheck',
      es: 'lint',
      ox: 'lint',
      'biome-check': 'lint',
      'biome-lint': 'lint',
      'biome-format': 'lint',
      'fmt:check': 'lint',
      verify: 'test',
      jester: 'test',
      spec: 'test',
      unit: 'test',
      av: 'test',
      cov: 'test',
    });
    expect(proposal.checks.find((p) => p.check.name === 'verify')?.reason).toContain('vitest');
  });

  it('takes the kind of "check" from its tools when they agree', () => {
    const one = proposeConfig(input({ packageJson: { scripts: { check: 'tsc --noEmit' } } }));
    expect(one.checks[0]?.check).toMatchObject({ name: 'check', kind: 'typecheck' });
    const mixed = proposeConfig(input({ packageJson: { scripts: { check: 'tsc --noEmit && eslint .' } } }));
    expect(mixed.checks[0]?.check.kind).toBe('custom');
  });

  it('skips watch and dev modes, rewriting scripts, lifecycle scripts and the npm placeholder, saying why', () => {
    const proposal = proposeConfig(
      input({
        packageJson: {
          scripts: {
            test: 'vitest run',
            'test:watch': 'vitest',
            'vitest:dev': 'vitest dev',
            'jest-watch': 'jest --watchAll',
            'types:watch': 'tsc --noEmit --watch',
            tw: 'tsc -w',
            dev: 'tsc --watch',
            start: 'node --test',
            'lint:fix': 'eslint . --fix',
            format: 'prettier --write .',
            'biome:fix': 'biome check --write .',
            pretest: 'tsc --noEmit',
            prepare: 'tsc',
            'test:ci': 'npm run test -- --watch',
            'lint:staged': 'lint-staged',
          },
        },
      }),
    );
    expect(proposal.checks.map((p) => p.check.name)).toEqual(['test']);
    const skipped = Object.fromEntries(proposal.skipped.map((s) => [s.script, s.reason]));
    expect(Object.keys(skipped).sort()).toEqual(
      ['biome:fix', 'dev', 'format', 'jest-watch', 'lint:fix', 'lint:staged', 'prepare', 'pretest', 'start', 'test:ci', 'test:watch', 'tw', 'types:watch', 'vitest:dev'].sort(),
    );
    expect(skipped['test:watch']).toMatch(/watch/);
    expect(skipped.tw).toMatch(/watch mode/);
    expect(skipped['lint:fix']).toMatch(/rewrites files/);
    expect(skipped.pretest).toMatch(/lifecycle/);

    const placeholder = proposeConfig(input({ packageJson: { scripts: { test: 'echo "Error: no test specified" && exit 1' } } }));
    expect(placeholder.checks).toEqual([]);
    expect(placeholder.skipped[0]?.reason).toMatch(/placeholder/);
  });

  it('narrows a plain tsc typecheck to TS/JS/JSON files and the lockfile, and nothing else', () => {
    const given = input({
        packageManager: { name: 'pnpm', lockfile: 'pnpm-lock.yaml' },
        packageJson: {
          scripts: {
            typecheck: 'pnpm run tsc:app && pnpm run tsc:node',
            'tsc:app': 'tsc -p tsconfig.app.json --noEmit',
            'tsc:node': 'tsc -p tsconfig.node.json --noEmit',
            'type-check': 'vue-tsc --noEmit',
            'typecheck:gen': 'node scripts/gen.mjs && tsc --noEmit',
            lint: 'eslint .',
            test: 'vitest run',
            build: 'tsc -p tsconfig.build.json',
          },
        },
      });
    const proposal = proposeConfig(given);
    const byName = new Map(proposal.checks.map((p) => [p.check.name, p]));
    const narrowed = ['**/*.{ts,tsx,mts,cts,js,jsx,mjs,cjs,json,jsonc}', 'pnpm-lock.yaml'];
    // "typecheck" only runs two tsc scripts, each proposed: it is left out, and --all proposes it narrowed too.
    expect(byName.has('typecheck')).toBe(false);
    expect(proposal.skipped.find((s) => s.script === 'typecheck')?.reason).toMatch(/only runs "tsc:app", "tsc:node"/);
    const aggregate = proposeConfig({ ...given, all: true }).checks.find((p) => p.check.name === 'typecheck');
    expect(aggregate?.check.inputs).toEqual(narrowed);
    expect(aggregate?.inputsNote).toMatch(/narrowed/);
    expect(byName.get('tsc:app')?.check.inputs).toEqual(narrowed);
    expect(byName.get('tsc:app')?.inputsNote).toMatch(/narrowed/);
    expect(byName.get('type-check')?.check.inputs).toBeUndefined();
    expect(byName.get('typecheck:gen')?.check.inputs).toBeUndefined();
    expect(byName.get('typecheck:gen')?.inputsNote).toContain('"node"');
    for (const name of ['lint', 'test', 'build']) expect(byName.get(name)?.check.inputs).toBeUndefined();
    expect(byName.get('build')?.check.kind).toBe('build');
  });

  it('does not narrow to a typecheck that a pre-script feeds', () => {
    const proposal = proposeConfig(input({ packageJson: { scripts: { typecheck: 'tsc --noEmit', pretypecheck: 'node gen.mjs' } } }));
    expect(proposal.checks[0]?.check.inputs).toBeUndefined();
  });

  it('proposes a direct tsc check only with a tsconfig, TypeScript installed and no typecheck script', () => {
    const direct = proposeConfig(input({ hasTsconfig: true, tsc: 'tsc', packageJson: { scripts: { test: 'vitest run' } } }));
    expect(direct.checks[0]?.check).toEqual({
      name: 'typecheck',
      kind: 'typecheck',
      command: ['tsc', '--noEmit'],
      inputs: ['**/*.{ts,tsx,mts,cts,js,jsx,mjs,cjs,json,jsonc}', 'package-lock.json'],
    });
    const noTs = proposeConfig(input({ hasTsconfig: true, tsc: null, packageJson: { scripts: { test: 'vitest run' } } }));
    expect(noTs.checks.map((p) => p.check.kind)).toEqual(['test']);
    expect(noTs.notes.join(' ')).toMatch(/TypeScript is not installed/);
    const noTsconfig = proposeConfig(input({ tsc: 'tsc', packageJson: { scripts: { test: 'vitest run' } } }));
    expect(noTsconfig.checks.map((p) => p.check.kind)).toEqual(['test']);
    const hasScript = proposeConfig(input({ hasTsconfig: true, tsc: 'tsc', packageJson: { scripts: { types: 'tsc --noEmit' } } }));
    expect(hasScript.checks.map((p) => p.check.name)).toEqual(['types']);
  });

  it('leaves a lockfile outside the root out of the inputs', () => {
    const proposal = proposeConfig(
      input({ packageManager: { name: 'pnpm', lockfile: '../../pnpm-lock.yaml' }, packageJson: { scripts: { typecheck: 'tsc' } } }),
    );
    expect(proposal.checks[0]?.check.inputs).toEqual(['**/*.{ts,tsx,mts,cts,js,jsx,mjs,cjs,json,jsonc}']);
    expect(proposal.checks[0]?.inputsNote).toContain('outside the root');
  });

  it('sanitises script names into valid, unique check names', () => {
    expect(sanitiseName('test e2e (ci)')).toBe('test-e2e-ci');
    expect(sanitiseName('@scope/test')).toBe('scope-test');
    expect(sanitiseName('!!!')).toBe('script');
    const proposal = proposeConfig(input({ packageJson: { scripts: { 'test a': 'vitest run', 'test/a': 'jest', 'test-a': 'mocha' } } }));
    const names = proposal.checks.map((p) => p.check.name);
    expect(new Set(names).size).toBe(3);
    for (const name of names) expect(name).toMatch(/^[A-Za-z0-9][A-Za-z0-9._:-]*$/);
    expect(parseConfig(JSON.stringify(proposal.config), 'proposal').checks.map((c) => c.script)).toEqual(['test a', 'test/a', 'test-a']);
  });

  it('adds workspace install roots next to node_modules/**', () => {
    const proposal = proposeConfig(input({ workspaceInstallDirs: ['packages/b', 'packages/a'], packageJson: { scripts: { test: 'vitest run' } } }));
    expect(proposal.checks[0]?.check.installed).toEqual(['node_modules/**', 'packages/a/node_modules/**', 'packages/b/node_modules/**']);
  });

  it('proposes every check traced where tracing works, and says so once', () => {
    const scripts = { packageJson: { scripts: { typecheck: 'tsc --noEmit', test: 'vitest run' } }, hasTsconfig: true, tsc: 'tsc' };
    const proposal = proposeConfig(input({ ...scripts, tracing: { available: true } }));
    expect(proposal.checks.map((p) => p.check.mode)).toEqual(['traced', 'traced']);
    expect(proposal.notes).toEqual([expect.stringMatching(/^Checks are proposed "traced".*docs\/config\.md/)]);
    expect(parseConfig(JSON.stringify(proposal.config), 'proposal').checks.map((c) => c.mode)).toEqual(['traced', 'traced']);
  });

  it('proposes declared checks where tracing cannot run, and says why once, with the fix', () => {
    const why = 'strace is not installed: install strace: `apt-get install strace` (Debian, Ubuntu)';
    const proposal = proposeConfig(input({ packageJson: { scripts: { lint: 'eslint .', test: 'vitest run' } }, tracing: { available: false, message: why } }));
    expect(proposal.checks.map((p) => p.check)).toEqual([
      { name: 'lint', kind: 'lint', script: 'lint' },
      { name: 'test', kind: 'test', script: 'test' },
    ]);
    expect(proposal.notes).toHaveLength(1);
    expect(proposal.notes[0]).toContain(`tracing cannot run here: ${why}.`);
    expect(proposal.notes[0]).toContain('add "mode": "traced" to a check');
  });

  it('says nothing of tracing when the caller did not ask, or when there is nothing to propose', () => {
    expect(proposeConfig(input({ packageJson: { scripts: { test: 'jest' } } })).notes).toEqual([]);
    expect(proposeConfig(input({ packageJson: { scripts: { test: 'jest' } } })).checks[0]?.check).not.toHaveProperty('mode');
    expect(proposeConfig(input({ packageJson: { scripts: { clean: 'rm -rf dist' } }, tracing: { available: true } })).notes).toEqual([]);
  });
});

describe('vouch init (CLI)', () => {
  it('writes a valid config, the state dir with its own .gitignore, and leaves the user\'s .gitignore alone', () => {
    const userIgnore = 'node_modules/\ndist/\n# mine\n';
    const dir = project({
      'package.json': pkg({ scripts: { typecheck: 'tsc --noEmit', lint: 'eslint .', test: 'vitest run', 'test:watch': 'vitest', dev: 'vite' } }),
      'package-lock.json': '{}',
      '.gitignore': userIgnore,
    });
    const result = vouchInit(dir);
    expect(result.code, result.stderr).toBe(0);
    const text = readFileSync(join(dir, 'vouch.config.json'), 'utf8');
    expect(text.endsWith('}\n')).toBe(true);
    expect(text).toContain('\n  "checks": [\n');
    const config = parseConfig(text, 'vouch.config.json');
    expect(config.packageManager).toBe('npm');
    expect(config).not.toHaveProperty('$schema');
    expect(config.checks.map((c) => [c.name, c.kind])).toEqual([
      ['typecheck', 'typecheck'],
      ['lint', 'lint'],
      ['test', 'test'],
    ]);
    expect(config.checks[0]?.inputs).toEqual(['**/*.{ts,tsx,mts,cts,js,jsx,mjs,cjs,json,jsonc}', 'package-lock.json']);
    expect(readFileSync(join(dir, '.vouch', '.gitignore'), 'utf8')).toBe('*\n');
    expect(readFileSync(join(dir, '.gitignore'), 'utf8')).toBe(userIgnore);
    expect(result.stdout).toContain('Package manager: npm, from the lockfile package-lock.json');
    expect(result.stdout).toMatch(/typecheck \(typecheck(, traced)?\): npm run typecheck\s+->\s+tsc --noEmit/);
    expect(result.stdout).toContain('inputs narrowed to TypeScript, JavaScript and JSON files');
    expect(result.stdout).toMatch(/test:watch: .*watch/);
    expect(result.stdout).toContain('Wrote vouch.config.json');
    expect(result.stdout).toContain('vouch run');
    expect(result.stdout).toContain('vouch status');
  });

  it('finds the root from a subdirectory', () => {
    const dir = project({ 'package.json': pkg({ scripts: { test: 'jest' } }), 'src/deep/x.ts': '' });
    const json = initJson(join(dir, 'src', 'deep'), '--dry-run');
    expect(json.root).toBe(dir);
    expect(json.config_path).toBe(join(dir, 'vouch.config.json'));
  });

  it('never overwrites an existing config, and shows how to write a second one', () => {
    const dir = project({ 'package.json': pkg({ scripts: { test: 'vitest run' } }) });
    const mine = '{ "schema": 1, "checks": [ { "name": "mine", "kind": "custom", "command": ["true"] } ] }';
    writeFileSync(join(dir, 'vouch.config.json'), mine);
    const result = vouchInit(dir);
    expect(result.code).toBe(0);
    expect(readFileSync(join(dir, 'vouch.config.json'), 'utf8')).toBe(mine);
    expect(existsSync(join(dir, '.vouch'))).toBe(false);
    expect(result.stdout).toContain('already exists, so nothing was written');
    expect(result.stdout).toContain('vouch init --config vouch.proposed.json');
    expect(result.stdout).toContain('"script": "test"');

    const json = initJson(dir);
    expect(json).toMatchObject({ written: false, existing: true, dry_run: false });
    expect(readFileSync(join(dir, 'vouch.config.json'), 'utf8')).toBe(mine);

    const second = initJson(dir, '--config', 'vouch.proposed.json');
    expect(second).toMatchObject({ written: true, existing: false, config_path: join(dir, 'vouch.proposed.json') });
    expect(parseConfig(readFileSync(join(dir, 'vouch.proposed.json'), 'utf8'), 'vouch.proposed.json')).toEqual(second.config);
    expect(readFileSync(join(dir, 'vouch.config.json'), 'utf8')).toBe(mine);
    // And a second proposal that already exists suggests a name that is still free.
    expect(vouchInit(dir, '--config', 'vouch.proposed.json').stdout).toContain('--config vouch.proposed-2.json');
  });

  it('writes nothing on --dry-run', () => {
    const dir = project({ 'package.json': pkg({ scripts: { lint: 'oxlint' } }) });
    const result = vouchInit(dir, '--dry-run');
    expect(result.code, result.stderr).toBe(0);
    expect(existsSync(join(dir, 'vouch.config.json'))).toBe(false);
    expect(existsSync(join(dir, '.vouch'))).toBe(false);
    expect(result.stdout).toContain('Dry run: nothing was written');
    expect(result.stdout).toContain('"kind": "lint"');
    expect(initJson(dir, '--dry-run')).toMatchObject({ written: false, existing: false, dry_run: true });
    expect(existsSync(join(dir, 'vouch.config.json'))).toBe(false);
  });

  it('puts the state dir where --state-dir says, and a root field when --config sits elsewhere', () => {
    const dir = project({ 'package.json': pkg({ scripts: { test: 'mocha' } }) });
    const json = initJson(dir, '--config', 'config/vouch.json', '--state-dir', 'receipts');
    expect(json.written).toBe(true);
    expect(json.root).toBe(dir);
    expect(readFileSync(join(dir, 'receipts', '.gitignore'), 'utf8')).toBe('*\n');
    expect(existsSync(join(dir, '.vouch'))).toBe(false);
    const config = parseConfig(readFileSync(join(dir, 'config', 'vouch.json'), 'utf8'), 'vouch.json');
    expect(config.root).toBe('..');
    // A root above its config is refused unless the user names it: init says how.
    expect(json.notes.join('\n')).toContain(`Pass --root ${dir} with --config to every command`);
    const refused = spawnSync(process.execPath, [cli, 'status', '--config', 'config/vouch.json', '--json'], { cwd: dir, encoding: 'utf8' });
    expect(refused.status).toBe(2);
    expect(JSON.parse(refused.stdout).error.code).toBe('root-outside-config');
    const status = spawnSync(process.execPath, [cli, 'status', '--config', 'config/vouch.json', '--root', dir, '--state-dir', 'receipts', '--json'], { cwd: dir, encoding: 'utf8' });
    expect(status.status, status.stderr).toBe(0);
  });

  it('prints the documented --json shape', () => {
    const dir = project({
      'package.json': pkg({ packageManager: 'pnpm@9.1.0', scripts: { typecheck: 'tsc --noEmit', test: 'vitest run' } }),
      'pnpm-lock.yaml': '',
    });
    const json = initJson(dir, '--dry-run');
    expect(Object.keys(json).sort()).toEqual(
      ['schema', 'root', 'config_path', 'state_dir', 'written', 'existing', 'dry_run', 'all', 'verify', 'package_manager', 'checks', 'skipped', 'dropped', 'notes', 'config'].sort(),
    );
    expect(json.schema).toBe(1);
    expect(json.package_manager).toEqual({ name: 'pnpm', source: 'packageManager-field', lockfile: 'pnpm-lock.yaml', variant: null });
    expect(json.checks[0]).toEqual({
      name: 'typecheck',
      kind: 'typecheck',
      script: 'typecheck',
      command: null,
      script_command: 'tsc --noEmit',
      package: null,
      reason: expect.stringContaining('tsc'),
      inputs_note: expect.stringContaining('narrowed'),
      invented: false,
      unverified: false,
      needs_first: [],
      verify: null,
    });
    expect(json.config).toEqual(parseConfig(JSON.stringify(json.config), 'json'));
    expect(json.config).toMatchObject({ schema: 1, packageManager: 'pnpm' });
  });

  it('reports yarn berry and bun in its output', () => {
    const berry = project({ 'package.json': pkg({ scripts: { test: 'jest' } }), 'yarn.lock': '__metadata:\n  version: 8\n' });
    expect(initJson(berry, '--dry-run').package_manager).toEqual({ name: 'yarn', source: 'lockfile', lockfile: 'yarn.lock', variant: 'berry' });
    expect(vouchInit(berry, '--dry-run').stdout).toContain('yarn (berry, 2+)');
    const classic = project({ 'package.json': pkg({ scripts: { test: 'jest' } }), 'yarn.lock': '# yarn lockfile v1\n' });
    expect(initJson(classic, '--dry-run').package_manager.variant).toBe('classic');
    const bun = project({ 'package.json': pkg({ scripts: { test: 'bun test' } }), 'bun.lockb': '' });
    const json = initJson(bun, '--dry-run');
    expect(json.package_manager).toMatchObject({ name: 'bun', lockfile: 'bun.lockb' });
    expect(json.config).toMatchObject({ packageManager: 'bun', checks: [{ name: 'test', kind: 'test', script: 'test' }] });
  });

  it('says when npm is only a default', () => {
    const dir = project({ 'package.json': pkg({ scripts: { test: 'jest' } }) });
    expect(initJson(dir, '--dry-run').package_manager).toEqual({ name: 'npm', source: 'default', lockfile: null, variant: null });
    expect(vouchInit(dir, '--dry-run').stdout).toContain('npm, by default');
  });

  it('exits 2 naming both lockfiles when they disagree, and writes nothing', () => {
    const dir = project({ 'package.json': pkg({ scripts: { test: 'jest' } }), 'package-lock.json': '{}', 'yarn.lock': '' });
    const result = vouchInit(dir);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('package-lock.json');
    expect(result.stderr).toContain('yarn.lock');
    expect(existsSync(join(dir, 'vouch.config.json'))).toBe(false);
    const json = vouchInit(dir, '--json');
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout)).toMatchObject({ schema: 1, error: { code: 'package-manager-ambiguous' } });
  });

  it('exits 2 without a package.json, naming the directory and the fix', () => {
    // Outside the repository: under <repo>/.tmp the repo's own package.json would be found.
    const base = mkdtempSync(join(tmpdir(), 'vouch-init-'));
    made.push(base);
    const dir = join(base, 'empty');
    mkdirSync(dir);
    const result = vouchInit(dir);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(dir);
    expect(result.stderr).toContain('npm init');
    expect(result.stderr).toContain('docs/config.md');
    expect(existsSync(join(dir, 'vouch.config.json'))).toBe(false);
  });

  it('exits 2 when there is nothing to propose, saying what it looked for', () => {
    const dir = project({ 'package.json': pkg({ scripts: { start: 'node server.js', dev: 'vite' } }) });
    const result = vouchInit(dir);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('found nothing to check');
    expect(existsSync(join(dir, 'vouch.config.json'))).toBe(false);
  });

  it.skipIf(!TRACING)(`proposes traced checks where strace can trace${TRACING ? '' : ' (SKIPPED: tracing cannot run here)'}`, () => {
    const dir = project({ 'package.json': pkg({ scripts: { lint: 'oxlint', test: 'vitest run' } }) });
    const json = initJson(dir, '--dry-run');
    expect(json.config.checks.map((check) => [check.name, (check as { mode?: string }).mode])).toEqual([
      ['lint', 'traced'],
      ['test', 'traced'],
    ]);
    expect(json.notes.filter((note) => note.includes('"traced"'))).toHaveLength(1);
    const text = vouchInit(dir, '--dry-run').stdout;
    expect(text).toContain('lint (lint, traced): npm run lint');
    expect(text).toContain('"mode": "traced"');
  });

  it('proposes declared checks where strace is missing, and says why once, naming how to install it', () => {
    const dir = project({ 'package.json': pkg({ scripts: { lint: 'oxlint', test: 'vitest run' } }) });
    // No strace on this PATH: init runs nothing else through it (node is process.execPath).
    const env = { ...process.env, PATH: join(dir, 'no-such-dir') };
    const result = spawnSync(process.execPath, [cli, 'init', '--dry-run', '--json'], { cwd: dir, encoding: 'utf8', env });
    expect(result.status, result.stderr).toBe(0);
    const json = JSON.parse(result.stdout) as { config: { checks: Record<string, unknown>[] }; notes: string[] };
    for (const check of json.config.checks) expect(check).not.toHaveProperty('mode');
    const notes = json.notes.filter((note) => note.includes('tracing cannot run here'));
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatch(/strace is not installed.*apt-get install strace/);
    const text = spawnSync(process.execPath, [cli, 'init', '--dry-run'], { cwd: dir, encoding: 'utf8', env }).stdout;
    expect(text).toContain('lint (lint): npm run lint');
    expect(text.match(/tracing cannot run here/g)).toHaveLength(1);
  });

  it('rejects arguments and unknown options as usage errors', () => {
    const dir = project({ 'package.json': pkg({ scripts: { test: 'jest' } }) });
    expect(vouchInit(dir, 'extra').code).toBe(2);
    expect(vouchInit(dir, '--force').code).toBe(2);
    const help = vouchInit(dir, '--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('vouch init --config vouch.proposed.json');
    expect(help.stdout).toContain('--dry-run');
  });

  it('proposes the project\'s own tsc when there is a tsconfig but no typecheck script', () => {
    const dir = project({ 'package.json': pkg({ scripts: { test: 'vitest run' } }), 'tsconfig.json': '{}' });
    installTsc(dir);
    const json = initJson(dir, '--dry-run');
    expect(json.config.checks[0]).toEqual({
      name: 'typecheck',
      kind: 'typecheck',
      command: ['tsc', '--noEmit'],
      inputs: ['**/*.{ts,tsx,mts,cts,js,jsx,mjs,cjs,json,jsonc}'],
      ...tracedHere,
    });
    expect(json.checks[0]?.reason).toContain('node_modules/.bin');
  });

  it('runs a hoisted tsc by name: the check PATH has every ancestor node_modules/.bin', () => {
    const dir = project({
      'package.json': pkg({ scripts: {} }),
      'tsconfig.json': JSON.stringify({ compilerOptions: { strict: true, noEmit: true, types: [] }, include: ['*.ts'] }),
      'a.ts': 'export const a: number = 1;\n',
    });
    const json = initJson(dir);
    expect(json.config.checks[0]?.command).toEqual(['tsc', '--noEmit']);
    const { NODE_OPTIONS: _ignored, ...env } = process.env;
    const run = spawnSync(process.execPath, [cli, 'run', 'typecheck', '--json'], { cwd: dir, encoding: 'utf8', env });
    expect(run.status, run.stderr).toBe(0);
    const receipt = JSON.parse(run.stdout).runs[0].receipt;
    expect(receipt.result).toBe('PASS');
  });

  it('lists workspace node_modules next to the root\'s', () => {
    const dir = project({
      'package.json': pkg({ private: true, workspaces: ['packages/*', 'tools/cli'], scripts: { test: 'vitest run' } }),
      'package-lock.json': '{}',
      'packages/a/package.json': pkg({}),
      'packages/a/node_modules/x/index.js': '',
      'packages/b/package.json': pkg({}),
      'tools/cli/node_modules/y/index.js': '',
      'other/node_modules/z/index.js': '',
    });
    const json = initJson(dir, '--dry-run');
    expect(json.config.checks[0]?.installed).toEqual(['node_modules/**', 'packages/a/node_modules/**', 'tools/cli/node_modules/**']);
  });

  it('narrows tsc only to files tsc really reads', () => {
    // Ask the real tsc which files it reads in a project that uses JSON modules, JS and .mts,
    // and check the narrowed inputs cover every one of them inside the root.
    const dir = project({
      'package.json': pkg({ type: 'module', scripts: { typecheck: 'tsc --noEmit' } }),
      'package-lock.json': '{}',
      'tsconfig.json': JSON.stringify({
        compilerOptions: { strict: true, module: 'NodeNext', moduleResolution: 'NodeNext', resolveJsonModule: true, allowJs: true, checkJs: true, noEmit: true, types: [] },
        include: ['src'],
      }),
      'src/index.ts': "import data from './data.json' with { type: 'json' };\nimport { helper } from './helper.mjs';\nimport { old } from './legacy.cjs';\nexport const n: number = data.n + helper() + old;\n",
      'src/data.json': '{ "n": 1 }',
      'src/helper.mts': 'export function helper(): number { return 2; }\n',
      'src/legacy.cjs': 'exports.old = 3;\n',
      'src/types.d.ts': 'declare const marker: string;\n',
      'src/styles.css': 'body { color: red; }\n',
      'README.md': '# fixture\n',
    });
    installTsc(dir);
    const config = initJson(dir, '--dry-run').config;
    const inputs = config.checks[0]?.inputs ?? [];
    expect(inputs).toContain('package-lock.json');
    const listed = spawnSync(join(dir, 'node_modules', '.bin', 'tsc'), ['--listFilesOnly', '-p', 'tsconfig.json'], { cwd: dir, encoding: 'utf8' });
    expect(listed.status, listed.stdout + listed.stderr).toBe(0);
    const insideRoot = listed.stdout
      .split('\n')
      .filter(Boolean)
      .map((file) => relative(realpathSync(dir), realpathSync(file)).split('\\').join('/'))
      .filter((rel) => !rel.startsWith('..') && !rel.startsWith('node_modules/'));
    expect(insideRoot.length).toBeGreaterThanOrEqual(4);
    const selects = picomatch(inputs, { dot: true });
    for (const file of [...insideRoot, 'tsconfig.json', 'package.json']) expect(selects(file), file).toBe(true);
    expect(selects('README.md')).toBe(false);
    expect(selects('src/styles.css')).toBe(false);
  });
});
