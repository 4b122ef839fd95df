import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO } from './project.js';

/**
 * The Vitest copies installed for the repo: its own (4.x) and the 3.2 one
 * under the `vitest3` alias. A workspace that links `node_modules/vitest` to
 * one of them resolves Vitest there and everything else (typescript, oxlint)
 * from the repo, as the bundled example does.
 */
export const VITEST_4 = join(REPO, 'node_modules', 'vitest');
export const VITEST_3 = join(REPO, 'node_modules', 'vitest3');

/** Points the workspace's `node_modules/vitest` at `target` (a Vitest copy), replacing what was there. */
export function linkVitest(root: string, target: string): void {
  const modules = join(root, 'node_modules');
  mkdirSync(modules, { recursive: true });
  rmSync(join(modules, 'vitest'), { recursive: true, force: true });
  symlinkSync(target, join(modules, 'vitest'));
}

/** A `node_modules/vitest` that only says its version: enough for a refusal that must come before anything loads it. */
export function fakeVitest(root: string, version: string): void {
  const dir = join(root, 'node_modules', 'vitest');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'vitest', version, exports: { './node': './node.js' } }));
  // Loading it would throw this, so a refusal that loaded it first would say so.
  writeFileSync(join(dir, 'node.js'), `throw new Error('the fake vitest ${version} was loaded');\n`);
}
