import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, realpathSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join, posix, relative, sep } from 'node:path';
import { canonicalJson } from '../core/canonicalJson.js';
import type { Claim, JudgeConfig } from '../core/claim.js';
import { sha256 } from '../core/digest.js';
import { isInside } from '../core/pathInside.js';
import { BIOME_CONFIGS, ESLINT_CONFIGS, OXLINT_CONFIGS, ancestorDirs } from './lintIgnore.js';

const SCRIPT_EXTENSIONS = ['.ts', '.mts', '.cts', '.js', '.mjs', '.cjs'];

/**
 * The test runner's config names, at the root. `vite.config.*` is in even
 * beside a `vitest.config.*`, which often merges it (mergeConfig), and
 * `vitest.workspace.*` is where Vitest 3 declares projects
 * (https://vitest.dev/config/, https://jestjs.io/docs/configuration).
 * Under Jest the transformer's own config judges too: Babel's project-wide
 * and file-relative configs for babel-jest
 * (https://babeljs.io/docs/config-files), `.swcrc` for @swc/jest
 * (https://swc.rs/docs/configuration/swcrc); ts-jest reads the tsconfig,
 * which is in already.
 */
export const RUNNER_CONFIGS = [
  ...['vitest.config', 'vite.config', 'vitest.workspace'].flatMap((name) => SCRIPT_EXTENSIONS.map((ext) => name + ext)),
  'vitest.workspace.json',
  ...[...SCRIPT_EXTENSIONS, '.json'].map((ext) => `jest.config${ext}`),
  ...[...SCRIPT_EXTENSIONS, '.json'].map((ext) => `babel.config${ext}`),
  ...['', '.json', '.js', '.cjs', '.mjs', '.cts'].map((ext) => `.babelrc${ext}`),
  '.swcrc',
];

/**
 * The members of package.json a judge reads: `type` (each file's module
 * format), `imports` (what `#x` resolves to), `scripts` (which linter, and
 * whether warnings fail), `jest` (Jest's config when it has no file) and
 * `babel` (babel-jest's, likewise).
 * Its version and dependencies are not judge configuration; the tools'
 * versions are in the token already.
 */
const MANIFEST_MEMBERS = ['type', 'imports', 'scripts', 'jest', 'babel'];

const CHUNK = 1 << 16;
/** A package.json larger than this is digested whole rather than parsed for its judge members. */
const TEXT_LIMIT = 8 << 20;

/**
 * The workspace-relative files that configure the judges of a claim: the
 * linters' configs at the root and in every folder above a draft or the test
 * (nested configs apply by directory), the test runner's at the root, the
 * tsconfig the claim names and the root one (Vite reads it as it transforms),
 * and package.json, of which only its judge members count (MANIFEST_MEMBERS).
 */
export function judgeConfigFiles(claim: Claim): string[] {
  const paths = [claim.case.test, ...claim.case.drafts, ...claim.control.drafts].map((draft) => draft.path);
  const files = new Set<string>();
  for (const dir of new Set(['', ...paths.flatMap(ancestorDirs)])) {
    for (const name of [...OXLINT_CONFIGS, ...ESLINT_CONFIGS, ...BIOME_CONFIGS]) files.add(dir === '' ? name : `${dir}/${name}`);
  }
  for (const name of RUNNER_CONFIGS) files.add(name);
  files.add(claim.project);
  files.add('tsconfig.json');
  files.add('package.json');
  return [...files].sort();
}

/**
 * What the judges were configured with, for the receipt token: the digest of
 * every judge config file (judgeConfigFiles) as it is now, and the ones that
 * exist. The same claim judged under another lint rule or test setup gets
 * another token. Paths are workspace-relative, so two checkouts of one
 * commit digest the same.
 *
 * A repository is untrusted, so nothing is read outside it: a config that is,
 * or runs through, a link leading out of the workspace is recorded by where
 * it leads (relative to the workspace), never by its content. A FIFO or a
 * device under a config's name is recorded as such and not read, since a read
 * could block forever.
 */
