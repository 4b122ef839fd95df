import { describe, expect, it } from 'vitest';
import { includeDotNames, keepsName, namesConfigLikeProgram, nodeOptionsRunCode, typescriptNames } from '../../src/core/listingNames.js';

describe('listing names: what tsc can act on', () => {
  it('without a filter, every name is kept', () => {
    for (const name of ['.claude', '.mcp.json', 'README.md', 'a.ts']) expect(keepsName(undefined, name, 'file')).toBe(true);
  });

  it('drops dot names of any kind and files without a program extension; keeps directories, links and program files', () => {
    expect(keepsName('typescript', '.claude', 'directory')).toBe(false);
    expect(keepsName('typescript', '.mcp.json', 'file')).toBe(false);
    expect(keepsName('typescript', '.hidden.ts', 'link')).toBe(false);
    expect(keepsName('typescript', 'README.md', 'file')).toBe(false);
    expect(keepsName('typescript', 'CLAUDE.md', 'file')).toBe(false);
    expect(keepsName('typescript', 'docs', 'directory')).toBe(true);
    expect(keepsName('typescript', 'README.md', 'link')).toBe(true);
    expect(keepsName('typescript', 'README.md', 'other')).toBe(true);
    for (const name of ['a.ts', 'a.d.ts', 'a.tsx', 'a.mts', 'a.d.cts', 'a.js', 'a.jsx', 'a.cjs', 'a.mjs', 'data.json', 'UPPER.TS']) expect(keepsName('typescript', name, 'file'), name).toBe(true);
  });

  it('an include pattern spells out the dot names its components can match: a component starting with a dot, or * then a dot', () => {
    const config = (include: unknown) => JSON.stringify({ compilerOptions: {}, include });
    const cases: Array<[string, string[]]> = [
      ['.storybook/**/*', ['.storybook']],
      ['src/.gen', ['.gen']],
      ['*.config', ['.config']],
      ['src/**/*.ts', ['.ts']],
      ['src/**/*.d.ts', ['.d.ts']],
      ['/abs/.hidden/**', ['.hidden']],
      ['a\\.b', ['.b']],
      ['src', []],
      ['packages/*/src', []],
      ['**/*', []],
      ['*', []],
      ['?x', []],
      ['./src', []],
      ['../shared/**/*', []],
      ['a*.ts', []],
      ['${configDir}/src', []],
    ];
    for (const [spec, names] of cases) expect(includeDotNames(config([spec])), spec).toEqual(names);
    expect(includeDotNames(config(['src/**/*.ts', '.storybook/*.tsx']))).toEqual(['.ts', '.storybook', '.tsx']);
  });

  it('a component that can match many dot names (a wildcard after its first character) makes any dot name possible', () => {
    const config = (include: unknown) => JSON.stringify({ include });
    for (const spec of ['src/*.*', '**.ts', '*?x', '.gen*', 'src/.*', '*.?s']) expect(includeDotNames(config(['src', spec])), spec).toBeNull();
  });

  it('no include, or a text without one, matches none; an unreadable one or a malformed include may match any', () => {
    expect(includeDotNames('{"compilerOptions": {"strict": true}}')).toEqual([]);
    expect(includeDotNames('{ "name": "dep", "version": "1.0.0" }')).toEqual([]);
    expect(includeDotNames('// comment\n{ "include": ["src",], }')).toEqual([]);
    expect(includeDotNames('\ufeff{ "include": [".x"] }')).toEqual(['.x']);
    expect(includeDotNames('{ "include": "src" }')).toBeNull();
    expect(includeDotNames('{ "include": [1] }')).toBeNull();
    expect(includeDotNames('{ include: ["src"] }')).toBeNull();
    expect(includeDotNames('{ "incl\\u0075de": [".x/**"] }')).toEqual(['.x']);
    expect(includeDotNames('{ "incl\\u0075de": ["src"] }')).toEqual([]);
  });

  it('a listing bound to what tsc can include, plus dot names spelled out, keeps exactly those dot names, whatever their case', () => {
    expect(typescriptNames([])).toBe('typescript');
    expect(typescriptNames(['.TS', '.storybook', '.ts'])).toBe('typescript+.storybook/.ts');
    const names = typescriptNames(['.ts', '.storybook']);
    expect(keepsName(names, '.ts', 'file')).toBe(true);
    expect(keepsName(names, '.TS', 'file')).toBe(true);
    expect(keepsName(names, '.storybook', 'directory')).toBe(true);
    expect(keepsName(names, '.claude', 'directory')).toBe(false);
    expect(keepsName(names, '.mcp.json', 'file')).toBe(false);
    expect(keepsName(names, '.tsx', 'file')).toBe(false);
    // A dot name spelled out is still a file tsc must be able to take: .storybook as a file has no program extension.
    expect(keepsName(names, '.storybook', 'file')).toBe(false);
    expect(keepsName(names, 'README.md', 'file')).toBe(false);
    expect(keepsName(names, 'a.ts', 'file')).toBe(true);
  });

  it('a config extending or referencing a config named like a program file names one; an unreadable one may', () => {
    for (const text of [
      '{ "extends": "./base.ts" }',
      '{ "extends": "../configs/base.CJS" }',
      '{ "extends": "@org/config/tsconfig.mts" }',
      '{ "extends": ["./a.json", "./b.jsx"] }',
      '{ "references": [{ "path": "./app.ts" }] }',
      '{ "references": [{ "prepend": true }] }',
      '{ "references": "./app" }',
      '{ "extends": 1 }',
      '{ "ext\\u0065nds": "./base.ts" }',
      '{ "extends": "./base.ts", }',
      '{ extends: "./base.json" }',
    ]) expect(namesConfigLikeProgram(text), text).toBe(true);
    for (const text of [
      '{ "compilerOptions": { "strict": true }, "include": ["src"] }',
      '{ "extends": "./base.json" }',
      '{ "extends": "./base" }',
      '{ "extends": ["@tsconfig/node20/tsconfig.json", "@tsconfig/strictest"] }',
      '{ "references": [{ "path": "./packages/a" }, { "path": "./tsconfig.node.json" }] }',
      '// comment\n{ "extends": "./base.json", }',
      '{ "name": "dep", "version": "1.0.0" }',
    ]) expect(namesConfigLikeProgram(text), text).toBe(false);
  });

  it('NODE_OPTIONS that loads code before the script, in any spelling; other options do not', () => {
    for (const options of ['--require ./hook.cjs', '-r ./hook.cjs', '-r./hook.cjs', '--require=/etc/hook.js', '--import=data:text/javascript,void 0', '--max-old-space-size=4096 --import tsx', '--loader ts-node/esm', '--experimental-loader=x.mjs', '--experimental_loader x.mjs', '"--require" x']) {
      expect(nodeOptionsRunCode(options), options).toBe(true);
    }
    for (const options of [undefined, '', '--max-old-space-size=4096', '--enable-source-maps --no-warnings', '-C development', '--stack-trace-limit=50']) expect(nodeOptionsRunCode(options), String(options)).toBe(false);
  });
});
