import { mkdirSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Draft } from '../../src/core/claim.js';
import type { Inspection, StageInstance } from '../../src/prove/stage.js';
import { installedVersion } from '../helpers/claims.js';
import { REPO, tempProject, type TempProject } from '../helpers/project.js';

// The stage forks its host from the file beside it, so it is loaded from the build.
const dist = (path: string) => pathToFileURL(join(REPO, 'dist', 'prove', path)).href;
const { createJestStage } = (await import(dist('jestStage.js'))) as typeof import('../../src/prove/jestStage.js');
const { createOverlay } = (await import(dist('overlay.js'))) as typeof import('../../src/prove/overlay.js');
const { pickRunner } = (await import(dist('testRunner.js'))) as typeof import('../../src/prove/testRunner.js');
const { createRunnerStage } = (await import(dist('runnerStage.js'))) as typeof import('../../src/prove/runnerStage.js');
const { refuseUnsupportedTools } = (await import(dist('toolSupport.js'))) as typeof import('../../src/prove/toolSupport.js');

const JEST_29 = join(REPO, 'node_modules', 'jest29');

const MONEY = `export const VALUE = 'disk';\nexport function add(a: number, b: number): number {\n  return a + b;\n}\n`;
const MONEY_DRAFT = MONEY.replace("'disk'", "'draft'");
const MONEY_JS_ESM = `export const VALUE = 'disk';\nexport function add(a, b) {\n  return a + b;\n}\n`;
const MONEY_JS = `exports.VALUE = 'disk';\nexports.add = function add(a, b) {\n  return a + b;\n};\n`;

interface Variant {
  name: string;
  jest29?: boolean;
  files: Record<string, string>;
  ext: 'ts' | 'js';
  /** The test's body, importing `add` and `VALUE` from ../src/money and `extra` from ../src/extra. */
  test(body: string): string;
  money: { disk: string; draft: string };
  extra: string;
}

const tsTest = (body: string) =>
  `import { describe, expect, it } from '@jest/globals';\nimport { add, VALUE } from '../src/money';\nimport { extra } from '../src/extra';\n\ndescribe('money', () => {\n${body}\n});\n`;
const jsTest = (body: string) =>
  `const { add, VALUE } = require('../src/money');\nconst { extra } = require('../src/extra');\n\ndescribe('money', () => {\n${body}\n});\n`;

const TSCONFIG = JSON.stringify({ compilerOptions: { strict: true, module: 'commonjs', target: 'es2022', esModuleInterop: true, types: [] } });

const tsJest: Omit<Variant, 'name'> = {
  files: {
    'package.json': JSON.stringify({ name: 'fixture', private: true, scripts: { test: 'jest' } }),
    'jest.config.js': `module.exports = { preset: 'ts-jest', testEnvironment: 'node' };\n`,
    'tsconfig.json': TSCONFIG,
    'src/money.ts': MONEY,
  },
  ext: 'ts',
  test: tsTest,
  money: { disk: MONEY, draft: MONEY_DRAFT },
  extra: `export const extra = (): number => 1;\n`,
};

const babelJest: Omit<Variant, 'name'> = {
  files: {
    // Coverage asked for by the config would be written under coverage/; vouch turns it off.
    'package.json': JSON.stringify({ name: 'fixture', private: true, scripts: { test: 'jest' }, jest: { testEnvironment: 'node', collectCoverage: true, transform: { '\\.js$': 'babel-jest' } } }),
    'babel.config.js': `module.exports = {};\n`,
    'src/money.js': MONEY_JS,
  },
  ext: 'js',
  test: jsTest,
  money: { disk: MONEY_JS, draft: MONEY_JS.replace("'disk'", "'draft'") },
  extra: `exports.extra = () => 1;\n`,
};

const swcJest: Omit<Variant, 'name'> = {
  files: {
    'package.json': JSON.stringify({ name: 'fixture', private: true, scripts: { test: 'jest' } }),
    'jest.config.js': `module.exports = { testEnvironment: 'node', transform: { '^.+\\\\.ts$': '@swc/jest' } };\n`,
    'tsconfig.json': TSCONFIG,
    'src/money.ts': MONEY,
  },
  ext: 'ts',
  test: tsTest,
  money: { disk: MONEY, draft: MONEY_DRAFT },
  extra: `export const extra = (): number => 1;\n`,
};

