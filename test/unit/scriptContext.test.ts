import { describe, expect, it } from 'vitest';
import { sha256 } from '../../src/core/digest.js';
import { envNames } from '../../src/core/context.js';
import { changedScripts, contextEnvPatterns, MAX_DEPTH, needsShellParser, plainCommandWords, SCRIPT_BODY_LIMIT, scriptBodies, scriptsRun, ShellParserNeeded } from '../../src/core/scriptContext.js';
import { commandWords } from '../../src/core/shellWords.js';
import { mulberry32, testSeed } from '../helpers/seed.js';
import { definitionOf } from '../../src/core/definition.js';

/*
 * The scripts a check's command makes the package manager run: what `npm run
 * X` really executes is part of the check's context, whatever its inputs.
 * Over-including only makes a check STALE; leaving one out could leave it
 * falsely CURRENT.
 */

const names = (argv: string[], scripts: Record<string, unknown>) => [...scriptsRun(argv, scripts, commandWords)].filter((name) => name in scripts).sort();

describe('scriptsRun: the scripts an argv runs', () => {
  const scripts = {
    typecheck: 'tsc --noEmit',
    pretypecheck: 'node scripts/gen.js',
    posttypecheck: 'echo done',
    build: 'rolldown -c',
    prebuild: 'rimraf dist',
    check: 'npm run build && vitest run',
    lint: 'oxlint src',
    'lint:fix': 'oxlint --fix src',
    test: 'vitest run',
    pretest: 'npm run lint',
    unrelated: 'prettier --check .',
  };
  const cases: Array<{ name: string; argv: string[]; scripts?: Record<string, unknown>; expected: string[] }> = [
    { name: 'npm run: the script and its pre and post scripts', argv: ['npm', 'run', 'typecheck'], expected: ['posttypecheck', 'pretypecheck', 'typecheck'] },
    // pnpm runs pre/post only with enable-pre-post-scripts, yarn 2+ never: both are included, as over-including is safe.
    { name: 'pnpm run: pre and post count too', argv: ['pnpm', 'run', 'typecheck'], expected: ['posttypecheck', 'pretypecheck', 'typecheck'] },
    { name: 'yarn run: pre and post count too', argv: ['yarn', 'run', 'typecheck'], expected: ['posttypecheck', 'pretypecheck', 'typecheck'] },
    { name: 'bun run: pre and post count too', argv: ['bun', 'run', 'typecheck'], expected: ['posttypecheck', 'pretypecheck', 'typecheck'] },
    { name: "pnpm's short form", argv: ['pnpm', 'typecheck'], expected: ['posttypecheck', 'pretypecheck', 'typecheck'] },
    { name: "yarn's short form", argv: ['yarn', 'lint'], expected: ['lint'] },
    { name: 'npm run-script alias', argv: ['npm', 'run-script', 'lint'], expected: ['lint'] },
    { name: 'npm t runs test, its pretest, and what pretest runs', argv: ['npm', 't'], expected: ['lint', 'pretest', 'test'] },
    { name: 'transitive: a body that runs another script', argv: ['npm', 'run', 'check'], expected: ['build', 'check', 'prebuild'] },
    { name: 'a package manager given by path', argv: ['/usr/local/bin/npm', 'run', 'lint'], expected: ['lint'] },
    { name: 'options before the script name', argv: ['pnpm', '--silent', 'run', 'lint'], expected: ['lint'] },
    { name: 'a missing script: nothing to record', argv: ['npm', 'run', 'nope'], expected: [] },
    { name: 'a command check that runs no script', argv: ['tsc', '--noEmit'], expected: [] },
    { name: 'a command check that is `npm run X`', argv: ['npm', 'run', 'build'], expected: ['build', 'prebuild'] },
    { name: 'a tool in front of the package manager', argv: ['cross-env', 'CI=1', 'npm', 'run', 'lint'], expected: ['lint'] },
    { name: "pnpm's /regex/ form", argv: ['pnpm', 'run', '/^lint/'], expected: ['lint', 'lint:fix'] },
    { name: 'npm exec runs no script', argv: ['npm', 'exec', 'tsc'], expected: [] },
    {
      name: 'npm-run-all patterns',
      argv: ['npm', 'run', 'all'],
      scripts: { ...scripts, all: 'run-s build "lint:*"' },
      expected: ['all', 'build', 'lint:fix', 'prebuild'],
    },
    {
      name: 'npm-run-all behind a runner, by path',
      argv: ['npm', 'run', 'all'],
      scripts: { ...scripts, all: 'npx node_modules/.bin/run-p -l "lint*" test' },
      expected: ['all', 'lint', 'lint:fix', 'pretest', 'test'],
    },
    {
      name: "concurrently's npm: shortcut and quoted command lines",
      argv: ['npm', 'run', 'dev'],
      scripts: { ...scripts, dev: 'concurrently "npm:lint" "npm run typecheck"' },
      expected: ['dev', 'lint', 'posttypecheck', 'pretypecheck', 'typecheck'],
    },
    {
      name: 'sh -c with a command line',
      argv: ['npm', 'run', 'ci'],
      scripts: { ...scripts, ci: "sh -c 'npm run lint'" },
      expected: ['ci', 'lint'],
    },
    {
      name: 'a script inside a command substitution',
      argv: ['npm', 'run', 'ci'],
      scripts: { ...scripts, ci: 'echo "$(npm run lint)"' },
      expected: ['ci', 'lint'],
    },
    {
      name: 'a cycle stops',
      argv: ['npm', 'run', 'a'],
      scripts: { a: 'npm run b', b: 'npm run a', c: 'x' },
      expected: ['a', 'b'],
    },
    {
      name: 'a script that runs itself',
      argv: ['npm', 'run', 'a'],
      scripts: { a: 'npm run a', c: 'x' },
      expected: ['a'],
    },
    {
      name: 'a body that does not parse: every script counts',
      argv: ['npm', 'run', 'a'],
      scripts: { a: 'tsc && (', c: 'x' },
      expected: ['a', 'c'],
    },
    {
      name: 'a script name the shell expands: every script counts',
      argv: ['npm', 'run', 'a'],
      scripts: { a: 'npm run $TARGET', c: 'x' },
      expected: ['a', 'c'],
    },
    {
      name: 'a program the shell expands ($npm_execpath): every script counts',
      argv: ['npm', 'run', 'a'],
      scripts: { a: '$npm_execpath run b', b: 'x', c: 'y' },
      expected: ['a', 'b', 'c'],
    },
    {
      name: 'an expanded word elsewhere does not matter',
      argv: ['npm', 'run', 'a'],
      scripts: { a: 'tsc -p $DIR && npm run b', b: 'x', c: 'y' },
      expected: ['a', 'b'],
    },
    { name: 'no scripts at all', argv: ['npm', 'run', 'a'], scripts: {}, expected: [] },
    { name: 'a body that is not a string is not followed', argv: ['npm', 'run', 'a'], scripts: { a: 42, c: 'x' }, expected: ['a'] },
  ];
  for (const { name, argv, scripts: map = scripts, expected } of cases) {
    it(name, () => {
      expect(names(argv, map)).toEqual(expected);
    });
  }

  it('a chain deeper than MAX_DEPTH: every script counts', () => {
    const chain: Record<string, string> = { other: 'x' };
    for (let index = 0; index <= MAX_DEPTH + 1; index++) chain[`s${index}`] = `npm run s${index + 1}`;
    expect(names(['npm', 'run', 's0'], chain)).toContain('other');
    const short: Record<string, string> = { other: 'x', s0: 'npm run s1', s1: 'npm run s2', s2: 'true' };
    expect(names(['npm', 'run', 's0'], short)).toEqual(['s0', 's1', 's2']);
  });
});

