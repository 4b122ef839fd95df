import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, type Dirent } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import ignore, { type Ignore } from 'ignore';
import { VouchError } from '../core/errors.js';
import { reason, type Reason } from '../core/reason.js';
import { startSourceList, type NativeSourceList, type PathStatsResult } from './nativeTreeScan.js';

export interface SourceListing {
  /** Root-relative, "/"-separated, unique, in no particular order. */
  paths: string[];
  problems: Reason[];
  via: 'git' | 'walk';
  /** The lstat of every path, when it was done natively along with the listing. */
  stats?: PendingPathStats;
}

/** Native lstats of paths: identities[i] and executable[i] belong to paths[i]. */
export interface PendingPathStats {
  paths: readonly string[];
  finish(): PathStatsResult;
}

export interface PendingSourceListing {
  finish(): SourceListing;
}

/**
 * Throws a TypeError on bytes that are not UTF-8, where Node's own decoding would replace them.
 * Keeps a leading byte order mark, which is part of a name like any other character.
 */
export const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * The project's source files: what git tracks plus untracked files it does not
 * ignore, or the same rules applied by a walk outside a git repository.
 * `excluded` are root-relative files or directories (the state dir, vouch's own
 * config) left out entirely. With the native scan, git runs and every path is
 * lstat'ed on other threads from here on, while the caller goes on.
 */
export function startSourceListing(root: string, excluded: readonly string[]): PendingSourceListing {
  const top = enclosingRepo(root);
  const git = top !== null && !ignoredBy(top, root);
  const native = git ? startSourceList(root) : null;
  let listing: SourceListing | undefined;
  return {
    finish() {
      if (listing === undefined) {
        listing = native ? nativeListing(root, native.finish()) : git ? listWithGit(root) : walkWithIgnoreRules(root);
        if (excluded.length > 0) {
          const names = excluded.map((item) => item.replace(/\/+$/, ''));
          listing.paths = listing.paths.filter((path) => !names.some((name) => path === name || path.startsWith(name + '/')));
        }
      }
      return listing;
    },
  };
}

function enclosingRepo(root: string): string | null {
  for (let dir = root; ; dir = dirname(dir)) {
    if (existsSync(join(dir, '.git'))) return dir;
    if (dirname(dir) === dir) return null;
  }
}

/**
 * A project inside a repository that ignores it (a scratch copy under an
 * ignored folder) would get no files at all from git; it is walked instead.
 */
function ignoredBy(top: string, root: string): boolean {
  if (top === root) return false;
  const rel = relative(top, root).split(sep).join('/');
  const check = spawnSync('git', ['check-ignore', '-q', '--', `${rel}/`], { cwd: top, env: { ...process.env, GIT_OPTIONAL_LOCKS: '0' } });
  return check.status === 0;
}

function listWithGit(root: string): SourceListing {
  const git = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: root,
    maxBuffer: 1 << 30,
    env: { ...process.env, GIT_OPTIONAL_LOCKS: '0' },
  });
  if (git.error || git.status !== 0) throw gitFailed(root, git.error ? git.error.message : git.stderr.toString().trim());
  const { written, problems } = parseGitListing(git.stdout);
  return { paths: uniquePaths(written), problems, via: 'git' };
}

function nativeListing(root: string, git: NativeSourceList): SourceListing {
  if (git.spawnError !== null || git.status !== 0) {
    const why = git.spawnError !== null ? `spawn git ${git.spawnError}` : git.signal !== null ? `git was killed by signal ${git.signal}` : git.stderr.trim();
    throw gitFailed(root, why);
  }
  const { written, problems } = parseGitListing(git.stdout);
  const { identities, executable } = git;
  return { paths: uniquePaths(written), problems, via: 'git', stats: { paths: written, finish: () => ({ identities, executable }) } };
}

function gitFailed(root: string, why: string): VouchError {
  return new VouchError(
    'git-failed',
    `cannot list the project's files with git in ${root}: ${why}. Fix the repository (for example "git config --global --add safe.directory ${root}"), or make sure git is on PATH.`,
  );
}

const NOT_A_PATH = '\0';

/**
 * git's NUL-terminated listing, one item per path written, in its order (a
 * conflicted file is written once per stage). A path that is not UTF-8 is a
 * problem, and its item NOT_A_PATH.
 */
function parseGitListing(out: Buffer): { written: string[]; problems: Reason[] } {
  try {
    // The common case, decoded in one call.
    const written = strictUtf8.decode(out).split('\0');
    written.pop();
    return { written, problems: [] };
  } catch {
    const written: string[] = [];
    const problems: Reason[] = [];
    let start = 0;
    for (let end = out.indexOf(0, start); end !== -1; start = end + 1, end = out.indexOf(0, start)) {
      const raw = out.subarray(start, end);
      try {
        written.push(strictUtf8.decode(raw));
      } catch {
        problems.push(notUtf8(raw.toString('utf8')));
        written.push(NOT_A_PATH);
      }
    }
    return { written, problems };
  }
}

function uniquePaths(written: readonly string[]): string[] {
  const paths = new Set(written);
  paths.delete(NOT_A_PATH);
  return [...paths];
}

export function notUtf8(lossy: string, where: 'inputs' | 'installed' = 'inputs'): Reason {
  return reason(
    'input-name-not-utf8',
    `${JSON.stringify(lossy)} has a name that is not valid UTF-8, so it cannot be recorded exactly; rename it, or exclude it with a "!" glob in the check's ${where === 'inputs' ? 'inputs' : '"installed" globs'}`,
  );
}

function walkWithIgnoreRules(root: string): SourceListing {
  const paths: string[] = [];
  const problems: Reason[] = [];
  const rules: { base: string; rules: Ignore }[] = [];
  const visit = (rel: string) => {
    const abs = rel === '' ? root : join(root, rel);
    const gitignore = join(abs, '.gitignore');
    let pushed = false;
    if (existsSync(gitignore)) {
      rules.push({ base: rel, rules: ignore().add(readFileSync(gitignore, 'utf8')) });
      pushed = true;
    }
    let entries: Dirent[];
    try {
      entries = readdirSync(abs, { withFileTypes: true });
    } catch (error) {
      problems.push(reason('input-unreadable', `cannot list ${rel || '.'}: ${(error as Error).message}`));
      entries = [];
    }
    for (const entry of entries) {
      if (entry.name === '.git') continue;
      const path = rel === '' ? entry.name : `${rel}/${entry.name}`;
      const isDir = entry.isDirectory();
      if (isIgnored(rules, path, isDir)) continue;
      if (entry.name.includes('\uFFFD')) {
        problems.push(notUtf8(path));
        continue;
      }
      if (isDir) visit(path);
      else paths.push(path);
    }
    if (pushed) rules.pop();
  };
  visit('');
  return { paths, problems, via: 'walk' };
}

function isIgnored(rules: { base: string; rules: Ignore }[], path: string, isDir: boolean): boolean {
  for (const { base, rules: set } of rules) {
    const rel = base === '' ? path : path.slice(base.length + 1);
    if (set.ignores(isDir ? `${rel}/` : rel)) return true;
  }
  return false;
}