/** Native ES modules, no transform: Jest's ESM support, which needs node --experimental-vm-modules (https://jestjs.io/docs/ecmascript-modules). */
const esm: Omit<Variant, 'name'> = {
  files: {
    'package.json': JSON.stringify({ name: 'fixture', private: true, type: 'module', scripts: { test: 'jest' } }),
    'jest.config.js': `export default { testEnvironment: 'node', transform: {} };\n`,
    'src/money.js': MONEY_JS_ESM,
  },
  ext: 'js',
  test: (body: string) =>
    `import { describe, expect, it } from '@jest/globals';\nimport { add, VALUE } from '../src/money.js';\nimport { extra } from '../src/extra.js';\n\ndescribe('money', () => {\n${body}\n});\n`,
  money: { disk: MONEY_JS_ESM, draft: MONEY_JS_ESM.replace("'disk'", "'draft'") },
  extra: `export const extra = () => 1;\n`,
};

const VARIANTS: Variant[] = [
  { name: 'ts-jest', ...tsJest },
  { name: 'babel-jest', ...babelJest },
  { name: '@swc/jest', ...swcJest },
  { name: 'native ES modules', ...esm },
  { name: 'ts-jest', jest29: true, ...tsJest },
  { name: 'babel-jest', jest29: true, ...babelJest },
  { name: 'native ES modules', jest29: true, ...esm },
];

/** Every file under the project with its size, to prove nothing was written. */
function listing(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else out.push(`${relative(root, path)}:${entry.isSymbolicLink() ? 'link' : statSync(path).size}`);
    }
  };
  walk(root);
  return out.sort();
}

function inspection(workspace: string, drafts: Draft[], test: Draft): Inspection {
  return { phase: 'case', drafts, test, overlay: createOverlay(workspace, [...drafts, test]), project: join(workspace, 'tsconfig.json') };
}

/** Points the workspace's node_modules/jest at the repo's Jest 29 copy. */
function linkJest29(root: string): void {
  mkdirSync(join(root, 'node_modules'), { recursive: true });
  symlinkSync(JEST_29, join(root, 'node_modules', 'jest'));
}

const PASSING = `  it('adds the draft', () => {\n    expect(add(1, 2)).toBe(3);\n    expect(VALUE).toBe('draft');\n    expect(extra()).toBe(1);\n  });`;
const FAILING = `  it('adds wrong', () => {\n    expect(add(1, 2)).toBe(4);\n  });`;

