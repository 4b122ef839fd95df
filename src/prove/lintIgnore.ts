import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, constants, existsSync, fstatSync, openSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { dirname, extname, join, posix } from 'node:path';
import ignore from 'ignore';
import { isInside } from '../core/pathInside.js';

/**
 * The extensions a linter of this family lints. A draft of any other kind
 * (README.md, package.json) is not a lint target: the workspace's own lint run
 * skips it too, so its silence is the right answer, not a false clean.
 */
const LINTABLE = new Set(['.js', '.mjs', '.cjs', '.jsx', '.ts', '.mts', '.cts', '.tsx', '.vue', '.svelte', '.astro']);

export function lintable(path: string): boolean {
  return LINTABLE.has(extname(path).toLowerCase());
}

/** The directories from the workspace root down to a draft's own, workspace-relative ('' is the root). */
export function ancestorDirs(path: string): string[] {
  const dirs = [''];
  const parts = path.split('/').slice(0, -1);
  for (let i = 1; i <= parts.length; i++) dirs.push(parts.slice(0, i).join('/'));
  return dirs;
}

/**
 * The text of a regular file, or null when there is none. A FIFO or a device
 * planted under a config's or an ignore file's name is not read: the read
 * would block the event loop for good, and with it every deadline. O_NONBLOCK
 * keeps the open itself from blocking on a FIFO.
 */