describe('scriptBodies: what the context records', () => {
  it('sorted by name, the body kept when short, always with its digest', () => {
    expect(scriptBodies(['npm', 'run', 'b'], { b: 'npm run a', a: 'tsc', z: 'no' }, commandWords)).toEqual([
      { name: 'a', body: 'tsc', digest: sha256('tsc') },
      { name: 'b', body: 'npm run a', digest: sha256('npm run a') },
    ]);
  });

  it('a long body is kept as its digest only', () => {
    const long = `tsc ${'x'.repeat(SCRIPT_BODY_LIMIT)}`;
    expect(scriptBodies(['npm', 'run', 'a'], { a: long }, commandWords)).toEqual([{ name: 'a', body: null, digest: sha256(long) }]);
    const limit = 'y'.repeat(SCRIPT_BODY_LIMIT);
    expect(scriptBodies(['npm', 'run', 'a'], { a: limit }, commandWords)[0]!.body).toBe(limit);
  });

  it('no package.json: nothing', () => {
    expect(scriptBodies(['npm', 'run', 'a'], null, commandWords)).toEqual([]);
  });

  it('a name inherited from Object.prototype is not a script', () => {
    expect(scriptBodies(['npm', 'run', 'constructor'], {}, commandWords)).toEqual([]);
    expect(scriptBodies(['npm', 'run', 'toString'], { a: 'x' }, commandWords)).toEqual([]);
  });
});

