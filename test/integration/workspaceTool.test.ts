import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isClaimError } from '../../src/core/claimError.js';
import { refuseUnsupportedTools } from '../../src/prove/toolSupport.js';
import { installedPackage, installedVersion, packageChanged, packageEntry } from '../../src/prove/workspaceTool.js';
import { tempProject, type TempProject } from '../helpers/project.js';

/** A package folder that says only its name and version, and exports one entry. */
function writePackage(dir: string, version: string | null, name = 'tool'): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), version === null ? '{ not json' : JSON.stringify({ name, version, exports: { '.': './index.js', './node': './node.js' } }));
  writeFileSync(join(dir, 'index.js'), '');
  writeFileSync(join(dir, 'node.js'), '');
}

let project: TempProject | undefined;
afterEach(() => project?.remove());

describe('installedPackage', () => {
  it('follows a retargeted node_modules link every time, where require.resolve would keep the first target', () => {
    project = tempProject('workspace-tool', { 'package.json': '{}' }, { git: false });
    const root = project.root;
    writePackage(join(root, 'copies', 'one'), '1.0.0');
    writePackage(join(root, 'copies', 'two'), '2.0.0');
    mkdirSync(join(root, 'node_modules'));
    const link = join(root, 'node_modules', 'tool');
    symlinkSync(join(root, 'copies', 'one'), link);
    const first = installedPackage(root, 'tool')!;
    expect(first).toEqual({ name: 'tool', version: '1.0.0', root: join(root, 'copies', 'one') });
    expect(packageEntry(first, 'node')).toBe(join(root, 'copies', 'one', 'node.js'));
    expect(packageChanged(root, first)).toBe(false);

    rmSync(link);
    symlinkSync(join(root, 'copies', 'two'), link);
    expect(installedVersion(root, 'tool')).toBe('2.0.0');
    expect(packageChanged(root, first)).toBe(true);
    expect(packageEntry(installedPackage(root, 'tool')!, 'node')).toBe(join(root, 'copies', 'two', 'node.js'));

    rmSync(link);
    expect(packageChanged(root, first)).toBe(true);
  });

  it('looks in the folders above, as Node does, and takes a package.json without a version, or one that does not parse, for none', () => {
    project = tempProject('workspace-tool-up', { 'package.json': '{}' }, { git: false });
    const inner = join(project.root, 'packages', 'app');
    mkdirSync(inner, { recursive: true });
    writePackage(join(project.root, 'node_modules', 'tool'), '3.1.0');
    expect(installedVersion(inner, 'tool')).toBe('3.1.0');
    writePackage(join(inner, 'node_modules', 'tool'), null);
    expect(installedPackage(inner, 'tool')).toBeNull();
    expect(installedPackage(inner, 'absent-tool-name')).toBeNull();
  });

  it('finds the main entry of a package without exports, which cannot refer to itself by name', () => {
    project = tempProject('workspace-tool-main', { 'package.json': '{}' }, { git: false });
    const dir = join(project.root, 'node_modules', 'old-tool');
    mkdirSync(join(dir, 'lib'), { recursive: true });
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'old-tool', version: '8.0.0', main: 'lib/api.js' }));
    writeFileSync(join(dir, 'lib', 'api.js'), '');
    expect(packageEntry(installedPackage(project.root, 'old-tool')!, '.')).toBe(join(dir, 'lib', 'api.js'));
  });
});

describe('refuseUnsupportedTools', () => {
  const refusal = (root: string): string | null => {
    try {
      refuseUnsupportedTools(root);
      return null;
    } catch (error) {
      if (!isClaimError(error)) throw error;
      expect(error).toMatchObject({ origin: 'workspace', code: 'unsupported' });
      return error.message;
    }
  };

  it('refuses a Vitest before 3.2, naming the version found and the one needed, and lets 3.2, 4 and none pass', () => {
    project = tempProject('workspace-tool-vitest', { 'package.json': '{}' }, { git: false });
    const dir = join(project.root, 'node_modules', 'vitest');
    const cases: [string, string | null][] = [
      ['3.0.1', '[workspace] unsupported: vitest 3.0.1; vouch needs vitest ≥ 3.2'],
      ['3.1.4', '[workspace] unsupported: vitest 3.1.4; vouch needs vitest ≥ 3.2'],
      ['2.1.9', '[workspace] unsupported: vitest 2.1.9; vouch needs vitest ≥ 3.2'],
      ['0.34.6', '[workspace] unsupported: vitest 0.34.6; vouch needs vitest ≥ 3.2'],
      ['latest\u001b[2J', '[workspace] unsupported: vitest "latest\\u001b[2J"; vouch needs vitest ≥ 3.2'],
      ['3.2.0', null],
      ['3.2.4', null],
      ['4.1.12', null],
      ['5.0.0-beta.1', null],
    ];
    for (const [version, expected] of cases) {
      rmSync(dir, { recursive: true, force: true });
      writePackage(dir, version, 'vitest');
      expect(refusal(project.root), version).toBe(expected);
    }
    rmSync(dir, { recursive: true, force: true });
    expect(refusal(project.root)).toBeNull();
  });
});
