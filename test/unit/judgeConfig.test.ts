import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Claim } from '../../src/core/claim.js';
import { judgeConfigFiles, readJudgeConfig } from '../../src/prove/judgeConfig.js';

// What the receipt token's config@ field covers, on real files: which ones, that a change moves it, and that nothing outside the workspace is read.

let scratch: string;
let workspace: string;
beforeEach(() => {
  scratch = mkdtempSync(join(tmpdir(), 'vouch-judge-config-'));
  workspace = join(scratch, 'ws');
  mkdirSync(join(workspace, 'src', 'deep'), { recursive: true });
  writeFileSync(join(workspace, 'package.json'), JSON.stringify({ name: 'ws', version: '1.0.0', type: 'module', scripts: { lint: 'oxlint' } }));
  writeFileSync(join(workspace, 'tsconfig.json'), '{}\n');
});
afterEach(() => rmSync(scratch, { recursive: true, force: true }));

const claim: Claim = {
  project: 'tsconfig.json',
  case: { drafts: [{ path: 'src/deep/a.ts', text: 'a' }], test: { path: 'test/a.test.ts', text: 't' } },
  control: { drafts: [{ path: 'src/deep/a.ts', text: 'b' }], stage: 'lint', reason: 'r' },
};

const digest = () => readJudgeConfig(workspace, claim).digest;
const write = (path: string, text: string) => writeFileSync(join(workspace, path), text);

describe('the judge config files', () => {
  it('are the linters\' configs at the root and above every claim file, the runners\' at the root, and the tsconfigs', () => {
    const files = judgeConfigFiles({ ...claim, project: 'src/tsconfig.app.json' });
    for (const file of ['.oxlintrc.json', 'src/.oxlintrc.json', 'src/deep/eslint.config.js', 'test/biome.json', 'biome.jsonc', 'vitest.config.ts', 'vite.config.mts', 'jest.config.js', 'jest.config.json', 'babel.config.js', '.babelrc', '.swcrc', 'vitest.workspace.ts', 'tsconfig.json', 'src/tsconfig.app.json', 'package.json']) {
      expect(files, file).toContain(file);
    }
    // Runner configs are looked for at the root only; nothing is looked for above the workspace.
    expect(files).not.toContain('src/vitest.config.ts');
    expect(files.some((file) => file.startsWith('..'))).toBe(false);
  });
});

describe('the judge config digest', () => {
  it('is the same while nothing changes, and names the files that exist', () => {
    write('.oxlintrc.json', '{}');
    const first = readJudgeConfig(workspace, claim);
    expect(readJudgeConfig(workspace, claim)).toEqual(first);
    expect(first.digest).toMatch(/^[0-9a-f]{32}$/);
    expect(first.files).toEqual(['.oxlintrc.json', 'package.json', 'tsconfig.json']);
  });

  it.each([
    ['a lint rule turned on', '.oxlintrc.json', '{ "rules": { "no-debugger": "error" } }'],
    ['a nested eslint config above a draft', 'src/eslint.config.js', 'export default [];'],
    ['a biome config', 'biome.json', '{}'],
    ['a vitest config', 'vitest.config.ts', 'export default {};'],
    ['a vite config', 'vite.config.ts', 'export default {};'],
    ['a jest config', 'jest.config.js', 'module.exports = {};'],
    ['a babel config', 'babel.config.js', 'module.exports = {};'],
    ['an swc config', '.swcrc', '{}'],
    ['the tsconfig', 'tsconfig.json', '{ "include": ["src"] }'],
  ])('moves with %s', (_label, path, text) => {
    write('.oxlintrc.json', '{}');
    const before = digest();
    write(path, text);
    expect(digest()).not.toBe(before);
  });

  it('moves with the judge members of package.json (type, scripts), not with its version', () => {
    const before = digest();
    write('package.json', JSON.stringify({ name: 'ws', version: '2.0.0', type: 'module', scripts: { lint: 'oxlint' } }));
    expect(digest()).toBe(before);
    write('package.json', JSON.stringify({ name: 'ws', version: '2.0.0', type: 'module', scripts: { lint: 'oxlint --deny-warnings' } }));
    expect(digest()).not.toBe(before);
  });

  it('does not move with a config below the claim\'s folders, which no judge of this claim reads', () => {
    const before = digest();
    mkdirSync(join(workspace, 'other'));
    write('other/.oxlintrc.json', '{ "rules": { "no-debugger": "error" } }');
    expect(digest()).toBe(before);
  });

  it('is the same in another checkout of the same files', () => {
    write('.oxlintrc.json', '{}');
    const copy = join(scratch, 'copy');
    execFileSync('cp', ['-R', workspace, copy]);
    expect(readJudgeConfig(copy, claim).digest).toBe(digest());
  });

  it('never reads through a link that leads outside the workspace: it records where the link leads, and the content outside does not move it', () => {
    const outside = join(scratch, 'outside.json');
    writeFileSync(outside, '{ "secret": 1 }');
    symlinkSync(outside, join(workspace, '.oxlintrc.json'));
    const linked = readJudgeConfig(workspace, claim);
    expect(linked.files).toContain('.oxlintrc.json');
    writeFileSync(outside, '{ "secret": 2 }');
    expect(digest()).toBe(linked.digest);
    // Pointing elsewhere is a change.
    rmSync(join(workspace, '.oxlintrc.json'));
    symlinkSync(join(scratch, 'elsewhere.json'), join(workspace, '.oxlintrc.json'));
    expect(digest()).not.toBe(linked.digest);
  });

  it('follows a link that stays inside the workspace, by content', () => {
    write('shared.json', '{}');
    symlinkSync(join(workspace, 'shared.json'), join(workspace, '.oxlintrc.json'));
    const before = digest();
    write('shared.json', '{ "rules": { "eqeqeq": "error" } }');
    expect(digest()).not.toBe(before);
  });

  it('does not block on a FIFO or fail on a directory planted under a config\'s name', () => {
    execFileSync('mkfifo', [join(workspace, 'vitest.config.ts')]);
    mkdirSync(join(workspace, 'eslint.config.js'));
    const read = readJudgeConfig(workspace, claim);
    expect(read.files).toEqual(expect.arrayContaining(['vitest.config.ts', 'eslint.config.js']));
  });
});