for (const variant of VARIANTS) {
  const version = variant.jest29 ? installedVersion('jest29') : installedVersion('jest');
  describe(`Jest ${version} with ${variant.name}`, () => {
    let project: TempProject;
    let stage: StageInstance;
    let before: string[];
    const testPath = `test/money.test.${variant.ext}`;
    const test = (body: string): Draft => ({ path: testPath, text: variant.test(body) });
    /** The 1-based line of the test's text that contains `needle`. */
    const lineOf = (body: string, needle: string): number => variant.test(body).split('\n').findIndex((line) => line.includes(needle)) + 1;
    const drafts = (): Draft[] => [
      { path: `src/money.${variant.ext}`, text: variant.money.draft },
      { path: `src/extra.${variant.ext}`, text: variant.extra },
    ];

    beforeAll(async () => {
      project = tempProject('jest', variant.files, { git: false });
      if (variant.jest29) linkJest29(project.root);
      before = listing(project.root);
      expect(pickRunner(project.root)).toBe('jest');
      stage = createJestStage(project.root);
      expect(await stage.warm()).toEqual({ name: 'jest', version });
    });

    afterAll(async () => {
      await stage?.destroy();
      project?.remove();
    });

    // The runs with the same drafts come one after the other: ts-jest's language service starts afresh, about
    // 2 s of CPU, whenever the drafts change.
    it('passes a claim whose drafts, a changed module and a new one, are what the test imports', async () => {
      const progress = stage.progress();
      expect(await stage.inspect(inspection(project.root, drafts(), test(PASSING)))).toEqual([]);
      expect(stage.progress()).toBeGreaterThan(progress);
    });

    it('says a test that declares no tests is the claimant\'s', async () => {
      const issues = await stage.inspect(inspection(project.root, drafts(), { path: testPath, text: variant.ext === 'ts' ? 'export {};\n' : '\n' }));
      expect(issues).toEqual([expect.objectContaining({ origin: 'claimant', message: 'the test declares no tests', path: testPath })]);
    });

    it('locates a failing test at the declared test path', async () => {
      const issues = await stage.inspect(inspection(project.root, drafts(), test(FAILING)));
      expect(issues).toEqual([expect.objectContaining({ origin: 'claimant', stage: 'runtime', path: testPath, line: lineOf(FAILING, 'toBe(4)'), message: expect.stringMatching(/^money adds wrong: expect\(received\)\.toBe\(expected\)/) })]);
    });

    it('runs the disk text when the module is not drafted, after a run that drafted it', async () => {
      const issues = await stage.inspect(inspection(project.root, [drafts()[1]!], test(PASSING)));
      expect(issues).toHaveLength(1);
      expect(issues[0]).toMatchObject({ origin: 'claimant', stage: 'runtime', path: testPath, line: lineOf(PASSING, "toBe('draft')") });
      expect(issues[0]!.message).toMatch(/^money adds the draft: .*"draft".*"disk"/);
    });

    if (variant.name === 'ts-jest') it('type-checks against the text of this run, drafted or on disk, never an earlier one', async () => {
      const typed = `  it('adds', () => {\n    expect(add(1, 2)).toBe(3);\n  });`;
      const money = (type: string) => ({ path: 'src/money.ts', text: MONEY.replace('a: number, b: number', `a: ${type}, b: ${type}`) });
      const extra = drafts()[1]!;
      expect(await stage.inspect(inspection(project.root, [money('number'), extra], test(typed)))).toEqual([]);
      const [wrong] = await stage.inspect(inspection(project.root, [money('string'), extra], test(typed)));
      expect(wrong).toMatchObject({ origin: 'claimant', path: testPath, message: expect.stringMatching(/TS2345: Argument of type 'number' is not assignable to parameter of type 'string'/) });
      // The same test with no draft of money.ts reads the disk's, where add takes numbers.
      expect(await stage.inspect(inspection(project.root, [extra], test(typed)))).toEqual([]);
      // And the disk edited since: the edit is what is checked.
      const path = join(project.root, 'src/money.ts');
      writeFileSync(path, money('string').text);
      try {
        const [edited] = await stage.inspect(inspection(project.root, [extra], test(typed)));
        expect(edited).toMatchObject({ origin: 'claimant', message: expect.stringMatching(/TS2345/) });
      } finally {
        writeFileSync(path, MONEY);
      }
      expect(await stage.inspect(inspection(project.root, [extra], test(typed)))).toEqual([]);
    });

    it('writes nothing into the workspace', () => {
      expect(listing(project.root)).toEqual(before);
    });

    // The tests below share the stage too, after the check above: they write into the workspace. A ts-jest
    // host's first run costs about 4 s of CPU, a run on a warm one that drops its language service about 2.
    if (variant.name === 'ts-jest') it('compares snapshots with the declared test\'s, and never writes one', async () => {
      const snap = (value: number): Draft => ({ path: 'test/snap.test.ts', text: `import { expect, it } from '@jest/globals';\nit('looks the same', () => {\n  expect({ a: ${value} }).toMatchSnapshot();\n});\n` });
      const withoutSnapshot = listing(project.root);
      // No snapshot yet: with --ci Jest fails the test and writes none.
      expect(await stage.inspect(inspection(project.root, [], snap(1)))).toEqual([expect.objectContaining({ origin: 'claimant', path: 'test/snap.test.ts', line: 3 })]);
      expect(listing(project.root)).toEqual(withoutSnapshot);
      project.write('test/__snapshots__/snap.test.ts.snap', '// Jest Snapshot v1, https://jestjs.io/docs/snapshot-testing\n\nexports[`looks the same 1`] = `\n{\n  "a": 1,\n}\n`;\n');
      const withSnapshot = listing(project.root);
      expect(await stage.inspect(inspection(project.root, [], snap(1)))).toEqual([]);
      expect(await stage.inspect(inspection(project.root, [], snap(2)))).toEqual([expect.objectContaining({ origin: 'claimant', path: 'test/snap.test.ts', line: 3, message: expect.stringMatching(/toMatchSnapshot/) })]);
      expect(listing(project.root)).toEqual(withSnapshot);
    });

    // Last, for it leaves the config broken. Declared only where it applies, so that no variant reports it skipped.
    if (variant.name === 'ts-jest' && !variant.jest29) it('reads the config again when it changes, and hands the workspace\'s own resolver what vouch does not answer', async () => {
      const test: Draft = { path: 'test/money.test.ts', text: `import { expect, it } from '@jest/globals';\nimport { VALUE } from 'money-alias';\nit('imports through the resolver', () => expect(VALUE).toBe('disk'));\n` };
      const unresolved = await stage.inspect(inspection(project.root, [], test));
      expect(unresolved).toEqual([expect.objectContaining({ origin: 'claimant', message: expect.stringMatching(/^could not load the test: .*money-alias/) })]);
      project.write('resolver.js', `const { join } = require('node:path');\nmodule.exports = (request, options) => request === 'money-alias' ? join(__dirname, 'src', 'money.ts') : options.defaultResolver(request, options);\n`);
      // ts-jest's type check does not know the alias; its diagnostics are off so that Jest's resolution is what is tested.
      project.write('jest.config.js', `module.exports = { testEnvironment: 'node', resolver: '<rootDir>/resolver.js', transform: { '^.+\\\\.ts$': ['ts-jest', { diagnostics: false }] } };\n`);
      expect(await stage.inspect(inspection(project.root, [], test))).toEqual([]);
      // A config broken since is the workspace's: refused, as the stage contract says, not a verdict.
      project.write('jest.config.js', 'module.exports = {\n');
      await expect(stage.inspect(inspection(project.root, [], test))).rejects.toMatchObject({ origin: 'workspace', code: 'malformed', detail: expect.stringContaining("the workspace's Jest config could not be loaded") });
    });
  });
}

