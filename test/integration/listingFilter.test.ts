import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CompilerProcess, PathFacts } from '../../src/core/runFacts.js';
import { listingFilterOf } from '../../src/fs/listingFilter.js';

/*
 * Which listings of a traced run are bound only to the names tsc can act on: real files for
 * the compiler's package, its link in node_modules/.bin and its configs; the processes as the
 * strace log parser reports them.
 */

let dir: string;

function write(path: string, text: string): string {
  const abs = join(dir, path);
  mkdirSync(join(abs, '..'), { recursive: true });
  writeFileSync(abs, text);
  return abs;
}

function typescriptPackage(version: string, name = 'typescript'): string {
  write('node_modules/typescript/package.json', JSON.stringify({ name, version }));
  const script = write('node_modules/typescript/bin/tsc', "#!/usr/bin/env node\nrequire('../lib/tsc.js')\n");
  return script;
}

function compiler(overrides: Partial<CompilerProcess> = {}): CompilerProcess {
  return {
    node: '/usr/bin/node',
    script: join(dir, 'node_modules/.bin/tsc'),
    firstRead: join(dir, 'node_modules/typescript/bin/tsc'),
    watch: false,
    programArgument: false,
    configs: [join(dir, 'node_modules/typescript/package.json'), join(dir, 'node_modules/typescript/bin/tsc'), join(dir, 'tsconfig.json')],
    ...overrides,
  };
}

const listed = (path: string, by: number[] | undefined, other = false): PathFacts => ({ path: join(dir, path), listed: 'before-write', ...(by ? { listedBy: by } : {}), ...(other ? { listedByOther: true as const } : {}) });

beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'vouch-listing-filter-')));
  typescriptPackage('5.9.3');
  mkdirSync(join(dir, 'node_modules/.bin'));
  symlinkSync('../typescript/bin/tsc', join(dir, 'node_modules/.bin/tsc'));
  write('tsconfig.json', JSON.stringify({ compilerOptions: { strict: true }, include: ['src'] }));
});

afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("listings bound to the names tsc can act on", () => {
  it('a plain tsc: its listings are filtered, and the configs it rests on are kept with their digests', () => {
    const filter = listingFilterOf([listed('', [0]), listed('src', [0]), { path: join(dir, 'src/a.ts'), read: 'before-write' }], [compiler()]);
    expect([...filter.names]).toEqual([
      [dir, 'typescript'],
      [join(dir, 'src'), 'typescript'],
    ]);
    const tsconfig = join(dir, 'tsconfig.json');
    expect(filter.configs.get(tsconfig)).toBe(createHash('sha256').update(JSON.stringify({ compilerOptions: { strict: true }, include: ['src'] })).digest('hex'));
  });

  it('a config whose include spells out dot names: the listings keep those names too', () => {
    write('tsconfig.json', '{ "include": ["src/**/*.ts", ".generated/**/*"] }');
    const extended = write('node_modules/base/tsconfig.json', '{ "include": ["*.config/**"] }');
    const filter = listingFilterOf([listed('', [0])], [compiler({ configs: [...compiler().configs, extended] })]);
    expect([...filter.names]).toEqual([[dir, 'typescript+.config/.generated/.ts']]);
  });

  it('a listing any other program made too, or another compiler that does not check out, keeps all names', () => {
    const filter = listingFilterOf([listed('', [0], true), listed('src', [0, 1]), listed('lib', [0])], [compiler(), compiler({ watch: true })]);
    expect([...filter.names.keys()]).toEqual([join(dir, 'lib')]);
  });

  it.each([
    ['watch mode', () => compiler({ watch: true })],
    ['a file read before the script (a preload)', () => compiler({ firstRead: write('pre.cjs', 'void 0;\n') })],
    ['nothing read at all', () => compiler({ firstRead: null })],
    ['a script that is no tsc of a typescript package', () => compiler({ script: write('tools/tsc', 'void 0;\n'), firstRead: join(dir, 'tools/tsc') })],
    ['a config whose include can match many dot names', () => (write('tsconfig.json', '{ "include": ["src", ".gen*/**/*"] }'), compiler())],
    ['a config extended from a package, whose include can match many dot names', () => compiler({ configs: [...compiler().configs, write('node_modules/base/tsconfig.json', '{ "include": ["src/*.*"] }')] })],
    ['a config gone since', () => compiler({ configs: [join(dir, 'gone.json')] })],
    ['a config that is not JSON', () => (write('tsconfig.json', '{ "include": [ '), compiler())],
    ['a file with a program extension on its command line (`-p tsconfig.app.ts`)', () => compiler({ programArgument: true })],
    ['a config extending one named like a program file (tsc reads it as JSON; the log parser took it for a source)', () => (write('tsconfig.json', '{ "extends": "./base.ts", "include": ["src"] }'), compiler())],
    ['a config extending several, one named like a program file', () => (write('tsconfig.json', '{ "extends": ["./base.json", "./app.Mjs"] }'), compiler())],
    ['a config referencing a project by a file named like a program file', () => (write('tsconfig.json', '{ "include": ["src"], "references": [{ "path": "./app.ts" }] }'), compiler())],
  ])('%s: no filter', (_, make) => {
    expect(listingFilterOf([listed('', [0])], [make()]).names.size).toBe(0);
  });

  it.each([
    ['TypeScript 7', '7.0.0', 'typescript'],
    ['TypeScript 2', '2.9.2', 'typescript'],
    ['a package named otherwise', '5.9.3', 'not-typescript'],
  ])('%s: no filter', (_, version, name) => {
    typescriptPackage(version, name);
    expect(listingFilterOf([listed('', [0])], [compiler()]).names.size).toBe(0);
  });

  it('NODE_OPTIONS that loads code into every process (a preload that reads no file, as a data: URL) leaves every listing whole', () => {
    expect(listingFilterOf([listed('', [0])], [compiler()], { NODE_OPTIONS: '--import=data:text/javascript,void 0' }).names.size).toBe(0);
    expect(listingFilterOf([listed('', [0])], [compiler()], { NODE_OPTIONS: '--max-old-space-size=4096' }).names.size).toBe(1);
  });

  it('a config extending or referencing configs named as configs still filters: their own reads are checked', () => {
    write('tsconfig.json', '{ "extends": ["./base.json", "@tsconfig/node20/tsconfig"], "references": [{ "path": "./packages/a" }, { "path": "./tsconfig.b.json" }] }');
    expect(listingFilterOf([listed('', [0])], [compiler()]).names.size).toBe(1);
  });

  it('the script reached through its link or named by its real path alike', () => {
    const real = join(dir, 'node_modules/typescript/bin/tsc');
    expect(listingFilterOf([listed('', [0])], [compiler({ script: real })]).names.size).toBe(1);
    expect(listingFilterOf([listed('', [0])], [compiler({ firstRead: join(dir, 'node_modules/.bin/tsc') })]).names.size).toBe(1);
  });
});
