import { ClaimError } from '../core/claimError.js';
import { pickRunner, type RunnerName } from './testRunner.js';
import { installedPackage } from './workspaceTool.js';

/**
 * The oldest release of each workspace tool a stage can judge with, as
 * [major, minor]; found by running the runtime stage's own tests on each
 * release line (docs/claims.md, "Runners"). Vitest 2 has no
 * `runTestSpecifications` or `TestModule` API. Vitest 3.0 and 3.1 pass the
 * single-project tests, but read `test.workspace`, not `test.projects`
 * (https://vitest.dev/guide/projects, new in 3.2), so in a multi-project
 * workspace the overlay is not added to each project and a test runs in the
 * wrong one.
 */
const LOWEST: ReadonlyArray<readonly [name: RunnerName, major: number, minor: number]> = [
  ['vitest', 3, 2],
  // Jest 29 is the oldest the Jest stage's tests run on; ts-jest 29 and @swc/jest need it too.
  ['jest', 29, 0],
];

/**
 * Refuses, before any stage runs, a workspace whose tool is older than the
 * stage can work with: one line that names the version found and the one
 * needed, instead of a verdict full of instrument issues. A tool that is not
 * installed at all is left to its stage, which names the fix.
 */
export function refuseUnsupportedTools(workspace: string): void {
  // Only the runner that will judge: a Jest left in node_modules does not block a workspace tested with Vitest.
  const runner = pickRunner(workspace);
  for (const [name, major, minor] of LOWEST) {
    if (name !== runner) continue;
    const pkg = installedPackage(workspace, name);
    if (pkg === null) continue;
    const found = /^v?(\d+)\.(\d+)\./.exec(pkg.version);
    const [foundMajor, foundMinor] = found === null ? [-1, -1] : [Number(found[1]), Number(found[2])];
    if (foundMajor > major || (foundMajor === major && foundMinor >= minor)) continue;
    const shown = /^[\w.+-]{1,64}$/.test(pkg.version) ? pkg.version : JSON.stringify(pkg.version.slice(0, 64));
    throw new ClaimError('workspace', 'unsupported', `${name} ${shown}; vouch needs ${name} ≥ ${major}.${minor}`);
  }
}
