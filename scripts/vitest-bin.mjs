// The dev dependency `vitest3` (an npm alias of vitest 3, for testing claims against the
// Vitest many projects still use) declares the same bin name as vitest 4, and npm links
// whichever it links last into node_modules/.bin/vitest. The suite runs on vitest 4:
// `prepare` (run by every local npm install and npm ci, never by an install of vouch as a
// dependency) points the bin back at it.
import { existsSync, lstatSync, readlinkSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';

const bin = join('node_modules', '.bin', 'vitest');
const target = join('..', 'vitest', 'vitest.mjs');
// Dev dependencies left out (or vitest not installed yet): nothing to point at.
if (!existsSync(join('node_modules', 'vitest', 'vitest.mjs'))) process.exit(0);
let current = null;
try {
  current = lstatSync(bin).isSymbolicLink() ? readlinkSync(bin) : '';
} catch {
  // no bin yet: made below
}
if (current !== target) {
  rmSync(bin, { force: true });
  symlinkSync(target, bin);
  console.log(`node_modules/.bin/vitest -> ${target}`);
}
