import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fanOutOf, type FanOutTarget } from '../../src/agents/fanOut.js';
import { dirMatches, dirPattern, nameMatches } from '../../src/agents/fanout/patterns.js';
import { parseJsonc } from '../../src/core/jsonc.js';
import { readNx, readTurbo } from '../../src/exec/readTaskRunners.js';
import { CORPUS, TARGETS, WORKSPACE, type FanOutCase } from '../fixtures/fanout-corpus.js';

/*
 * Every corpus command through fanOutOf (pure), and the turbo.json / nx.json
 * readers on real files in temporary directories.
 */

function label(entry: FanOutCase): string {
  return `${entry.target ?? 'base'}${entry.cwd ? ` in ${entry.cwd}` : ''}: ${JSON.stringify(entry.command)}`;
}

function targetOf(entry: FanOutCase): FanOutTarget {
  return { ...TARGETS[entry.target ?? 'base'], cwdDir: entry.cwd ?? '' };
}

describe('the fan-out corpus', () => {
  it('has at least 170 cases over every tool, none twice', () => {
    expect(CORPUS.length).toBeGreaterThanOrEqual(170);
    const keys = CORPUS.map(label);
    expect(new Set(keys).size).toBe(keys.length);
    for (const tool of ['pnpm', 'npm', 'yarn', 'bun', 'turbo', 'nx']) {
      const cases = CORPUS.filter((entry) => entry.command.split(' ').includes(tool));
      expect(cases.filter((entry) => entry.expected?.kind === 'packages').length, tool).toBeGreaterThanOrEqual(3);
      expect(cases.filter((entry) => entry.expected?.kind === 'unresolved').length, tool).toBeGreaterThanOrEqual(3);
    }
  });

  it.each(CORPUS.map((entry) => [label(entry), entry] as const))('%s', (_name, entry) => {
    const argv = entry.command === '' ? [] : entry.command.split(' ');
    const answer = fanOutOf(argv, targetOf(entry));
    if (entry.expected === null || entry.expected.kind === 'packages') {
      expect(answer).toEqual(entry.expected);
    } else {
      expect(answer?.kind, JSON.stringify(answer)).toBe('unresolved');
      expect(answer && 'why' in answer ? answer.why : '').not.toBe('');
    }
  });

  it('lists packages in dependency order, whatever order the command names them in', () => {
    const target: FanOutTarget = { ...TARGETS.base, cwdDir: '' };
    expect(fanOutOf(['pnpm', '--filter', '@demo/c', '--filter', '@demo/b', '--filter', '@demo/a', 'test'], target)).toEqual({
      kind: 'packages',
      script: 'test',
      packages: ['@demo/a', '@demo/b', '@demo/c'],
    });
  });

  it('reads names with regular-expression characters literally, or not at all', () => {
    const workspace = {
      globs: ['packages/*'],
      packages: [
        { name: 'a.b', dir: 'packages/ab', scripts: { test: 'x' }, dependsOn: [] },
        { name: 'aXb', dir: 'packages/axb', scripts: { test: 'x' }, dependsOn: [] },
        { name: 'c$', dir: 'packages/c', scripts: { test: 'x' }, dependsOn: [] },
      ],
    };
    const target: FanOutTarget = { workspace, cwdDir: '', turbo: null, nx: null, root: { name: 'r', scripts: {} } };
    expect(fanOutOf(['pnpm', '--filter', 'a.b', 'test'], target)).toEqual({ kind: 'packages', script: 'test', packages: ['a.b'] });
    expect(fanOutOf(['pnpm', '--filter', 'a.*', 'test'], target)).toEqual({ kind: 'packages', script: 'test', packages: ['a.b'] });
    expect(fanOutOf(['pnpm', '--filter', 'c$', 'test'], target)).toEqual({ kind: 'packages', script: 'test', packages: ['c$'] });
    expect(fanOutOf(['pnpm', '--filter', 'a+b', 'test'], target)?.kind).toBe('unresolved');
  });

  it('does not guess whether ** may match no directory at all', () => {
    const workspace = {
      globs: ['packages', 'packages/*'],
      packages: [
        { name: 'top', dir: 'packages', scripts: { test: 'x' }, dependsOn: [] },
        { name: 'a', dir: 'packages/a', scripts: { test: 'x' }, dependsOn: [] },
      ],
    };
    const target: FanOutTarget = { workspace, cwdDir: '', turbo: null, nx: null, root: { name: 'r', scripts: {} } };
    expect(fanOutOf(['pnpm', '--filter', './packages/**', 'test'], target)?.kind).toBe('unresolved');
    expect(fanOutOf(['pnpm', '--filter', './packages/*', 'test'], target)).toEqual({ kind: 'packages', script: 'test', packages: ['a'] });
    expect(fanOutOf(['pnpm', '--filter', './packages', 'test'], target)).toEqual({ kind: 'packages', script: 'test', packages: ['top'] });
  });
});

