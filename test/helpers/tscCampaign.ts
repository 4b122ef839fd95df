import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import ts from 'typescript';
import { configText } from './answers.js';
import { cleanEnv, REPO, tempProject, type TempProject } from './project.js';
import type { Draw } from './tracedMutations.js';

/**
 * The tsc listing campaign's projects and mutations (test/integration/tscListingCampaign.test.ts
 * runs them). Each variant is a project whose one traced check is TypeScript's compiler, printing
 * the files of its program (--listFiles) and its diagnostics: two runs that print the same and
 * exit alike found the same program. A mutation creates or removes one entry, in a directory tsc
 * lists or one it does not, with a name of any class: dot names, program extensions, other files.
 */

export const TSC = join(REPO, 'node_modules', 'typescript', 'bin', 'tsc');
export const TSC_ARGS = ['--noEmit', '--listFiles', '-p', 'tsconfig.json'];
export const CHECK = 'typecheck';

/**
 * What `noLib` leaves undeclared: without lib.d.ts a run takes a fifth of a second, so every
 * CURRENT answer can be held to a real run.
 */
const GLOBALS = 'interface Array<T> {}\ninterface Boolean {}\ninterface CallableFunction {}\ninterface Function {}\ninterface IArguments {}\ninterface NewableFunction {}\ninterface Number {}\ninterface Object {}\ninterface RegExp {}\ninterface String {}\n';

const OPTIONS = { noLib: true, types: [] as string[], strict: true, target: 'es2022', module: 'esnext', moduleResolution: 'bundler', noEmit: true };

const json = (value: unknown) => JSON.stringify(value, null, 2) + '\n';

/** What a symbolic link a mutation makes may point at: a dot directory no variant's tsc lists. */
const STORE: Record<string, string> = {
  '.store/bad.ts': 'export const stored: number = "not a number";\n',
  '.store/good.ts': 'export const stored = 1;\n',
  '.store/pkg/index.ts': 'export const packaged: number = "not a number";\n',
  '.store/pkg/.hidden.ts': 'export const hidden: number = "not a number";\n',
};

const COMMON: Record<string, string> = {
  '.gitignore': 'node_modules/\n',
  'README.md': '# tsc campaign\n',
  'docs/guide.md': '# guide\n',
  ...STORE,
};

export interface Variant {
  name: string;
  /** What it tests, for the report. */
  about: string;
  files: Record<string, string>;
  /** Directories (root-relative, '' the root) a mutation puts an entry in or takes one from. */
  dirs: string[];
}

const INDEX = "import { b } from './sub/b';\n\nexport const a: number = b + 1;\n";
const SUB = 'export const b = 1;\n';

