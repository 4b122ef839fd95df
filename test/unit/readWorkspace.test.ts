import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { dependencyClosure, dependencyOrder, dependentClosure, packageInputs, splitCheckName } from '../../src/core/workspace.js';
import { readWorkspace } from '../../src/exec/readWorkspace.js';

/* The workspace reader on real directories, and the pure graph over what it reads. */

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

function tree(files: Record<string, unknown>): string {
  const root = mkdtempSync(join(tmpdir(), 'vouch-ws-'));
  roots.push(root);
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), typeof content === 'string' ? content : JSON.stringify(content));
  }
  return root;
}

const pkg = (name: string, extra: object = {}) => ({ name, version: '1.0.0', ...extra });

describe('readWorkspace', () => {
  it('reads pnpm-workspace.yaml members, their scripts and their workspace dependencies', () => {
    const root = tree({
      'package.json': { name: 'root', devDependencies: { '@s/c': 'workspace:*' } },
      'pnpm-workspace.yaml': "packages:\n  - 'packages/*'\n  - '!packages/skipped'\n",
      'packages/a/package.json': pkg('@s/a', { scripts: { test: 'vitest run', bad: 1 } }),
      'packages/b/package.json': pkg('@s/b', { dependencies: { '@s/a': 'workspace:^', lodash: '^4' } }),
      'packages/c/package.json': pkg('@s/c', { devDependencies: { '@s/b': '*' }, peerDependencies: { root: '*' } }),
      'packages/d/package.json': pkg('@s/d', { dependencies: { aliased: 'workspace:@s/a@*', other: 'npm:@s/c@^1.0.0' } }),
      'packages/skipped/package.json': pkg('@s/skipped'),
      'packages/nojson/readme.md': 'no package here',
      'packages/a/node_modules/x/package.json': pkg('x'),
    });
    const workspace = readWorkspace(root)!;
    expect(workspace.packages.map((member) => [member.name, member.dir, member.dependsOn])).toEqual([
      ['@s/a', 'packages/a', []],
      ['@s/b', 'packages/b', ['@s/a']],
      ['@s/c', 'packages/c', ['@s/b']],
      ['@s/d', 'packages/d', ['@s/a', '@s/c']],
    ]);
    expect(workspace.packages[0]!.scripts).toEqual({ test: 'vitest run' });
    expect(workspace.rootName).toBe('root');
    expect(workspace.rootEdges).toEqual({ dependsOn: ['@s/c'], dependedOnBy: ['@s/c'] });
    expect(dependencyClosure(workspace, '@s/c').map((member) => member.name)).toEqual(['@s/a', '@s/b', '@s/c']);
    expect(dependentClosure(workspace, '@s/b').map((member) => member.name)).toEqual(['@s/b', '@s/c', '@s/d']);
    expect(dependencyOrder(workspace).map((member) => member.name)).toEqual(['@s/a', '@s/b', '@s/c', '@s/d']);
    expect(packageInputs(workspace, 'packages/b')).toEqual(['packages/a/**', 'packages/b/**', '*', '!*.md', '!*.markdown', '!*.txt', '!LICENSE*', '!LICENCE*', '!.mcp.json']);
    expect(packageInputs(workspace, 'packages/none')).toBeNull();
  });

  it('reads npm and yarn "workspaces", array or { packages }; a member without a name is named by its directory', () => {
    for (const workspaces of [['apps/*', 'libs/**'], { packages: ['apps/*', 'libs/**'] }]) {
      const root = tree({ 'package.json': { workspaces }, 'apps/web/package.json': {}, 'libs/deep/x/package.json': pkg('x') });
      expect(readWorkspace(root)!.packages.map((member) => member.name)).toEqual(['apps/web', 'x']);
    }
  });

  it('never follows a link, and never takes a dot-directory or node_modules as a member', () => {
    const outside = tree({ 'evil/package.json': pkg('evil') });
    const root = tree({ 'package.json': { workspaces: ['packages/*', '.hidden/*'] }, 'packages/real/package.json': pkg('real'), '.hidden/h/package.json': pkg('h') });
    symlinkSync(join(outside, 'evil'), join(root, 'packages/linked'));
    symlinkSync(outside, join(root, 'packages/dirlink'));
    expect(readWorkspace(root)!.packages.map((member) => member.name)).toEqual(['real']);
  });

  it('is null without workspace globs, and refuses two members of one name', () => {
    expect(readWorkspace(tree({ 'package.json': pkg('solo') }))).toBeNull();
    const root = tree({ 'package.json': { workspaces: ['p/*'] }, 'p/a/package.json': pkg('same'), 'p/b/package.json': pkg('same') });
    expect(() => readWorkspace(root)).toThrow(/the name "same" is used by two workspace packages/);
  });

  it('refuses a member package.json that is not JSON, naming it', () => {
    const root = tree({ 'package.json': { workspaces: ['p/*'] }, 'p/a/package.json': '{ nope' });
    expect(() => readWorkspace(root)).toThrow(/p\/a\/package.json is not valid JSON/);
  });
});

describe('check names', () => {
  it('splits PACKAGE#SCRIPT at the last "#", and leaves a root name alone', () => {
    expect(splitCheckName('@scope/a#test')).toEqual({ package: '@scope/a', script: 'test' });
    expect(splitCheckName('a#b#c')).toEqual({ package: 'a#b', script: 'c' });
    expect(splitCheckName('typecheck')).toBeNull();
    expect(splitCheckName('#test')).toBeNull();
    expect(splitCheckName('a#')).toBeNull();
  });
});

describe('the walk', () => {
  it('enters only directories that can lead to a member', () => {
    const files: Record<string, unknown> = { 'package.json': { workspaces: ['packages/*'] }, 'packages/a/package.json': pkg('a') };
    // More directories than the reader's bound (lowered to 50 here), where no glob leads: they are never entered.
    for (let i = 0; i < 60; i++) files[`docs/d${i}/x`] = '';
    const root = tree(files);
    expect(readWorkspace(root, { dirs: 50 })!.packages.map((member) => member.name)).toEqual(['a']);
    for (let i = 0; i < 60; i++) files[`packages/d${i}/x`] = '';
    expect(() => readWorkspace(tree(files), { dirs: 50 })).toThrow(/reach more than 50 directories; narrow them/);
  });
});

describe('package manager detection in a workspace', () => {
  it('takes pnpm-workspace.yaml for pnpm before any lockfile exists, and a lockfile over it', async () => {
    const { detectPackageManager } = await import('../../src/exec/detectPackageManager.js');
    const root = tree({ 'package.json': pkg('r'), 'pnpm-workspace.yaml': 'packages:\n  - p/*\n' });
    expect(detectPackageManager(root)).toMatchObject({ name: 'pnpm', source: 'workspace-file', lockfile: null });
    writeFileSync(join(root, 'package-lock.json'), '{}');
    expect(detectPackageManager(root)).toMatchObject({ name: 'npm', source: 'lockfile' });
    expect(detectPackageManager(tree({ 'package.json': pkg('r') }))).toMatchObject({ name: 'npm', source: 'default' });
  });
});
