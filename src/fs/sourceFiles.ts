import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, type Dirent } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import ignore, { type Ignore } from 'ignore';
import { VouchError } from '../core/errors.js';
import { reason, type Reason } from '../core/reason.js';
import { startSourceList, type NativeSourceList, type PathStatsResult } from './nativeTreeScan.js';

export interface SourceListing {
  /** Root-relative, "/"-separated, unique; in byte order when git listed them. */
  paths: string[];
  problems: Reason[];
  via: 'git' | 'walk';
  /** The lstat of every path, when it was done natively along with the listing. */
  stats?: PendingPathStats;
  /** Every path joined by NUL, and perhaps more (the excluded): for a quick "is X in any path". */
  text: string;
}

/** Native lstats of a listing's paths: identities[i] and executable[i] belong to paths[i]. */
export interface PendingPathStats {
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
 * config) left out entirely. One written with a trailing "/" is a state dir:
 * git listing anything in it is a problem (stateDirInGit). With the native scan, git runs and every path is
 * lstat'ed on other threads from here on, while the caller goes on.
 */
export function startSourceListing(root: string, excluded: readonly string[]): PendingSourceListing {
  const top = enclosingRepo(root);
  const git = top !== null && !ignoredBy(top, root);
  const native = git ? startSourceList(root) : null;
  let listing: SourceListing | undefined;
  return {
    finish() {
      listing ??= native ? nativeListing(root, native.finish(), excluded) : git ? listWithGit(root, excluded) : walkWithIgnoreRules(root, excluded);
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

function listWithGit(root: string, excluded: readonly string[]): SourceListing {
  const git = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: root,
    maxBuffer: 1 << 30,
    env: { ...process.env, GIT_OPTIONAL_LOCKS: '0' },
  });
  if (git.error || git.status !== 0) throw gitFailed(root, git.error ? git.error.message : git.stderr.toString().trim());
  const { written, problems, text } = parseGitListing(git.stdout);
  const kept = keptPaths(written, excluded);
  return { paths: kept.paths, problems: withStateDirProblem(problems, kept.inStateDir), via: 'git', text };
}

function nativeListing(root: string, git: NativeSourceList, excluded: readonly string[]): SourceListing {
  if (git.spawnError !== null || git.status !== 0) {
    const why = git.spawnError !== null ? `spawn git ${git.spawnError}` : git.signal !== null ? `git was killed by signal ${git.signal}` : git.stderr.trim();
    throw gitFailed(root, why);
  }
  const { written, problems, text } = parseGitListing(git.stdout);
  const { paths, positions, inStateDir } = keptPaths(written, excluded);
  let { identities, executable } = git;
  if (positions !== null) {
    identities = positions.map((position) => git.identities[position] ?? null);
    executable = Uint8Array.from(positions, (position) => git.executable[position] ?? 0);
  }
  return { paths, problems: withStateDirProblem(problems, inStateDir), via: 'git', stats: { finish: () => ({ identities, executable }) }, text };
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
function parseGitListing(out: Buffer): { written: string[]; problems: Reason[]; text: string } {
  try {
    // The common case, decoded in one call.
    const text = strictUtf8.decode(out);
    const written = text.split('\0');
    written.pop();
    return { written, problems: [], text };
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
    return { written, problems, text: written.join('\0') };
  }
}

/**
 * The paths to keep, in the order written: each once, none excluded (`excluded` are files or
 * directories). positions[i] is where paths[i] was written, or positions is null when every
 * path was kept in place: git's usual listing, ascending and so unique, keeps the same array.
 * inStateDir: the paths written in an excluded state dir (one given with a trailing "/").
 */
function keptPaths(written: string[], excluded: readonly string[]): { paths: string[]; positions: number[] | null; inStateDir: StateDirPaths | null } {
  const names = excluded.map((item) => item.replace(/\/+$/, ''));
  const prefixes = names.map((name) => name + '/');
  const stateDirs = excluded.map((item) => item.endsWith('/'));
  let inStateDir: StateDirPaths | null = null;
  const isExcluded = (path: string) => {
    for (let index = 0; index < names.length; index++) {
      if (path === names[index] || path.startsWith(prefixes[index]!)) {
        if (stateDirs[index]) {
          inStateDir ??= { stateDir: names[index]!, paths: new Set() };
          inStateDir.paths.add(path);
        }
        return true;
      }
    }
    return false;
  };
  // git lists paths in byte order, each once but for a conflicted file's stages: ascending means unique.
  let ascending = true;
  let inPlace = true;
  for (let index = 0; index < written.length; index++) {
    const path = written[index]!;
    if (index > 0 && !(written[index - 1]! < path)) ascending = inPlace = false;
    if (inPlace && (path === NOT_A_PATH || isExcluded(path))) inPlace = false;
    if (!ascending) break;
  }
  if (inPlace) return { paths: written, positions: null, inStateDir };
  const seen = ascending ? null : new Set<string>();
  const paths: string[] = [];
  const positions: number[] = [];
  for (let index = 0; index < written.length; index++) {
    const path = written[index]!;
    if (path === NOT_A_PATH || isExcluded(path)) continue;
    if (seen !== null) {
      if (seen.has(path)) continue;
      seen.add(path);
    }
    paths.push(path);
    positions.push(index);
  }
  return { paths, positions, inStateDir };
}

interface StateDirPaths {
  stateDir: string;
  paths: Set<string>;
}

const LISTED_STATE_PATHS = 3;

/**
 * A state dir that git lists came with the repository, or will go into it:
 * its receipts may be someone else's (a committed state.db can hold forged
 * PASS receipts), so no check here is CURRENT while git lists it.
 */
function withStateDirProblem(problems: Reason[], found: StateDirPaths | null): Reason[] {
  if (found === null) return problems;
  const paths = [...found.paths].sort();
  const named = paths.slice(0, LISTED_STATE_PATHS).join(', ') + (paths.length > LISTED_STATE_PATHS ? ` and ${paths.length - LISTED_STATE_PATHS} more` : '');
  const dir = found.stateDir;
  return [
    ...problems,
    reason(
      'state-dir-in-git',
      `git lists files in the state dir ${dir}/ (${named}), so its receipts may not be yours: a committed state dir can carry forged ones. ` +
        `Untrack it with "git rm -r --cached ${dir}" and keep ${dir}/.gitignore (it holds "*"); if it came with the repository, delete it too ("rm -r ${dir}") and run the checks again`,
    ),
  ];
}

export function notUtf8(lossy: string, where: 'inputs' | 'installed' = 'inputs'): Reason {
  return reason(
    'input-name-not-utf8',
    `${JSON.stringify(lossy)} has a name that is not valid UTF-8, so it cannot be recorded exactly; rename it, or exclude it with a "!" glob in the check's ${where === 'inputs' ? 'inputs' : '"installed" globs'}`,
  );
}

function walkWithIgnoreRules(root: string, excluded: readonly string[]): SourceListing {
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
  const kept = keptPaths(paths, excluded).paths;
  return { paths: kept, problems, via: 'walk', text: kept.join('\0') };
}

function isIgnored(rules: { base: string; rules: Ignore }[], path: string, isDir: boolean): boolean {
  for (const { base, rules: set } of rules) {
    const rel = base === '' ? path : path.slice(base.length + 1);
    if (set.ignores(isDir ? `${rel}/` : rel)) return true;
  }
  return false;
}
