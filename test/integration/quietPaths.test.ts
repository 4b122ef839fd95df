import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QuietPaths } from '../../src/observer/quietPaths.js';
import { tempProject, type TempProject } from '../helpers/project.js';

// In-process; learn() asks a real git what it ignores.
describe('quiet paths', () => {
  let project: TempProject;
  beforeAll(() => {
    project = tempProject('quiet-paths', {
      '.gitignore': 'dist/\n*.log\nnode_modules/\ngen/\ncoverage/\n',
      'src/a.ts': 'a',
      'dist/a.js': 'a',
      'dist/deep/b.js': 'b',
      'debug.log': 'x',
      'node_modules/x/index.js': 'x',
      'gen/input.json': '{}',
      'coverage/index.html': '',
    });
  });
  afterAll(() => project.remove());

  it.each([
    ['.gitignore', true],
    ['src/.gitignore', true],
    ['.git/index', true],
    ['.git/info/exclude', true],
    ['.git/config', true],
    ['.gitignores', false],
    ['src/gitignore', false],
    ['.git/HEAD', false],
    ['.git/objects/ab/cdef', false],
  ])('%s decides what is ignored or tracked: %s', (path, decides) => {
    expect(new QuietPaths(project.root).decidesRules(path)).toBe(decides);
  });

  it("keeps git's object store quiet before anything is learned, but not the files that decide the rules", () => {
    const quiet = new QuietPaths(project.root);
    expect(quiet.quiet('.git/objects/ab/cdef')).toBe(true);
    expect(quiet.quiet('.git/HEAD')).toBe(true);
    expect(quiet.quiet('.git/index')).toBe(false);
    expect(quiet.quiet('.git/config')).toBe(false);
    expect(quiet.quiet('dist/a.js')).toBe(false);
  });

  it('keeps a directory that holds only ignored files loud: git lists it as ignored, but a new file in it may be a source', () => {
    const p = tempProject('quiet-only-ignored', { '.gitignore': '*.txt\nbuild/\n', 'src/a.js': 'a', 'src/deep/f.txt': 't', 'build/x/o.js': 'o' });
    try {
      const quiet = new QuietPaths(p.root);
      quiet.learn(['src'], []);
      expect(quiet.quiet('src/deep/f.txt')).toBe(true);
      expect(quiet.quiet('src/deep')).toBe(false);
      expect(quiet.quiet('src/deep/n859.ts')).toBe(false);
      // A directory git ignores itself: nothing below it can be a source.
      expect(quiet.quiet('build/x/new.js')).toBe(true);
    } finally {
      p.remove();
    }
  });

  it('learns what git ignores; an ignored path holding an input or in an install root stays loud', () => {
    const quiet = new QuietPaths(project.root);
    quiet.learn(['src', 'gen'], ['node_modules/**']);
    expect(quiet.quiet('dist')).toBe(true);
    expect(quiet.quiet('dist/a.js')).toBe(true);
    expect(quiet.quiet('dist/deep/b.js')).toBe(true);
    expect(quiet.quiet('debug.log')).toBe(true);
    expect(quiet.quiet('coverage/index.html')).toBe(true);
    expect(quiet.quiet('src/a.ts')).toBe(false);
    expect(quiet.quiet('gen/input.json')).toBe(false);
    expect(quiet.quiet('node_modules/x/index.js')).toBe(false);
    expect(quiet.quiet('distant/a.js')).toBe(false);
    // Until a rule file changes: then nothing is known to be quiet until the next scan.
    quiet.forget();
    expect(quiet.quiet('dist/a.js')).toBe(false);
    expect(quiet.quiet('.git/objects/ab/cdef')).toBe(true);
  });

  it('learns nothing when an install glob covers the whole root', () => {
    const quiet = new QuietPaths(project.root);
    quiet.learn(['src'], ['**', '!src/**']);
    expect(quiet.quiet('dist/a.js')).toBe(false);
  });

  it('learns nothing, and never quiets .git/, outside a git work tree', () => {
    const plain = mkdtempSync(join(tmpdir(), 'vouch-quiet-plain-'));
    try {
      mkdirSync(join(plain, 'dist'));
      writeFileSync(join(plain, 'dist', 'a.js'), 'a');
      writeFileSync(join(plain, '.gitignore'), 'dist/\n');
      const quiet = new QuietPaths(plain);
      quiet.learn([], []);
      expect(quiet.quiet('dist/a.js')).toBe(false);
      expect(quiet.quiet('.git/objects/x')).toBe(false);
    } finally {
      rmSync(plain, { recursive: true, force: true });
    }
  });
});
