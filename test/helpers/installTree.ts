import { linkSync, mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { configText } from './answers.js';
import { tempProject, type TempProject } from './project.js';

/** A check over the sources and two install roots. */
export const INSTALL_CHECK = { name: 'check', kind: 'custom', command: ['node', 'check.js'], installed: ['node_modules/**', 'packages/a/node_modules/**'] };

/** An install tree with what trips walks up: odd names, links, hard links, sort-order traps, a pruned cache, two roots. */
export function hostileInstallTree(name: string): TempProject {
  const p = tempProject(name, {
    'vouch.config.json': configText([INSTALL_CHECK]),
    '.gitignore': 'node_modules/\n',
    'package.json': '{ "name": "fx", "version": "1.0.0", "private": true }\n',
    'check.js': 'process.exit(0);\n',
    'src/a.js': 'export const a = 1;\n',
    'node_modules/.package-lock.json': '{}\n',
    'node_modules/dep/package.json': '{ "name": "dep" }\n',
    'node_modules/dep/index.js': 'module.exports = 42;\n',
    'node_modules/dep/lib/deep/er/file.js': 'deep\n',
    'node_modules/dep/name with spaces.js': 'spaces\n',
    'node_modules/dep/k:v%20.js': 'colon\n',
    'node_modules/dep/new\nline.js': 'newline\n',
    // "a-b" < "a/" < "a0" in byte order, not in walk order.
    'node_modules/a-b/x.js': 'ab\n',
    'node_modules/a/b.js': 'a/b\n',
    'node_modules/a0.js': 'a0\n',
    'node_modules/.vite/vitest/results.json': '{}\n',
    'node_modules/hard/one.js': 'hard\n',
    'packages/a/package.json': '{ "name": "a" }\n',
    'packages/a/node_modules/x/index.js': 'x\n',
  });
  mkdirSync(join(p.root, 'node_modules/empty'));
  mkdirSync(join(p.root, 'node_modules/.bin'));
  symlinkSync('../dep/index.js', join(p.root, 'node_modules/.bin/tool'));
  symlinkSync('missing.js', join(p.root, 'node_modules/dep/dangling.js'));
  linkSync(join(p.root, 'node_modules/hard/one.js'), join(p.root, 'node_modules/hard/two.js'));
  return p;
}