function readText(abs: string): string | null {
  let fd: number;
  try {
    fd = openSync(abs, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    return fstatSync(fd).isFile() ? readFileSync(fd, 'utf8') : null;
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/**
 * The files a resident linter read once at start and never again: its config
 * files and ignore files, at the root and in every directory above a draft
 * (nested configs apply by directory). A linter that lints documents from
 * memory never re-reads them, so they are digested before each inspection and
 * any change restarts it.
 */
/** Where a path really is, when that is inside the workspace (both resolved); null when it is elsewhere or does not resolve. */
function realInside(workspace: string, abs: string): string | null {
  try {
    const real = realpathSync(abs);
    return isInside(realpathSync(workspace), real) ? real : null;
  } catch {
    return null;
  }
}

/**
 * readText for a file a repository names (an ignore file, a config, what a
 * config extends): read only when its real path is inside the workspace. A
 * repository is untrusted, and must not make vouch read elsewhere.
 */
export function readTextInside(workspace: string, abs: string): string | null {
  const real = realInside(workspace, abs);
  return real === null ? null : readText(real);
}

export class LinterInputs {
  #seen = new Map<string, string>();

  /** The workspace whose files may be read; anything else a config leads to is recorded by where it is. */
  constructor(private readonly workspace: string) {}

  /**
   * True when the linter must restart before it may answer: a file it read
   * changed, or a file it may never have read exists now (a nested config in
   * a directory no earlier draft touched; the server read it at start or not,
   * and a restart settles which).
   */
  changed(files: readonly string[]): boolean {
    for (const file of files) {
      const now = this.#digest(file);
      const before = this.#seen.get(file);
      if (before === undefined ? now !== 'absent' : before !== now) return true;
    }
    return false;
  }

  /** Records the files as the freshly started linter reads them. */
  reset(files: readonly string[]): void {
    this.#seen = new Map(files.map((file) => [file, this.#digest(file)]));
  }

  /** Adds files seen for the first time while absent, so a later creation counts as a change. */
  note(files: readonly string[]): void {
    for (const file of files) if (!this.#seen.has(file)) this.#seen.set(file, this.#digest(file));
  }

  /**
   * A file's state. Read only when its real path is inside the workspace: a
   * repository is untrusted, and a config that `extends` `../../x`, or is a
   * link to a file elsewhere, must not make vouch read outside it (nor read a
   * huge file into memory). Such a file is recorded by its size, modification
   * time and inode instead, which still say when it changed.
   */
  #digest(abs: string): string {
    if (!existsSync(abs)) return 'absent';
    const real = realInside(this.workspace, abs);
    if (real === null) {
      const stat = statSync(abs, { throwIfNoEntry: false });
      return stat ? `elsewhere:${stat.size}:${stat.mtimeMs}:${stat.ino}` : 'absent';
    }
    const text = readText(real);
    if (text !== null) return createHash('sha256').update(text).digest('hex');
    // Not a regular file: recorded as such (a FIFO turning into a file is a change), never read.
    return 'not a regular file';
  }
}

/** Names of oxlint's config files; the first present in a directory applies there. */
export const OXLINT_CONFIGS = ['.oxlintrc.json', 'oxlintrc.json', 'oxlint.config.ts'];

/**
 * Ignore files for oxlint. Oxlint 1.95 reads `.eslintignore` by default (its
 * `--ignore-path` default; measured: the LSP and the CLI both skip what it
 * lists). `.oxlintignore` is not read by default, but it is the conventional
 * name a workspace passes with `--ignore-path`; a path it lists is meant to go
 * unlinted, so it is reported as ignored rather than judged.
 */
const OXLINT_IGNORE_FILES = ['.eslintignore', '.oxlintignore'];

/** Every path oxlint skips, mapped to the source that makes it skip: git, an ignore file, or a config's `ignorePatterns`. */
export async function oxlintIgnored(workspace: string, paths: readonly string[]): Promise<Map<string, string>> {
  const ignored = await gitIgnored(workspace, paths);
  for (const name of OXLINT_IGNORE_FILES) {
    const text = readTextInside(workspace, join(workspace, name));
    if (text === null) continue;
    const rules = ignore().add(text);
    for (const path of paths) if (!ignored.has(path) && rules.ignores(path)) ignored.set(path, name);
  }
  for (const path of paths) {
    if (ignored.has(path)) continue;
    for (const dir of ancestorDirs(path)) {
      const source = ignoredByConfig(workspace, dir, path);
      if (source !== null) {
        ignored.set(path, source);
        break;
      }
    }
  }
  return ignored;
}

/** The config in `dir` whose `ignorePatterns` (relative to the config's directory) match `path`, or null. */
function ignoredByConfig(workspace: string, dir: string, path: string): string | null {
  for (const name of OXLINT_CONFIGS.filter((config) => config.endsWith('.json'))) {
    const text = readTextInside(workspace, join(workspace, dir, name));
    if (text === null) continue;
    let patterns: unknown;
    try {
      patterns = (JSON.parse(text) as { ignorePatterns?: unknown }).ignorePatterns;
    } catch {
      // A config oxlint cannot parse is reported by oxlint itself, as malformed.
      return null;
    }
    if (!Array.isArray(patterns) || patterns.length === 0) return null;
    const relative = dir === '' ? path : posix.relative(dir, path);
    const configPath = dir === '' ? name : `${dir}/${name}`;
    return ignore().add(patterns.filter((p): p is string => typeof p === 'string')).ignores(relative) ? `ignorePatterns in ${configPath}` : null;
  }
  return null;
}

/**
 * Paths git ignores, by `git check-ignore`. `--no-index` because oxlint's
 * walker knows nothing of the index: a tracked file under an ignore rule is
 * still skipped. Outside a git repository there is nothing to ask; oxlint's
 * own view of a bare `.gitignore` is caught by the stage's ignore probe.
 */
export function gitIgnored(workspace: string, paths: readonly string[]): Promise<Map<string, string>> {
  const ignored = new Map<string, string>();
  if (paths.length === 0) return Promise.resolve(ignored);
  return new Promise((resolve) => {
    const child = spawn('git', ['check-ignore', '--no-index', '--verbose', '-z', '--stdin'], {
      cwd: workspace,
      stdio: ['pipe', 'pipe', 'ignore'],
      env: { ...process.env, GIT_OPTIONAL_LOCKS: '0' },
    });
    const out: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stdin.on('error', () => {});
    // No git on the machine: nothing git could ignore for this linter to see.
    child.on('error', () => resolve(ignored));
    child.on('close', (code) => {
      // 0: some ignored, 1: none, 128: not a repository (or git failed), which asks nothing of the drafts.
      if (code !== 0) return resolve(ignored);
      const fields = Buffer.concat(out).toString('utf8').split('\0');
      for (let i = 0; i + 3 < fields.length; i += 4) {
        const [source, line, pattern, path] = fields.slice(i, i + 4) as [string, string, string, string];
        // --verbose also reports a matching negation (`!keep.ts`), which un-ignores.
        if (pattern.startsWith('!')) continue;
        ignored.set(path, `git (${source}:${line}: ${pattern})`);
      }
      resolve(ignored);
    });
    child.stdin.end(paths.map((path) => `${path}\0`).join(''));
  });
}

/** The files a resident oxlint read at start, for the drafts at `paths`. */
export function oxlintInputs(workspace: string, paths: readonly string[]): string[] {
  const files = new Set<string>([
    join(workspace, 'package.json'),
    join(workspace, 'node_modules', 'oxlint', 'package.json'),
    join(workspace, '.git', 'info', 'exclude'),
    ...OXLINT_IGNORE_FILES.map((name) => join(workspace, name)),
  ]);
  for (const dir of new Set(['', ...paths.flatMap(ancestorDirs)])) {
    files.add(join(workspace, dir, '.gitignore'));
    for (const name of OXLINT_CONFIGS) {
      const config = join(workspace, dir, name);
      files.add(config);
      for (const extended of extendsOf(workspace, config)) files.add(extended);
    }
  }
  return [...files];
}

/** The files a JSON oxlint config `extends`, absolute; none when it has none or does not parse. */
function extendsOf(workspace: string, config: string): string[] {
  if (!config.endsWith('.json')) return [];
  const text = readTextInside(workspace, config);
  if (text === null) return [];
  try {
    const list = (JSON.parse(text) as { extends?: unknown }).extends;
    return Array.isArray(list) ? list.filter((e): e is string => typeof e === 'string').map((e) => join(dirname(config), e)) : [];
  } catch {
    return [];
  }
}

/** ESLint's flat config names; since ESLint 10 the nearest one above the linted file applies. */
export const ESLINT_CONFIGS = ['eslint.config.js', 'eslint.config.mjs', 'eslint.config.cjs', 'eslint.config.ts', 'eslint.config.mts', 'eslint.config.cts'];

/** The files a resident ESLint read at its first lint, for the drafts at `paths`. */
export function eslintInputs(workspace: string, paths: readonly string[]): string[] {
  const files = new Set<string>([join(workspace, 'package.json'), join(workspace, 'node_modules', 'eslint', 'package.json')]);
  for (const dir of new Set(['', ...paths.flatMap(ancestorDirs)])) for (const name of ESLINT_CONFIGS) files.add(join(workspace, dir, name));
  return [...files];
}

/** Biome's config names; Biome 2 also reads nested ones (https://biomejs.dev/guides/configure-biome/). */
export const BIOME_CONFIGS = ['biome.json', 'biome.jsonc'];

/**
 * Ignore files Biome reads when its VCS integration is on (`vcs.useIgnoreFile`,
 * https://biomejs.dev/guides/integrate-in-vcs/): `.gitignore` and `.ignore`,
 * nested ones too, and git's `info/exclude`.
 */
const BIOME_IGNORE_FILES = ['.gitignore', '.ignore'];

/** The files a resident Biome read at start, for the drafts at `paths`. */
export function biomeInputs(workspace: string, paths: readonly string[]): string[] {
  const files = new Set<string>([
    join(workspace, 'package.json'),
    join(workspace, 'node_modules', '@biomejs', 'biome', 'package.json'),
    join(workspace, '.git', 'info', 'exclude'),
    join(workspace, '.editorconfig'),
  ]);
  for (const dir of new Set(['', ...paths.flatMap(ancestorDirs)])) {
    for (const name of BIOME_IGNORE_FILES) files.add(join(workspace, dir, name));
    for (const name of BIOME_CONFIGS) {
      const config = join(workspace, dir, name);
      files.add(config);
      // A repository is untrusted: a config that extends a file outside it does not make vouch read there.
      for (const extended of biomeExtendsOf(workspace, config)) if (isInside(workspace, extended)) files.add(extended);
    }
  }
  return [...files];
}

/**
 * The files a Biome config `extends` by relative path, absolute. A package
 * name (`"extends": ["@acme/biome-config"]`) or `"//"` (the root config, in
 * a nested one) is not a file here; the root config is an input already.
 */
function biomeExtendsOf(workspace: string, config: string): string[] {
  const text = readTextInside(workspace, config);
  if (text === null) return [];
  let list: unknown;
  try {
    list = (JSON.parse(withoutJsonComments(text)) as { extends?: unknown }).extends;
  } catch {
    // Biome reports a config it cannot parse itself, as malformed.
    return [];
  }
  const entries = typeof list === 'string' ? [list] : Array.isArray(list) ? list : [];
  return entries.filter((e): e is string => typeof e === 'string' && e.startsWith('.')).map((e) => join(dirname(config), e));
}

/** JSONC as JSON: comments and trailing commas taken out, strings left as they are (biome.jsonc allows both). */
export function withoutJsonComments(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j;
    } else if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
      out += '\n';
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end < 0 ? text.length : end + 1;
    } else {
      out += c;
    }
  }
  return out.replace(/,(\s*[}\]])/g, '$1');
}