export const VARIANTS: readonly Variant[] = [
  {
    name: 'include-src',
    about: 'include ["src"]',
    files: { ...COMMON, 'tsconfig.json': json({ compilerOptions: OPTIONS, include: ['src'] }), 'src/index.ts': INDEX, 'src/sub/b.ts': SUB, 'src/globals.d.ts': GLOBALS, 'src/notes.md': '# notes\n' },
    dirs: ['', 'src', 'src/sub', 'docs'],
  },
  {
    name: 'all-js-json',
    about: 'include ["**/*"], allowJs, checkJs, resolveJsonModule',
    files: {
      ...COMMON,
      'tsconfig.json': json({ compilerOptions: { ...OPTIONS, allowJs: true, checkJs: true, resolveJsonModule: true }, include: ['**/*'] }),
      'src/index.ts': INDEX,
      'src/sub/b.ts': SUB,
      'src/util.js': 'export const util = 1;\n',
      'src/data.json': '{ "data": 1 }\n',
      'types/globals.d.ts': GLOBALS,
    },
    dirs: ['', 'src', 'src/sub', 'types', 'docs'],
  },
  {
    name: 'default-include',
    about: 'no include and no files: tsc includes **/* from the root',
    files: { ...COMMON, 'tsconfig.json': json({ compilerOptions: OPTIONS }), 'src/index.ts': INDEX, 'src/sub/b.ts': SUB, 'types/globals.d.ts': GLOBALS },
    dirs: ['', 'src', 'src/sub', 'types', 'docs'],
  },
  {
    name: 'packages',
    about: 'include ["packages/*/src"]',
    files: {
      ...COMMON,
      'tsconfig.json': json({ compilerOptions: OPTIONS, include: ['packages/*/src'] }),
      'packages/a/src/index.ts': 'export const a = 1;\n',
      'packages/a/src/globals.d.ts': GLOBALS,
      'packages/a/README.md': '# a\n',
      'packages/b/src/index.ts': 'export const b = 2;\n',
    },
    dirs: ['', 'packages', 'packages/a', 'packages/a/src', 'packages/b/src'],
  },
  {
    name: 'dot-patterns',
    about: 'include ["src/*.*", "*.config/**/*"]: patterns that can match dot names',
    files: {
      ...COMMON,
      'tsconfig.json': json({ compilerOptions: OPTIONS, include: ['src/*.*', '*.config/**/*'] }),
      'src/index.ts': 'export const a = 1;\n',
      'src/globals.d.ts': GLOBALS,
      'vite.config/setup.ts': 'export const setup = 1;\n',
    },
    dirs: ['', 'src', 'vite.config'],
  },
  {
    name: 'files-only',
    about: 'files ["src/index.ts", ...], no include',
    files: { ...COMMON, 'tsconfig.json': json({ compilerOptions: OPTIONS, files: ['src/index.ts', 'src/globals.d.ts'] }), 'src/index.ts': INDEX, 'src/sub/b.ts': SUB, 'src/globals.d.ts': GLOBALS },
    dirs: ['', 'src', 'src/sub'],
  },
  {
    name: 'extends',
    about: 'extends config/base.json, whose include is ["../src", "../lib/**/*.ts"]',
    files: {
      ...COMMON,
      'tsconfig.json': json({ extends: './config/base.json', compilerOptions: { noEmit: true } }),
      'config/base.json': json({ compilerOptions: OPTIONS, include: ['../src', '../lib/**/*.ts'] }),
      'src/index.ts': INDEX,
      'src/sub/b.ts': SUB,
      'src/globals.d.ts': GLOBALS,
      'lib/helper.ts': 'export const helper = 1;\n',
    },
    dirs: ['', 'src', 'src/sub', 'lib', 'config'],
  },
  {
    name: 'type-roots',
    about: 'include ["src"], typeRoots ["./node_modules/@types"], automatic type packages',
    files: {
      ...COMMON,
      'tsconfig.json': json({ compilerOptions: { ...OPTIONS, types: undefined, typeRoots: ['./node_modules/@types'] }, include: ['src'] }),
      'src/index.ts': 'export const a: number = typed;\n',
      'src/globals.d.ts': GLOBALS,
      'node_modules/@types/typed/index.d.ts': 'declare const typed: number;\n',
      'node_modules/@types/typed/package.json': json({ name: '@types/typed', version: '1.0.0', types: 'index.d.ts' }),
    },
    dirs: ['src', 'node_modules/@types', 'node_modules/@types/typed'],
  },
  {
    name: 'extends-program-name',
    about: 'extends ./base.ts: a config named like a program file, whose include is ["src/*.*"]',
    files: {
      ...COMMON,
      'tsconfig.json': json({ extends: './base.ts', compilerOptions: { noEmit: true } }),
      'base.ts': json({ compilerOptions: OPTIONS, include: ['src/*.*'] }),
      'src/index.ts': 'export const a = 1;\n',
      'src/globals.d.ts': GLOBALS,
    },
    dirs: ['', 'src'],
  },
];

/** First components of a random include pattern: literal, wildcard, and ones that can match dot names. */
const FIRST = ['src', 'lib', '.gen', '*', '**', '*.config', '?ib', 'vite.config', '.*', '*.*', 's*', '*c', 'src/**'];
/** Last components. */
const LAST = ['*', '*.ts', '*.*', '.*', '*.tsx', '?*', 'index.ts', '*?', '.x*', 'a*', '*.d.ts', '*.js', '*.json'];

/**
 * A variant whose include patterns are drawn at random, from components that can and cannot
 * match dot names, sometimes in an extended config: the campaign then holds
 * core/listingNames.ts's reading of patterns to tsc's own. `types/` is always included, for the
 * globals; every file the project starts with is valid, so the baseline passes.
 */
export function randomConfigVariant(draw: Draw, index: number): Variant {
  const include = ['types'];
  for (let count = 1 + draw.int(3); count > 0; count--) {
    const first = draw.pick(FIRST);
    include.push(draw.chance(0.2) ? first : draw.chance(0.3) ? `${first}/**/${draw.pick(LAST)}` : `${first}/${draw.pick(LAST)}`);
  }
  const compilerOptions = { ...OPTIONS, allowJs: draw.chance(0.5), resolveJsonModule: draw.chance(0.5) };
  const extended = draw.chance(0.4);
  const files: Record<string, string> = {
    ...COMMON,
    'types/globals.d.ts': GLOBALS,
    'src/index.ts': 'export const a = 1;\n',
    'src/.hidden.ts': 'export const hidden = 1;\n',
    'lib/x.ts': 'export const x = 1;\n',
    '.gen/gen.ts': 'export const gen = 1;\n',
    'vite.config/setup.ts': 'export const setup = 1;\n',
  };
  if (extended) {
    files['tsconfig.json'] = json({ extends: './configs/base.json' });
    files['configs/base.json'] = json({ compilerOptions, include: include.map((spec) => `../${spec}`) });
  } else files['tsconfig.json'] = json({ compilerOptions, include });
  return {
    name: `random-config-${index}`,
    about: `${extended ? 'extends configs/base.json, ' : ''}include ${JSON.stringify(include)}${compilerOptions.allowJs ? ', allowJs' : ''}${compilerOptions.resolveJsonModule ? ', resolveJsonModule' : ''}`,
    files,
    dirs: ['', 'src', 'lib', '.gen', 'vite.config', 'types'],
  };
}