/** A small deterministic generator (mulberry32), so a failing sequence can be replayed. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('fanOutOf on arbitrary words', () => {
  const WORDS = [
    'pnpm', 'npm', 'yarn', 'bun', 'turbo', 'nx', 'npx', 'exec', 'run', 'run-many', 'test', 'lint', 'clean', 'build', 'workspace', 'workspaces', 'foreach',
    '-r', '--recursive', '--filter', '-F', '--filter=@demo/*', '-w', '--workspace', '--workspaces', '-ws', '--if-present', '-A', '--all', '--include', '--exclude',
    '-t', '-p', '--projects=@demo/a', '--', '--force', '@demo/a', '@demo/b', '@demo/c', 'tools', '...@demo/a', '@demo/c^...', './packages/*', '{./packages/a}',
    '!@demo/b', '*', '**', '.', '..', '', '@demo/a:test', 'demo-root', '[main]', '{', '}', '\\', '*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b',
  ];
  it('never throws, and every list it gives is exact in shape: scripts present, no repeats, dependency order', () => {
    const next = random(18);
    const order = ['@demo/a', '@demo/b', '@demo/c', 'tools'];
    for (let round = 0; round < 4000; round++) {
      const argv = Array.from({ length: 1 + Math.floor(next() * 7) }, () => WORDS[Math.floor(next() * WORDS.length)]!);
      const names = Object.keys(TARGETS) as Array<keyof typeof TARGETS>;
      const target: FanOutTarget = { ...TARGETS[names[Math.floor(next() * names.length)]!], cwdDir: ['', 'packages/a', 'tools', 'x'][Math.floor(next() * 4)]! };
      const answer = fanOutOf(argv, target);
      if (answer === null || answer.kind === 'unresolved') continue;
      expect(answer.packages.length, argv.join(' ')).toBeGreaterThan(0);
      expect(new Set(answer.packages).size).toBe(answer.packages.length);
      for (const name of answer.packages) expect(WORKSPACE.packages.find((pkg) => pkg.name === name)?.scripts[answer.script], `${argv.join(' ')}: ${name}`).toBeDefined();
      expect([...answer.packages].sort((x, y) => order.indexOf(x) - order.indexOf(y))).toEqual(answer.packages);
    }
  });

  it('stays fast on a long wildcard pattern and on a workspace of 2,000 packages', () => {
    const packages = Array.from({ length: 2000 }, (_, index) => ({
      name: `@big/p${index}${'x'.repeat(150)}`,
      dir: `packages/p${index}`,
      scripts: { test: 'x' },
      dependsOn: index === 0 ? [] : [`@big/p${index - 1}${'x'.repeat(150)}`],
    }));
    const target: FanOutTarget = { workspace: { globs: ['packages/*'], packages }, cwdDir: '', turbo: null, nx: null, root: { name: 'r', scripts: {} } };
    const started = performance.now();
    expect(fanOutOf(['pnpm', '--filter', `${'*x'.repeat(60)}y`, 'test'], target)?.kind).toBe('unresolved');
    expect(fanOutOf(['pnpm', '--filter', `...${packages[0]!.name}`, 'test'], target)).toMatchObject({ kind: 'packages' });
    expect(fanOutOf(['pnpm', '--filter', `${packages[1999]!.name}...`, 'test'], target)).toMatchObject({ kind: 'packages' });
    expect(fanOutOf(['pnpm', '--filter', './packages/**', 'test'], target)).toMatchObject({ kind: 'packages' });
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});

describe('selectors', () => {
  it('matches names with * only, and says when * crossing "/" decides', () => {
    expect(nameMatches('@demo/*', '@demo/a', 'segment')).toBe(true);
    expect(nameMatches('*a', '@demo/a', 'crosses')).toBe(true);
    expect(nameMatches('*a', '@demo/a', 'segment')).toBe(false);
    expect(nameMatches('*a', '@demo/a', 'unknown')).toBeNull();
    expect(nameMatches('@demo/?', '@demo/a', 'crosses')).toBeNull();
    expect(nameMatches('@(a|b)', 'a', 'crosses')).toBeNull();
  });

  it('reads directory patterns inside the root only', () => {
    expect(dirPattern('./packages/*')).toEqual(['packages', '*']);
    expect(dirPattern('packages/a/')).toEqual(['packages', 'a']);
    expect(dirPattern('./../x')).toBeNull();
    expect(dirPattern('packages/../..')).toBeNull();
    expect(dirPattern('/abs')).toBeNull();
    expect(dirPattern('.')).toBeNull();
    expect(dirPattern('packages/a*')).toBeNull();
    expect(dirMatches(['packages', '*'], 'packages/a')).toBe(true);
    expect(dirMatches(['packages', '*'], 'packages/a/b')).toBe(false);
    expect(dirMatches(['packages', '**'], 'packages/a/b')).toBe(true);
    expect(dirMatches(['packages', '**'], 'packages')).toBeNull();
  });
});

describe('parseJsonc', () => {
  it('takes comments and trailing commas out, and nothing inside strings', () => {
    expect(parseJsonc('{ // c\n "a": "x // y", /* z */ "b": [1, 2,], }')).toEqual({ a: 'x // y', b: [1, 2] });
    expect(parseJsonc('{"a": "quote \\" , }"}')).toEqual({ a: 'quote " , }' });
    expect(parseJsonc('{"a": 1,/* c */}')).toEqual({ a: 1 });
    expect(parseJsonc('{"a": ')).toBeNull();
    expect(parseJsonc('{"a": "open')).toBeNull();
    expect(parseJsonc('/* open')).toBeNull();
  });
});

