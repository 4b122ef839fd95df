import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newestFile, staleDist } from '../setup/freshDist.js';

// The staleness rule of the e2e and integration global setup, on a scratch tree with set mtimes.
let root: string;
const at = (path: string, seconds: number) => {
  const abs = join(root, path);
  mkdirSync(dirname(abs), { recursive: true });
  writeFileSync(abs, '');
  utimesSync(abs, seconds, seconds);
};

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'vouch-fresh-dist-'));
  at('src/core/a.ts', 1_000);
  at('src/cli/deep/b.ts', 1_100);
  at('package.json', 900);
  at('tsconfig.json', 900);
  at('docs/new.md', 5_000);
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('dist staleness', () => {
  it('finds the newest build input, deep in src/', () => {
    expect(newestFile(root, ['src', 'package.json', 'missing.json'])).toEqual({ path: join('src', 'cli', 'deep', 'b.ts'), mtimeMs: 1_100_000 });
  });

  it('is fresh when dist/bin/main.js is at least as new as every input; files outside the inputs do not count', () => {
    at('dist/bin/main.js', 1_100);
    expect(staleDist(root)).toBeNull();
  });

  it('is stale when a source is newer, naming it', () => {
    at('dist/bin/main.js', 1_050);
    expect(staleDist(root)).toBe(`${join('src', 'cli', 'deep', 'b.ts')} is newer than ${join('dist', 'bin', 'main.js')}`);
  });

  it.each(['package.json', 'rolldown.config.mjs', 'tsconfig.build.json', 'tsconfig.types.json'])('is stale when %s is newer', (input) => {
    at('dist/bin/main.js', 2_000);
    at(input, 2_001);
    expect(staleDist(root)).toBe(`${input} is newer than ${join('dist', 'bin', 'main.js')}`);
  });

  it('is stale when there is no build', () => {
    expect(staleDist(root)).toBe(`${join('dist', 'bin', 'main.js')} does not exist`);
  });
});