/** tsc's output and exit code: what the ground truth compares. */
export interface TscOutput {
  code: number | null;
  stdout: string;
}

export interface TscProject {
  variant: Variant;
  project: TempProject;
  root: string;
  /** Where a removed entry waits for its revert: outside the root, on the same file system. */
  hold: string;
  /** Runs the check's command untraced, as the check runs it: the ground truth. */
  runTsc(): TscOutput;
  /** The same compile in this process (tscInProcess): what runTsc prints, without a Node start and TypeScript's loading. */
  compile(): TscOutput;
  remove(): void;
}

export function tscProject(variant: Variant): TscProject {
  const project = tempProject(`tsc-campaign-${variant.name}`, {
    ...variant.files,
    'vouch.config.json': configText([{ name: CHECK, kind: 'typecheck', command: ['node', TSC, ...TSC_ARGS], mode: 'traced' }]),
  });
  const root = project.root;
  const hold = mkdtempSync(join(REPO, '.tmp', `tsc-campaign-${variant.name}-hold-`));
  return {
    variant,
    project,
    root,
    hold,
    runTsc() {
      const result = spawnSync('node', [TSC, ...TSC_ARGS], { cwd: root, env: cleanEnv(), encoding: 'utf8', timeout: 120_000 });
      if (result.error) throw result.error;
      return { code: result.status, stdout: result.stdout };
    },
    compile: () => tscInProcess(root),
    remove() {
      project.remove();
      rmSync(hold, { recursive: true, force: true });
    },
  };
}

/** Exported by TypeScript's module, though not declared in its types. */
interface ExecuteCommandLine {
  executeCommandLine(system: ts.System, callback: () => void, args: readonly string[]): void;
}

/**
 * tsc's run in this process: `executeCommandLine`, the function bin/tsc calls with the process's
 * arguments, given TSC_ARGS, with the process's directory set to `root` for the call (TypeScript's
 * own system object would keep the first one) and its output and exit taken (not a terminal, so
 * not pretty, as in a pipe). The same compiler reading
 * the same files, about 20 ms a run instead of the 300 ms of a Node start that loads TypeScript
 * first. The call is synchronous: nothing else in this process runs while the directory is changed.
 */
export function tscInProcess(root: string): TscOutput {
  let stdout = '';
  let code: number | null = null;
  const system: ts.System = {
    ...ts.sys,
    args: TSC_ARGS,
    write: (text) => {
      stdout += text;
    },
    writeOutputIsTTY: () => false,
    // ts.sys keeps the directory of its first call.
    getCurrentDirectory: () => process.cwd(),
    exit: (exitCode) => {
      code ??= exitCode ?? 0;
    },
  };
  const cwd = process.cwd();
  process.chdir(root);
  try {
    (ts as unknown as ExecuteCommandLine).executeCommandLine(system, () => {}, TSC_ARGS);
  } finally {
    process.chdir(cwd);
  }
  if (code === null) throw new Error(`tsc in process did not exit, in ${root}:\n${stdout}`);
  return { code, stdout };
}

export type NameClass = 'dot' | 'program' | 'other';

export interface Mutation {
  /** `create-file`, `create-dir`, `link-file`, `link-dir`, `link-dangling`, `remove`. */
  op: string;
  nameClass: NameClass;
  /** Root-relative path of the entry made or taken away. */
  path: string;
  /** What exactly was done, for a failure's message. */
  detail: string;
  revert(): void;
}

const DOT_FILES = ['.a', '.x.ts', '.d.ts', '.ts', '.hidden.tsx', '.mcp.json', '.env', '..x.ts', '.x.js', '.eslintrc.cjs'];
const PROGRAM_EXTENSIONS = ['.ts', '.tsx', '.d.ts', '.mts', '.cts', '.d.mts', '.js', '.jsx', '.cjs', '.mjs', '.json', '.TS', '.Ts'];
const OTHER_EXTENSIONS = ['.md', '.txt', '', '.ts.bak', '.tsbuildinfo', '.ts~', '.map', '.d'];
const DOT_DIRS = ['.claude', '.config', '.cache', '.x.ts', '.git2', '.d'];
const DIR_NAMES = ['lib2', 'x.ts', 'n.config', 'typed2', 'node_modules', 'src2', 'a.d.ts'];

