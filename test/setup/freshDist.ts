import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { REPO } from '../helpers/project.js';

/**
 * Vitest global setup for the projects that run the built CLI (e2e) or import
 * dist/ (integration): an edit to src/ followed by `npx vitest run one.test.ts`
 * must not silently test the previous build.
 * https://vitest.dev/config/globalsetup
 */

/** What `npm run build` reads: a change to any of them makes dist/ out of date. */
export const BUILD_INPUTS = ['src', 'rolldown.config.mjs', 'tsconfig.json', 'tsconfig.build.json', 'tsconfig.types.json', 'package.json'];

/** The last file the build writes (rolldown runs last), so its mtime is when dist/ was finished. */
export const BUILT = join('dist', 'bin', 'main.js');

export const NO_REBUILD = 'VOUCH_TEST_NO_REBUILD';

export interface Newest {
  path: string;
  mtimeMs: number;
}

/** The most recently modified file under `paths` (files or directories), relative to `root`. */
export function newestFile(root: string, paths: readonly string[]): Newest | null {
  let newest: Newest | null = null;
  const visit = (abs: string) => {
    const stats = statSync(abs, { throwIfNoEntry: false });
    if (!stats) return;
    if (stats.isDirectory()) {
      for (const name of readdirSync(abs)) visit(join(abs, name));
    } else if (newest === null || stats.mtimeMs > newest.mtimeMs) {
      newest = { path: relative(root, abs), mtimeMs: stats.mtimeMs };
    }
  };
  for (const path of paths) visit(join(root, path));
  return newest;
}

/** Why dist/ must be rebuilt, or null when it is at least as new as every build input. */
export function staleDist(root: string): string | null {
  const built = statSync(join(root, BUILT), { throwIfNoEntry: false });
  if (!built) return `${BUILT} does not exist`;
  const newest = newestFile(root, BUILD_INPUTS);
  if (newest && newest.mtimeMs > built.mtimeMs) return `${newest.path} is newer than ${BUILT}`;
  return null;
}

export default function setup(): void {
  const stale = staleDist(REPO);
  if (stale === null) return;
  if (process.env[NO_REBUILD] === '1') {
    throw new Error(`dist/ is out of date (${stale}) and ${NO_REBUILD}=1 forbids rebuilding it here: run \`npm run build\` first`);
  }
  console.log(`[vouch tests] dist/ is out of date (${stale}): running npm run build`);
  const build = spawnSync('npm', ['run', 'build'], { cwd: REPO, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (build.status !== 0) {
    throw new Error(`npm run build failed (exit ${build.status ?? build.signal}); the tests would run an old or missing dist/:\n${build.stdout}\n${build.stderr}`);
  }
}