describe('changedScripts', () => {
  const entry = (name: string, body: string) => ({ name, body, digest: sha256(body) });
  it('names scripts whose body changed, appeared or went, and no others', () => {
    const old = [entry('a', 'tsc'), entry('b', 'x'), entry('c', 'same')];
    const now = [entry('a', 'echo skipped'), entry('c', 'same'), entry('d', 'new')];
    expect(changedScripts(old, now).map((change) => change.name)).toEqual(['a', 'b', 'd']);
  });

  it('a receipt from before scripts were recorded: each script reads as added', () => {
    expect(changedScripts(undefined, [entry('a', 'tsc')])).toEqual([{ name: 'a', old: null, new: entry('a', 'tsc') }]);
    expect(changedScripts(undefined, undefined)).toEqual([]);
  });
});

describe('plainCommandWords: the scripts found without the shell parser are the ones it finds', () => {
  const scripts = { a: 'tsc', b: 'vitest run', pre: 'x', prea: 'y', posta: 'z', npm: 'n', c: 'c' };
  it.each([
    ['tsc --noEmit', [['tsc', '--noEmit']]],
    ['  vitest run && tsc -p tsconfig.build.json ', [['vitest', 'run'], ['tsc', '-p', 'tsconfig.build.json']]],
    ['eslint . | tee out.txt ; oxlint --deny-warnings || true', [['eslint', '.'], ['tee', 'out.txt'], ['oxlint', '--deny-warnings'], ['true']]],
    ['vitest\trun', [['vitest', 'run']]],
    ['NODE_ENV=test vitest', [['NODE_ENV=test', 'vitest']]],
    ['', []],
  ])('splits the plain line %j', (text, words) => {
    expect(plainCommandWords(text)).toEqual(words);
  });

  it.each([
    'npm run a',
    'tsc && pnpm b',
    './node_modules/.bin/run-s a',
    'concurrently npm:a',
    'echo "$X"',
    'tsc 2>&1',
    'a &&',
    '&& a',
    'a && && b',
    'if true',
    'for x',
    'echo `npm run a`',
    "echo 'quoted'",
    'ls *.ts',
    'a\nb',
    'a; b',
  ])('leaves %j to the parser', (text) => {
    expect(() => plainCommandWords(text)).toThrow(ShellParserNeeded);
  });

  it('needsShellParser: only where a body the check runs is not plain', () => {
    expect(needsShellParser(['npm', 'run', 'a'], { a: 'tsc && vitest', b: 'npm run a' })).toBe(false);
    expect(needsShellParser(['npm', 'run', 'b'], { a: 'tsc', b: 'npm run a' })).toBe(true);
    expect(needsShellParser(['npm', 'run', 'a'], { a: 'tsc', prea: 'echo "x"' })).toBe(true);
    expect(needsShellParser(['tsc', '--noEmit'], { a: 'npm run b' })).toBe(false);
    expect(needsShellParser(['npm', 'run', 'a'], null)).toBe(false);
  });

  it('on random lines, the plain split, where it answers, finds exactly the scripts the parser finds', () => {
    const seed = testSeed(import.meta.url, 17);
    const next = mulberry32(seed.value);
    const pieces = ['tsc', 'a', 'b', 'npm', 'run', 'pnpm', 'run-s', 'npm:a', '&&', '||', ';', '|', '&', '$X', '"a b"', "'npm run a'", 'if', 'then', 'fi', '2>&1', '--flag', 'x=1', '*', '(', ')', '#', 'pre', 'time', '\t', '\n'];
    let plain = 0;
    for (let round = 0; round < 5000; round += 1) {
      const length = 1 + Math.floor(next() * 6);
      const line = Array.from({ length }, () => pieces[Math.floor(next() * pieces.length)]!).join(next() < 0.8 ? ' ' : '');
      const argvs = [['sh', '-c', line], ['npm', 'run', 'c']];
      const local = { ...scripts, c: line };
      for (const argv of argvs) {
        let fast: string[] | null = null;
        try {
          fast = [...scriptsRun(argv, local, plainCommandWords)].sort();
          plain += 1;
        } catch (error) {
          expect(error, seed.replay()).toBeInstanceOf(ShellParserNeeded);
        }
        if (fast !== null) expect(fast, `${seed.replay()}: ${JSON.stringify(line)}`).toEqual([...scriptsRun(argv, local, commandWords)].sort());
      }
    }
    // Both sides of the split were exercised.
    expect(plain, seed.replay()).toBeGreaterThan(500);
    expect(plain, seed.replay()).toBeLessThan(10_000);
  });
});

