import { describe, expect, it } from 'vitest';
import { includeMatchesDotNames, keepsName, namesConfigLikeProgram, nodeOptionsRunCode } from '../../src/core/listingNames.js';

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

  it('an include pattern can match dot names when a component starts with a dot, or with * and then a dot or a wildcard', () => {
    const config = (include: unknown) => JSON.stringify({ compilerOptions: {}, include });
    for (const spec of ['.storybook/**/*', 'src/.gen', '*.config', 'src/*.*', '**.ts', '*?x', '/abs/.hidden/**', 'a\\.b']) expect(includeMatchesDotNames(config([spec])), spec).toBe(true);
    for (const spec of ['src', 'packages/*/src', '**/*', '*', '?x', './src', '../shared/**/*', 'a*.ts', '${configDir}/src']) expect(includeMatchesDotNames(config([spec])), spec).toBe(false);
  });

  it('no include, or a text without one, cannot; an unreadable one or a malformed include may', () => {
    expect(includeMatchesDotNames('{"compilerOptions": {"strict": true}}')).toBe(false);
    expect(includeMatchesDotNames('{ "name": "dep", "version": "1.0.0" }')).toBe(false);
    expect(includeMatchesDotNames('// comment\n{ "include": ["src",], }')).toBe(false);
    expect(includeMatchesDotNames('\ufeff{ "include": [".x"] }')).toBe(true);
    expect(includeMatchesDotNames('{ "include": "src" }')).toBe(true);
    expect(includeMatchesDotNames('{ "include": [1] }')).toBe(true);
    expect(includeMatchesDotNames('{ include: ["src"] }')).toBe(true);
    expect(includeMatchesDotNames('{ "incl\\u0075de": [".x/**"] }')).toBe(true);
    expect(includeMatchesDotNames('{ "incl\\u0075de": ["src"] }')).toBe(false);
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