describe('readTurbo and readNx', () => {
  const dirs: string[] = [];
  const project = (files: Record<string, string>) => {
    const root = mkdtempSync(join(tmpdir(), 'vouch-fanout-'));
    dirs.push(root);
    for (const [rel, text] of Object.entries(files)) {
      mkdirSync(join(root, rel, '..'), { recursive: true });
      writeFileSync(join(root, rel), text);
    }
    return root;
  };
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('is null without the file', () => {
    const root = project({ 'package.json': '{}' });
    expect(readTurbo(root, WORKSPACE.packages)).toBeNull();
    expect(readNx(root, WORKSPACE.packages)).toBeNull();
  });

  it('reads turbo.json tasks, with, JSONC, and the packages that configure theirs', () => {
    const root = project({
      'turbo.json': `{
        // the pipeline
        "tasks": {
          "test": {},
          "build": { "dependsOn": ["^build"], },
          "e2e": { "with": ["serve"] },
          "@demo/c#test": { "cache": false },
          "//#lint": {},
        },
      }`,
      'packages/b/turbo.json': '{ "extends": ["//"] }',
      'packages/a/package.json': '{}',
    });
    expect(readTurbo(root, WORKSPACE.packages)).toEqual({
      tasks: {
        test: { dependsOn: [] },
        build: { dependsOn: ['^build'] },
        e2e: { dependsOn: ['serve'] },
        '@demo/c#test': { dependsOn: [] },
        '//#lint': { dependsOn: [] },
      },
      overridden: ['//', '@demo/b', '@demo/c'],
    });
  });

  it('reads turbo 1 "pipeline" and turbo.jsonc', () => {
    const root = project({ 'turbo.jsonc': '{ "pipeline": { "test": { "dependsOn": [] } } }' });
    expect(readTurbo(root)).toEqual({ tasks: { test: { dependsOn: [] } }, overridden: [] });
  });

  it('blocks everything on a malformed, oversized, linked or doubled turbo.json, and never throws', () => {
    const cases: Array<Record<string, string>> = [
      { 'turbo.json': '{ "tasks": ' },
      { 'turbo.json': '[]' },
      { 'turbo.json': '{ "tasks": [] }' },
      { 'turbo.json': '{ "tasks": { "test": { "dependsOn": "^build" } } }' },
      { 'turbo.json': '{ "tasks": { "test": 1 } }' },
      { 'turbo.json': '{}', 'turbo.jsonc': '{}' },
      { 'turbo.json': `{ "tasks": {}, "pad": "${'x'.repeat(1024 * 1024)}" }` },
    ];
    for (const files of cases) {
      const config = readTurbo(project(files));
      expect(config?.blocked, JSON.stringify(Object.keys(files))).toBeTruthy();
    }
    const linked = project({ 'elsewhere.json': '{ "tasks": { "test": {} } }' });
    symlinkSync(join(linked, 'elsewhere.json'), join(linked, 'turbo.json'));
    expect(readTurbo(linked)?.blocked).toMatch(/not a regular file/);
    const dir = project({});
    mkdirSync(join(dir, 'turbo.json'));
    expect(readTurbo(dir)?.blocked).toBeTruthy();
  });

  it('reads nx.json targetDefaults and the packages with project.json or package.json "nx"', () => {
    const root = project({
      'nx.json': '{ /* c */ "targetDefaults": { "build": { "dependsOn": ["^build", { "target": "gen", "projects": "self" }] }, "test": { "cache": true } } }',
      'packages/a/package.json': '{ "name": "@demo/a" }',
      'packages/b/package.json': '{ "name": "@demo/b", "nx": { "targets": {} } }',
      'packages/c/package.json': '{ "name": "@demo/c" }',
      'packages/c/project.json': '{}',
      'tools/package.json': '{ "name": "tools"',
    });
    const config = readNx(root, WORKSPACE.packages);
    expect(config?.blocked).toBeUndefined();
    expect(config?.tasks.test).toEqual({ dependsOn: [] });
    expect(config?.tasks.build?.dependsOn).toHaveLength(2);
    // tools' package.json does not parse: nx would not read it as vouch does, so it counts as configured otherwise.
    expect(config?.overridden).toEqual(['@demo/b', '@demo/c', 'tools']);
  });

  it('blocks nx on plugins, executor or glob defaults with dependsOn, legacy files, and a malformed nx.json', () => {
    const cases: Array<Record<string, string>> = [
      { 'nx.json': '{ "plugins": ["@nx/vite/plugin"] }' },
      { 'nx.json': '{ "targetDefaults": { "nx:run-script": { "dependsOn": ["^build"] } } }' },
      { 'nx.json': '{ "targetDefaults": { "test*": { "dependsOn": ["build"] } } }' },
      { 'nx.json': '{ "targetDependencies": {} }' },
      { 'nx.json': '{}', 'workspace.json': '{}' },
      { 'nx.json': '{ "targetDefaults": [] }' },
      { 'nx.json': 'not json' },
    ];
    for (const files of cases) expect(readNx(project(files))?.blocked, JSON.stringify(files)).toBeTruthy();
    expect(readNx(project({ 'nx.json': '{ "targetDefaults": { "nx:run-script": { "cache": true } } }' }))?.blocked).toBeUndefined();
    expect(readNx(project({ 'nx.json': '{ "targetDefaults": { "nx:run-script": { "options": {} } } }' }))?.blocked).toBeTruthy();
    expect(readNx(project({ 'nx.json': '{ "targetDefaults": { "test": { "executor": "@nx/jest:jest" } } }' }))?.tasks.test?.dependsOn).toEqual(['(its "executor")']);
    expect(readNx(project({ 'nx.json': '{}', 'project.json': '{}' }))?.overridden).toEqual(['//']);
  });

  it('resolves through what it read: a turbo dependsOn and an nx override make the command unresolved', () => {
    const root = project({
      'turbo.json': '{ "tasks": { "test": {}, "build": { "dependsOn": ["^build"] } } }',
      'nx.json': '{}',
      'packages/a/package.json': '{}',
      'packages/b/package.json': '{}',
      'packages/c/package.json': '{}',
      'packages/c/project.json': '{}',
      'tools/package.json': '{}',
    });
    const target: FanOutTarget = { workspace: WORKSPACE, cwdDir: '', turbo: readTurbo(root, WORKSPACE.packages), nx: readNx(root, WORKSPACE.packages), root: { name: 'r', scripts: {} } };
    expect(fanOutOf(['turbo', 'run', 'test'], target)).toEqual({ kind: 'packages', script: 'test', packages: ['@demo/a', '@demo/b', '@demo/c'] });
    expect(fanOutOf(['turbo', 'run', 'build'], target)?.kind).toBe('unresolved');
    expect(fanOutOf(['nx', 'run-many', '-t', 'test', '-p', '@demo/a'], target)).toEqual({ kind: 'packages', script: 'test', packages: ['@demo/a'] });
    expect(fanOutOf(['nx', 'test', '@demo/c'], target)?.kind).toBe('unresolved');
  });
});
