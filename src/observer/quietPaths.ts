import { spawnSync } from 'node:child_process';
import { statSync } from 'node:fs';
import picomatch from 'picomatch';

/**
 * Paths whose changes cannot change any answer, so their events need no
 * rescan: files and directories git ignores (a directory only when a rule
 * ignores it itself) that hold no input and lie outside every install root, and git's own object store. A dev server or a
 * watch-mode build rewriting dist/ would otherwise keep the index rescanning.
 *
 * What git ignores is learned after each scan; a change to what decides it
 * (a .gitignore, .git/info/exclude, .git/config, or .git/index, which a
 * forced `git add` changes) forgets it until the next scan.
 */
export class QuietPaths {
  private readonly gitDir: boolean;
  private files = new Set<string>();
  private dirs = new Set<string>();
  private known = false;

  constructor(private readonly root: string) {
    this.gitDir = statSync(`${root}/.git`, { throwIfNoEntry: false })?.isDirectory() ?? false;
  }

  /** Whether a change at this root-relative path may change what is ignored or tracked. */
  decidesRules(rel: string): boolean {
    return rel === '.gitignore' || rel.endsWith('/.gitignore') || rel === '.git/index' || rel === '.git/info/exclude' || rel === '.git/config';
  }

  forget(): void {
    this.known = false;
  }

  quiet(rel: string): boolean {
    if (this.gitDir && rel.startsWith('.git/')) return !this.decidesRules(rel);
    if (!this.known) return false;
    if (this.files.has(rel)) return true;
    for (let slash = rel.indexOf('/'); ; slash = rel.indexOf('/', slash + 1)) {
      if (this.dirs.has(slash < 0 ? rel : rel.slice(0, slash))) return true;
      if (slash < 0) return false;
    }
  }

  /**
   * Asks git what it ignores now. `inputDirs` are the directories that hold
   * inputs; `installed` the install globs of every tracked check: an ignored
   * path that holds an input, or may come to hold an installed one, stays loud.
   */
  learn(inputDirs: Iterable<string>, installed: readonly string[]): void {
    this.known = false;
    const git = spawnSync('git', ['ls-files', '-z', '--others', '--ignored', '--exclude-standard', '--directory'], {
      cwd: this.root,
      maxBuffer: 1 << 28,
      env: { ...process.env, GIT_OPTIONAL_LOCKS: '0' },
    });
    if (git.error || git.status !== 0) return;
    const holding = new Set<string>();
    for (const dir of inputDirs) {
      for (let at = dir; at !== ''; at = at.slice(0, Math.max(0, at.lastIndexOf('/')))) holding.add(at);
    }
    const bases = installed.filter((glob) => !glob.startsWith('!')).map((glob) => picomatch.scan(glob).base);
    if (bases.includes('')) return;
    const inInstallRoot = (path: string) => bases.some((base) => path === base || path.startsWith(`${base}/`) || base.startsWith(`${path}/`));
    const files = new Set<string>();
    const listed: string[] = [];
    for (const entry of git.stdout.toString('utf8').split('\0')) {
      if (entry === '') continue;
      const isDir = entry.endsWith('/');
      const path = isDir ? entry.slice(0, -1) : entry;
      if (inInstallRoot(path) || holding.has(path)) continue;
      if (isDir) listed.push(entry);
      else files.add(path);
    }
    const dirs = this.ignoredThemselves(listed);
    if (dirs === null) return;
    this.files = files;
    this.dirs = dirs;
    this.known = true;
  }

  /**
   * Of the directories git listed as ignored, those a rule ignores themselves, without their
   * trailing "/". git also lists a directory that holds only ignored files (src/deep/ with *.txt
   * ignored and only notes.txt in it), but a new file there is no less a source for that. Null
   * when git cannot tell.
   */
  private ignoredThemselves(listed: readonly string[]): Set<string> | null {
    if (listed.length === 0) return new Set();
    const git = spawnSync('git', ['check-ignore', '--stdin', '-z'], {
      cwd: this.root,
      input: listed.join('\0') + '\0',
      maxBuffer: 1 << 28,
      env: { ...process.env, GIT_OPTIONAL_LOCKS: '0' },
    });
    // 1: none of them is ignored by a rule of its own.
    if (git.error || (git.status !== 0 && git.status !== 1)) return null;
    const dirs = new Set<string>();
    for (const entry of git.stdout.toString('utf8').split('\0')) if (entry !== '') dirs.add(entry.replace(/\/$/, ''));
    return dirs;
  }
}