describe('Jest stage', () => {
  const files = { ...tsJest.files, 'src/spin.ts': `export const spin = (): void => {\n  for (;;) {}\n};\n` };

  it('reports a test path the config does not match as the workspace\'s, unjudged', async () => {
    const project = tempProject('jest-match', { ...files, 'jest.config.js': `module.exports = { preset: 'ts-jest', testEnvironment: 'node', testMatch: ['**/*.spec.ts'] };\n` }, { git: false });
    const stage = createJestStage(project.root);
    try {
      await stage.warm();
      const issues = await stage.inspect(inspection(project.root, [], { path: 'test/money.test.ts', text: tsJest.test(PASSING) }));
      expect(issues).toEqual([expect.objectContaining({ origin: 'workspace', unjudged: true, path: 'test/money.test.ts', message: expect.stringMatching(/does not include test\/money\.test\.ts/) })]);
      // A pattern that names the declared file exactly admits it, but not the fresh path the test runs at.
      project.write('jest.config.js', `module.exports = { preset: 'ts-jest', testEnvironment: 'node', testMatch: ['**/test/money.test.ts'] };\n`);
      const exact = await stage.inspect(inspection(project.root, [], { path: 'test/money.test.ts', text: tsJest.test(PASSING) }));
      expect(exact).toEqual([expect.objectContaining({ origin: 'workspace', unjudged: true, message: expect.stringMatching(/admits test\/money\.test\.ts as a test file but not the fresh path/) })]);
    } finally {
      await stage.destroy();
      project.remove();
    }
  });

  it('stops at once on destroy, even in a test that never ends', async () => {
    const project = tempProject('jest-spin', files, { git: false });
    const stage = createJestStage(project.root);
    try {
      await stage.warm();
      const spinning = stage.inspect(inspection(project.root, [], { path: 'test/spin.test.ts', text: `import { it } from '@jest/globals';\nimport { spin } from '../src/spin';\nit('spins', () => spin());\n` }));
      const outcome = spinning.then(
        () => 'resolved',
        (error: unknown) => ((error as { code?: string }).code ?? String(error)),
      );
      while (stage.progress() === 0) await new Promise((resolve) => setTimeout(resolve, 50));
      const started = performance.now();
      await stage.destroy();
      expect(await outcome).toBe('destroyed');
      expect(performance.now() - started).toBeLessThan(2000);
    } finally {
      await stage.destroy();
      project.remove();
    }
  });

  it('says destroyed, not that the host exited, when destroyed while warming', async () => {
    const project = tempProject('jest-warm', files, { git: false });
    const stage = createJestStage(project.root);
    try {
      const warming = stage.warm();
      await stage.destroy();
      await expect(warming).rejects.toMatchObject({ origin: 'instrument', code: 'destroyed' });
    } finally {
      project.remove();
    }
  });

  it('says the workspace is missing Jest when none is installed', async () => {
    // Under .tmp/ the repo's own Jest would be found; the filesystem root has none.
    const stage = createJestStage('/');
    try {
      await expect(stage.warm()).rejects.toMatchObject({ origin: 'workspace', code: 'missing' });
    } finally {
      await stage.destroy();
    }
  });

  it('refuses a Jest before 29 before any stage runs, and only where Jest is the runner', () => {
    const project = tempProject('jest-old', { 'package.json': JSON.stringify({ name: 'fixture', private: true, scripts: { test: 'jest' } }) }, { git: false });
    try {
      const dir = join(project.root, 'node_modules', 'jest');
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'jest', version: '28.1.3', main: 'index.js' }));
      writeFileSync(join(dir, 'index.js'), `throw new Error('the fake jest was loaded');\n`);
      expect(() => refuseUnsupportedTools(project.root)).toThrow('unsupported: jest 28.1.3; vouch needs jest ≥ 29.0');
      // A workspace whose test script runs Vitest is not refused for a Jest lying in node_modules.
      project.write('package.json', JSON.stringify({ name: 'fixture', private: true, scripts: { test: 'vitest run' } }));
      expect(() => refuseUnsupportedTools(project.root)).not.toThrow();
    } finally {
      project.remove();
    }
  });
});

