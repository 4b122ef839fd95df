import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, type Dirent } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import ignore, { type Ignore } from 'ignore';
import { VouchError } from '../core/errors.js';
import { reason, type Reason } from '../core/reason.js';

export interface SourceListing {
  /** Root-relative, "/"-separated, unique, in no particular order. */
  paths: string[];
  problems: Reason[];
  via: 'git' | 'walk';
}

/** Throws a TypeError on bytes that are not UTF-8, where Node's own decoding would replace them. */
export const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The project's source files: what git tracks plus untracked files it does not
 * ignore, or the same rules applied by a walk outside a git repository.
 * `excluded` are root-relative files or directories (the state dir, vouch's own
 * config) left out entirely.
 */
export function listSourceFiles(root: string, excluded: readonly string[]): SourceListing {
  const top = enclosingRepo(root);
  const listing = top !== null && !ignoredBy(top, root) ? listWithGit(root) : walkWithIgnoreRules(root);
  if (excluded.length > 0) {
    const names = excluded.map((item) => item.replace(/\/+$/, ''));
    listing.paths = listing.paths.filter((path) => !names.some((name) => path === name || path.startsWith(name + '/')));
  }
  return listing;
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
  if (git.error || git.status !== 0) {
    const why = git.error ? git.error.message : git.stderr.toString().trim();
    throw new VouchError(
      'git-failed',
      `cannot list the project's files with git in ${root}: ${why}. Fix the repository (for example "git config --global --add safe.directory ${root}"), or make sure git is on PATH.`,
    );
  }
  const problems: Reason[] = [];
  const paths = new Set<string>();
  const out = git.stdout;
  let start = 0;
  for (let end = out.indexOf(0, start); end !== -1; start = end + 1, end = out.indexOf(0, start)) {
    const raw = out.subarray(start, end);
    try {
      paths.add(strictUtf8.decode(raw));
    } catch {
      problems.push(notUtf8(raw.toString('utf8')));
    }
  }
  return { paths: [...paths], problems, via: 'git' };
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