export function readJudgeConfig(workspace: string, claim: Claim): JudgeConfig {
  const realRoot = realpathSync(workspace);
  const entries: Record<string, string> = {};
  for (const file of judgeConfigFiles(claim)) {
    const state = file === 'package.json' ? undefined : fileState(workspace, realRoot, file);
    if (state !== undefined) entries[file] = state;
  }
  const manifest = manifestState(workspace, realRoot);
  if (manifest !== undefined) entries['package.json'] = manifest;
  return { digest: sha256(canonicalJson(entries)).slice(0, 32), files: Object.keys(entries).sort() };
}

/** A config file's state as a short string, or undefined when there is none. */
function fileState(workspace: string, realRoot: string, file: string): string | undefined {
  const read = readInside(workspace, realRoot, file, false);
  return read === undefined || typeof read === 'string' ? read : `sha256:${read.hash}`;
}

/** package.json's judge members, canonical; its hash when it does not parse as an object. */
function manifestState(workspace: string, realRoot: string): string | undefined {
  const read = readInside(workspace, realRoot, 'package.json', true);
  if (read === undefined || typeof read === 'string') return read;
  let manifest: unknown;
  try {
    manifest = read.text === undefined ? undefined : JSON.parse(read.text);
  } catch {
    manifest = undefined;
  }
  if (manifest === null || typeof manifest !== 'object' || Array.isArray(manifest)) return `sha256:${read.hash}`;
  const members = Object.fromEntries(MANIFEST_MEMBERS.filter((key) => key in manifest).map((key) => [key, (manifest as Record<string, unknown>)[key]]));
  return `members:${sha256(canonicalJson(members))}`;
}

interface Read {
  hash: string;
  /** With `keepText`, for a file no larger than TEXT_LIMIT. */
  text?: string;
}

/**
 * The hash (and, asked, the text) of `file` (workspace-relative), read only
 * when its real path is inside the workspace's; a string saying what it is
 * instead (a link leading out, a directory, a FIFO); or undefined when
 * nothing is there. Read a chunk at a time, so a huge file costs time, not memory.
 */
function readInside(workspace: string, realRoot: string, file: string, keepText: boolean): Read | string | undefined {
  const path = join(workspace, ...file.split('/'));
  try {
    lstatSync(path);
  } catch {
    // Absent, or under a component that is not a directory: nothing there configures a judge.
    return undefined;
  }
  let real: string;
  try {
    real = realpathSync(path);
  } catch (error) {
    return `unresolved:${(error as NodeJS.ErrnoException).code ?? 'error'}`;
  }
  if (!isInside(realRoot, real)) return `outside:${relative(realRoot, real).split(sep).join(posix.sep)}`;
  let fd: number;
  try {
    // The real path has no link left to follow; O_NOFOLLOW refuses one swapped in since, and
    // O_NONBLOCK keeps a FIFO planted under a config's name from blocking the open.
    fd = openSync(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    return `unreadable:${(error as NodeJS.ErrnoException).code ?? 'error'}`;
  }
  try {
    const stat = fstatSync(fd);
    if (stat.isDirectory()) return 'directory';
    if (!stat.isFile()) return 'not a regular file';
    const hash = createHash('sha256');
    const kept: Buffer[] = [];
    let size = 0;
    const chunk = Buffer.allocUnsafe(CHUNK);
    for (;;) {
      const count = readSync(fd, chunk, 0, CHUNK, null);
      if (count === 0) break;
      hash.update(chunk.subarray(0, count));
      size += count;
      if (keepText && size <= TEXT_LIMIT) kept.push(Buffer.from(chunk.subarray(0, count)));
    }
    const read: Read = { hash: hash.digest('hex') };
    if (keepText && size <= TEXT_LIMIT) read.text = Buffer.concat(kept).toString('utf8');
    return read;
  } catch (error) {
    return `unreadable:${(error as NodeJS.ErrnoException).code ?? 'error'}`;
  } finally {
    closeSync(fd);
  }
}