describe('pickRunner', () => {
  const pick = (files: Record<string, string>) => {
    const project = tempProject('runner', files, { git: false });
    try {
      return pickRunner(project.root);
    } finally {
      project.remove();
    }
  };

  it('takes the runner the test script names', () => {
    expect(pick({ 'package.json': JSON.stringify({ scripts: { test: 'jest --coverage' } }) })).toBe('jest');
    expect(pick({ 'package.json': JSON.stringify({ scripts: { test: 'vitest run' } }), 'jest.config.js': '' })).toBe('vitest');
    expect(pick({ 'package.json': JSON.stringify({ scripts: { test: 'cross-env NODE_ENV=test node_modules/.bin/jest' } }), 'vitest.config.ts': '' })).toBe('jest');
    // A package named after a runner is not the runner: ts-jest here, with Vitest's config at the root.
    expect(pick({ 'package.json': JSON.stringify({ scripts: { test: 'node scripts/ts-jest-check.js', other: 'jest-preview' } }), 'vitest.config.ts': '' })).toBe('vitest');
  });

  it('falls back to a config at the root, Vitest first', () => {
    expect(pick({ 'package.json': '{}', 'jest.config.ts': '' })).toBe('jest');
    expect(pick({ 'package.json': JSON.stringify({ jest: {} }) })).toBe('jest');
    expect(pick({ 'package.json': '{}', 'jest.config.js': '', 'vitest.config.ts': '' })).toBe('vitest');
  });

  it('takes Vitest when both are installed and nothing says which', () => {
    expect(pick({ 'package.json': '{}' })).toBe('vitest');
  });

  it('makes the runtime stage on the runner chosen, stale once the workspace switches runner', async () => {
    const project = tempProject('runner-switch', tsJest.files, { git: false });
    const stage = createRunnerStage(project.root);
    try {
      expect(await stage.warm()).toEqual({ name: 'jest', version: installedVersion('jest') });
      expect(stage.stale()).toBe(false);
      project.write('package.json', JSON.stringify({ name: 'fixture', private: true, scripts: { test: 'vitest run' } }));
      expect(stage.stale()).toBe(true);
    } finally {
      await stage.destroy();
      project.remove();
    }
  });
});