describe('contextEnvPatterns: the tool prefixes of every script a check runs', () => {
  const scripts = { test: 'npm run unit && npm run types', unit: 'vitest run', types: 'tsc --noEmit', lint: 'eslint .' };
  const patterns = (check: Parameters<typeof definitionOf>[0]) => contextEnvPatterns(definitionOf(check, 'npm'), scripts, commandWords);

  it('a script check: its own body and the scripts it runs', () => {
    expect(patterns({ name: 'test', kind: 'test', script: 'test' })).toEqual(expect.arrayContaining(['VITEST_*', 'TSC_*']));
    expect(patterns({ name: 'test', kind: 'test', script: 'test' })).not.toContain('ESLINT_*');
    expect(patterns({ name: 'lint', kind: 'lint', script: 'lint' })).toEqual(expect.arrayContaining(['ESLINT_*']));
    expect(patterns({ name: 'lint', kind: 'lint', script: 'lint' })).not.toContain('VITEST_*');
  });

  it('a command check that runs a script, and one that names its tool itself', () => {
    expect(patterns({ name: 'c', kind: 'test', command: ['npm', 'run', 'unit'] })).toContain('VITEST_*');
    expect(patterns({ name: 'c', kind: 'test', command: ['vitest', 'run'], env: ['MY_FLAG'] })).toEqual(expect.arrayContaining(['VITEST_*', 'MY_FLAG']));
  });

  it('the defaults always, and a missing script adds nothing', () => {
    expect(patterns({ name: 'gone', kind: 'test', script: 'gone' })).toEqual(['CI', 'NODE_ENV', 'NODE_OPTIONS', 'NODE_PATH', 'TZ', 'bun_*', 'corepack_*', 'npm_config_*', 'pnpm_*', 'yarn_*']);
  });

  it("a package manager's settings are recorded in any case, as the package managers read them, and only when set", () => {
    const names = (env: NodeJS.ProcessEnv) => envNames(patterns({ name: 'gone', kind: 'test', script: 'gone' }), env);
    const defaults = ['CI', 'NODE_ENV', 'NODE_OPTIONS', 'NODE_PATH', 'TZ'];
    expect(names({ HOME: '/h', NPM_TOKEN: 'x', npm_lifecycle_event: 'test', YARNISH: '1' })).toEqual(defaults);
    const env = { npm_config_workspace: 'a', NPM_CONFIG_SCRIPT_SHELL: 'sh', Npm_Config_Ignore_Scripts: 'true', PNPM_HOME: '/p', pnpm_config_filter: 'a', YARN_IGNORE_SCRIPTS: '1', BUN_CONFIG_VERBOSE_FETCH: '1', bun_options: '--smol', COREPACK_ENABLE_STRICT: '0' };
    expect(names(env)).toEqual([...defaults, ...Object.keys(env)].sort());
  });
});