/** File contents: most have a type error, so that a file tsc takes in changes its exit code too. */
const CONTENTS = [
  'export const broken: number = "not a number";\n',
  'const script: number = "not a number";\n',
  'export const fine = 1;\n',
  '// @ts-check\n/** @type {number} */\nexport const js = "not a number";\n',
  '{ "json": 1 }\n',
  'plain text, not a program\n',
  '',
];

function drawName(draw: Draw, kind: 'file' | 'dir'): { name: string; nameClass: NameClass } {
  const roll = draw.int(10);
  if (kind === 'dir') {
    if (roll < 4) return { name: draw.pick(DOT_DIRS), nameClass: 'dot' };
    return { name: draw.pick(DIR_NAMES), nameClass: 'other' };
  }
  if (roll < 4) return { name: draw.pick(DOT_FILES), nameClass: 'dot' };
  if (roll < 7) {
    const extension = draw.pick(PROGRAM_EXTENSIONS);
    return { name: `m${draw.word(3)}${extension}`, nameClass: 'program' };
  }
  return { name: `m${draw.word(3)}${draw.pick(OTHER_EXTENSIONS)}`, nameClass: 'other' };
}

/** Names a removal never takes: the config vouch loaded, git's and vouch's own state, the links' store. */
const KEEP = new Set(['vouch.config.json', '.git', '.vouch', '.store']);

/** Draws one mutation in `fx` and applies it. */
export function mutate(fx: TscProject, draw: Draw): Mutation {
  const dir = draw.pick(fx.variant.dirs);
  const absDir = join(fx.root, dir);
  const roll = draw.int(20);
  if (roll < 4) {
    const removable = existsSync(absDir) ? readdirSync(absDir).filter((name) => !KEEP.has(name) && !(dir === '' && name.startsWith('.vouch'))) : [];
    if (removable.length > 0) {
      const name = draw.pick(removable);
      const from = join(absDir, name);
      const to = join(fx.hold, `${Date.now()}-${draw.word(6)}`);
      const kind = describeEntry(from);
      renameSync(from, to);
      const nameClass: NameClass = name.startsWith('.') ? 'dot' : kind === 'file' && !/\.([cm]?[jt]sx?|json)$/i.test(name) ? 'other' : kind === 'file' ? 'program' : 'other';
      return { op: 'remove', nameClass, path: join(dir, name), detail: `removed ${kind} ${join(dir, name)}`, revert: () => renameSync(to, from) };
    }
  }
  const entryKind = roll < 11 ? 'create-file' : roll < 14 ? 'create-dir' : roll < 16 ? 'link-file' : roll < 18 ? 'link-dir' : roll < 19 ? 'link-dangling' : 'create-file';
  const { name, nameClass } = drawName(draw, entryKind === 'create-dir' || entryKind === 'link-dir' ? 'dir' : 'file');
  const rel = join(dir, name);
  const abs = join(fx.root, rel);
  // A name already there (a variant's own file, or drawn twice) is left alone: a new name instead.
  if (existsSyncLink(abs)) return mutate(fx, draw);
  const undo = () => rmSync(abs, { recursive: true, force: true });
  switch (entryKind) {
    case 'create-file': {
      const content = draw.pick(CONTENTS);
      writeFileSync(abs, content);
      return { op: entryKind, nameClass, path: rel, detail: `wrote file ${rel}: ${JSON.stringify(content)}`, revert: undo };
    }
    case 'create-dir': {
      mkdirSync(abs);
      let detail = `made directory ${rel}`;
      if (draw.chance(0.7)) {
        const inner = drawName(draw, 'file');
        const content = draw.pick(CONTENTS);
        writeFileSync(join(abs, inner.name), content);
        detail += ` holding ${inner.name}: ${JSON.stringify(content)}`;
      }
      return { op: entryKind, nameClass, path: rel, detail, revert: undo };
    }
    case 'link-file':
    case 'link-dir':
    case 'link-dangling': {
      const target = entryKind === 'link-file' ? draw.pick(['.store/bad.ts', '.store/good.ts']) : entryKind === 'link-dir' ? '.store/pkg' : '.store/missing.ts';
      const linkTarget = relative(dirname(abs), join(fx.root, target));
      symlinkSync(linkTarget, abs);
      return { op: entryKind, nameClass, path: rel, detail: `linked ${rel} -> ${linkTarget}`, revert: undo };
    }
  }
  throw new Error(`no mutation ${entryKind}`);
}

function existsSyncLink(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

function describeEntry(path: string): string {
  const stats = lstatSync(path);
  return stats.isSymbolicLink() ? 'link' : stats.isDirectory() ? 'directory' : stats.isFile() ? 'file' : 'entry';
}
