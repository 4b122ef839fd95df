import type { PackageManagerName } from '../core/config.js';
import { isOwnCommand, RUN_COMMANDS, scriptRun, TEST_COMMANDS } from '../core/packageManagerGrammar.js';
import type { TaskRunnerConfig } from '../core/taskRunners.js';
import { dependencyClosure, dependencyOrder, dependentClosure, packageByDir, type Workspace, type WorkspacePackage } from '../core/workspace.js';
import { dirMatches, dirPattern, isPlain, nameMatches, type StarSemantics } from './selectors.js';

export type { TaskRunnerConfig } from '../core/taskRunners.js';

/*
 * Which workspace packages' scripts a command line runs: `pnpm -r test`,
 * `npm test -w a`, `yarn workspace a test`, `turbo run test --filter=a...`,
 * `nx run-many -t test`, `bun --filter '*' test`, or a plain script form in a
 * package's directory. Pure: argv is static words, and everything the tools
 * would read is in the target.
 *
 * Each answer must be exact: a command whose meaning is not certain is
 * `unresolved` and runs as typed, because a wrong list of packages could
 * deny a run that was needed. Unknown flags, arguments after the script, a
 * selector that matches nothing or that depends on git, a task runner that
 * would run other tasks first, and any form run outside the workspace root
 * (where the tools scope or resolve selectors by the directory) are all
 * unresolved.
 */

export interface FanOutTarget {
  workspace: Workspace;
  /** Root-relative directory the command runs in ('' = the root), after any `cd`. */
  cwdDir: string;
  /** turbo.json / turbo.jsonc tasks at the root, or null when there is none. */
  turbo: TaskRunnerConfig | null;
  /** nx.json targetDefaults, or null when there is no nx.json. */
  nx: TaskRunnerConfig | null;
  /**
   * The root package.json, when known. A selection that may take in the root
   * (pnpm's `*`, nx's run-many) is exact only when the root has no script of
   * that name, since the tools skip a package without it; unknown: unresolved.
   */
  root?: { name?: string | null; scripts: Readonly<Record<string, string>> };
  /** The project's package manager, when known: a package-manager form typed through another one fails (or reads another workspace), so it is unresolved. */
  packageManager?: PackageManagerName | null;
}

export type FanOut =
  | { kind: 'packages'; script: string; packages: string[] }
  | { kind: 'unresolved'; why: string }
  | null;

type Answer = Exclude<FanOut, null>;

const unresolved = (why: string): Answer => ({ kind: 'unresolved', why });

export function fanOutOf(argv: readonly string[], target: FanOutTarget): FanOut {
  const [program, ...args] = argv;
  if (program === undefined) return null;
  const runner = taskRunnerCall(argv, target);
  if (runner !== null) {
    if ('why' in runner) return unresolved(runner.why);
    return runner.tool === 'turbo' ? turboFanOut(runner.args, target) : nxFanOut(runner.args, target);
  }
  switch (program) {
    case 'pnpm':
      return pnpmFanOut(args, target);
    case 'npm':
      return npmFanOut(args, target);
    case 'yarn':
      return yarnFanOut(args, target);
    case 'bun':
      return bunFanOut(args, target);
    default:
      return null;
  }
}

// ---------------------------------------------------------------- shared

/**
 * The answer for a selection: the selected packages that have the script, in
 * dependency order. `skipMissing` says whether the tool skips a selected
 * package without the script (pnpm, turbo, bun, npm with --if-present) or fails.
 */
function finish(selected: readonly WorkspacePackage[], script: string, skipMissing: boolean, workspace: Workspace): Answer {
  if (selected.length === 0) return unresolved('the selection matches no workspace package');
  const having = selected.filter((pkg) => Object.hasOwn(pkg.scripts, script));
  if (having.length === 0) return unresolved(`none of the selected packages has a "${script}" script`);
  if (!skipMissing && having.length < selected.length) {
    const missing = selected.filter((pkg) => !Object.hasOwn(pkg.scripts, script)).map((pkg) => pkg.name);
    return unresolved(`${missing.join(', ')} has no "${script}" script, and the command would fail there`);
  }
  const names = new Set(having.map((pkg) => pkg.name));
  return { kind: 'packages', script, packages: dependencyOrder(workspace).filter((pkg) => names.has(pkg.name)).map((pkg) => pkg.name) };
}

/** Null when the root cannot run the script: it is known, and has no script of that name. */
function rootMayRun(target: FanOutTarget, script: string): string | null {
  if (target.root === undefined) return `the selection may take in the workspace root, whose scripts are not known`;
  if (Object.hasOwn(target.root.scripts, script)) return `the selection takes in the workspace root, which has a "${script}" script too`;
  return null;
}

function wrongManager(program: PackageManagerName, target: FanOutTarget): Answer | null {
  const expected = target.packageManager;
  if (expected === undefined || expected === null || expected === program) return null;
  return unresolved(`the project uses ${expected}, not ${program}`);
}

function fromRoot(target: FanOutTarget): Answer | null {
  return target.cwdDir === '' ? null : unresolved('a workspace command run outside the workspace root (the tools scope it, or resolve its selectors, by the directory)');
}

/**
 * A plain script form run in a package's directory (`cd packages/a && pnpm test`):
 * that package's script. Null in the root (a root check) and in any
 * directory that is not a package's own.
 */
function plainInPackage(argv: readonly string[], target: FanOutTarget): FanOut {
  if (target.cwdDir === '') return null;
  const pkg = packageByDir(target.workspace, target.cwdDir);
  if (!pkg) return null;
  const program = argv[0] as PackageManagerName;
  // `bun S` would also run a file or a binary named S (https://bun.sh/docs/cli/run): only `bun run S`.
  if (program === 'bun' && !RUN_COMMANDS.bun.includes(argv[1] ?? '')) return null;
  const run = scriptRun(argv, pkg.scripts);
  if (run === null) return null;
  const wrong = wrongManager(program, target);
  if (wrong) return wrong;
  if (run.args.length > 0) return unresolved('arguments after the script change the command');
  if (!Object.hasOwn(pkg.scripts, run.script)) return unresolved(`${pkg.name} has no "${run.script}" script`);
  return { kind: 'packages', script: run.script, packages: [pkg.name] };
}

/** `--flag value` or `--flag=value` at args[index]; the value and how many words it took, or null when absent. */
function flagValue(args: readonly string[], index: number, names: readonly string[]): { value: string | undefined; width: number } | null {
  const word = args[index]!;
  if (names.includes(word)) return { value: args[index + 1], width: 2 };
  for (const name of names) if (name.startsWith('--') && word.startsWith(`${name}=`)) return { value: word.slice(name.length + 1), width: 1 };
  return null;
}

// ---------------------------------------------------------------- filter selectors (pnpm, turbo)

interface Selector {
  exclude: boolean;
  /** `X...` (with dependencies), `...X` (with dependents). */
  graph: 'none' | 'dependencies' | 'dependents';
  /** `^`: the graph without X itself. */
  excludeSelf: boolean;
  name: string | null;
  dir: string[] | null;
}

/**
 * A filter selector as pnpm (https://pnpm.io/filtering) and turbo
 * (https://turborepo.com/docs/reference/run#--filter-string) read it: `!`,
 * then a `...` suffix (with `^`), a `...` prefix (with `^`), then a name
 * pattern, a `{dir}`, or a `./dir` path. Git selectors (`[ref]`) and a name
 * joined to a directory are not read here.
 */
function parseSelector(raw: string): Selector | string {
  let rest = raw;
  const exclude = rest.startsWith('!');
  if (exclude) rest = rest.slice(1);
  let graph: Selector['graph'] = 'none';
  let excludeSelf = false;
  if (rest.endsWith('...')) {
    graph = 'dependencies';
    rest = rest.slice(0, -3);
    if (rest.endsWith('^')) {
      excludeSelf = true;
      rest = rest.slice(0, -1);
    }
  }
  if (rest.startsWith('...')) {
    if (graph !== 'none') return `the selector ${JSON.stringify(raw)} asks for dependencies and dependents at once`;
    graph = 'dependents';
    rest = rest.slice(3);
    if (rest.startsWith('^')) {
      excludeSelf = true;
      rest = rest.slice(1);
    }
  }
  if (rest === '') return `the selector ${JSON.stringify(raw)} names no package`;
  if (rest.includes('[') || rest.includes(']')) return `the selector ${JSON.stringify(raw)} selects by git changes`;
  const braces = /^\{([^{}]+)\}$/.exec(rest);
  if (braces) {
    const dir = dirPattern(braces[1]!);
    return dir === null ? `the directory selector ${JSON.stringify(raw)} is not one vouch reads (outside the root, the root itself, or a glob beyond * and **)` : { exclude, graph, excludeSelf, name: null, dir };
  }
  if (rest.startsWith('.')) {
    if (!/^\.\.?(?:\/|$)/.test(rest)) return `the selector ${JSON.stringify(raw)} is not one vouch reads`;
    // pnpm drops `...` and `^` from a path without braces; turbo keeps them.
    if (graph !== 'none') return `the tools disagree on ${JSON.stringify(raw)}: use {dir} with ...`;
    const dir = dirPattern(rest);
    return dir === null ? `the directory selector ${JSON.stringify(raw)} is not one vouch reads (outside the root, the root itself, or a glob beyond * and **)` : { exclude, graph, excludeSelf, name: null, dir };
  }
  if (rest.includes('{') || rest.includes('}')) return `the selector ${JSON.stringify(raw)} joins a name and a directory`;
  return { exclude, graph, excludeSelf, name: rest, dir: null };
}

interface Selection {
  packages: WorkspacePackage[];
  /** The root may be among the selected (a name glob, `.`, a graph it may be part of). */
  mayTakeRoot: boolean;
}

type Tool = 'pnpm' | 'turbo';

/** The packages one selector selects; a reason string when it cannot be told. */
function select(selector: Selector, raw: string, tool: Tool, target: FanOutTarget): Selection | string {
  const { workspace } = target;
  let base: WorkspacePackage[];
  let mayTakeRoot = false;
  if (selector.dir !== null) {
    base = [];
    for (const pkg of workspace.packages) {
      const matches = dirMatches(selector.dir, pkg.dir);
      if (matches === null) return `whether ${JSON.stringify(raw)} selects ${pkg.dir} depends on the glob library`;
      if (matches) base.push(pkg);
    }
  } else {
    const pattern = selector.name!;
    const star: StarSemantics = 'crosses';
    base = [];
    for (const pkg of workspace.packages) {
      const matches = nameMatches(pattern, pkg.name, star);
      if (matches === null) return `the name pattern ${JSON.stringify(raw)} holds a glob character vouch does not read`;
      if (matches) base.push(pkg);
    }
    const rootName = target.root?.name;
    if (pattern.includes('*')) mayTakeRoot = true;
    else if (rootName !== undefined && rootName !== null && rootName === pattern) return `${JSON.stringify(raw)} names the workspace root`;
    if (base.length === 0 && tool === 'pnpm' && !pattern.startsWith('@') && !pattern.includes('/')) {
      // pnpm: "--filter=core will pick @babel/core if core is not found" (https://pnpm.io/filtering#--filter-package_name),
      // and the root, whose name is part of that lookup, must be known not to be it.
      if (rootName === undefined || rootName === null) return `${JSON.stringify(raw)} matches no package by its full name, and pnpm would then try it without a scope only if the root is not named so`;
      for (const pkg of workspace.packages) {
        const scoped = nameMatches(`@*/${pattern}`, pkg.name, 'crosses');
        if (scoped === null) return `the name pattern ${JSON.stringify(raw)} holds a glob character vouch does not read`;
        if (scoped) base.push(pkg);
      }
      if (nameMatches(`@*/${pattern}`, rootName, 'crosses') === true) mayTakeRoot = true;
    }
  }
  if (base.length === 0) return `${JSON.stringify(raw)} matches no workspace package`;
  if (selector.graph === 'none') return { packages: base, mayTakeRoot };
  if (tool === 'turbo') {
    // turbo's package graph leaves out peerDependencies, which the workspace model counts.
    return `turbo's dependency selectors (${JSON.stringify(raw)}) follow a package graph that vouch's model does not match exactly`;
  }
  const found = new Map<string, WorkspacePackage>();
  const reached = new Set<string>();
  for (const pkg of base) {
    const closure = selector.graph === 'dependencies' ? dependencyClosure(workspace, pkg.name) : dependentClosure(workspace, pkg.name);
    for (const member of closure) {
      reached.add(member.name);
      if (!(selector.excludeSelf && member.name === pkg.name)) found.set(member.name, member);
    }
  }
  return { packages: [...found.values()], mayTakeRoot: rootInGraph(workspace, selector.graph, reached) };
}

/**
 * Whether the root is among a graph selector's packages: a dependency of one
 * of them (`X...`), or a dependent (`...X`). The root is no member, so the
 * model keeps its edges apart; where it has none, the root may be anywhere.
 */
function rootInGraph(workspace: Workspace, graph: 'dependencies' | 'dependents', reached: ReadonlySet<string>): boolean {
  const edges = workspace.rootEdges;
  if (edges === undefined) return true;
  return graph === 'dependencies' ? edges.dependedOnBy.some((name) => reached.has(name)) : edges.dependsOn.some((name) => reached.has(name));
}

/** Union of the positive selectors (all packages when there are only exclusions), less the excluded. */
function selectAll(raws: readonly string[], tool: Tool, target: FanOutTarget): Selection | string {
  const included = new Map<string, WorkspacePackage>();
  const excluded = new Set<string>();
  let positives = 0;
  let mayTakeRoot = false;
  for (const raw of raws) {
    const selector = parseSelector(raw);
    if (typeof selector === 'string') return selector;
    const selection = select(selector, raw, tool, target);
    if (typeof selection === 'string') return selection;
    if (selector.exclude) {
      for (const pkg of selection.packages) excluded.add(pkg.name);
    } else {
      positives++;
      mayTakeRoot ||= selection.mayTakeRoot;
      for (const pkg of selection.packages) included.set(pkg.name, pkg);
    }
  }
  const start = positives > 0 ? [...included.values()] : target.workspace.packages;
  return { packages: start.filter((pkg) => !excluded.has(pkg.name)), mayTakeRoot };
}

// ---------------------------------------------------------------- pnpm

/** pnpm flags that do not change which scripts run (https://pnpm.io/cli/run#options, https://pnpm.io/cli/recursive). */
const PNPM_NEUTRAL = new Set(['--parallel', '--stream', '--no-bail', '--bail', '--if-present', '--sort', '--no-sort', '--aggregate-output', '--reporter-hide-prefix']);
const PNPM_VALUED_NEUTRAL = ['--workspace-concurrency', '--reporter'];
/** Flags that make a pnpm command a workspace command. */
const PNPM_WORKSPACE = /^(?:-r|--recursive|-F|--filter(?:=.*)?|--filter-prod(?:=.*)?|-w|--workspace-root|--include-workspace-root(?:=.*)?|-C|--dir(?:=.*)?|--test-pattern(?:=.*)?|--changed-files-ignore-pattern(?:=.*)?|--fail-if-no-match|--resume-from(?:=.*)?)$/;

/**
 * pnpm: `-r` runs the script in every workspace package that has it, the root
 * excluded (https://pnpm.io/cli/run#recursive-r, https://pnpm.io/cli/recursive);
 * `--filter` selects by https://pnpm.io/filtering. Words after the script go
 * to the script (https://pnpm.io/cli/run).
 */
function pnpmFanOut(args: readonly string[], target: FanOutTarget): FanOut {
  if (!args.some((word) => PNPM_WORKSPACE.test(word) || /^-[a-zA-Z]*[rFwC]/.test(word))) return plainInPackage(['pnpm', ...args], target);
  let recursive = false;
  const filters: string[] = [];
  let index = 0;
  while (index < args.length && args[index]!.startsWith('-')) {
    const word = args[index]!;
    if (word === '-r' || word === '--recursive') {
      recursive = true;
      index++;
      continue;
    }
    const filter = flagValue(args, index, ['--filter', '-F']);
    if (filter) {
      if (filter.value === undefined) return unresolved('--filter without a selector');
      filters.push(filter.value);
      index += filter.width;
      continue;
    }
    if (PNPM_NEUTRAL.has(word)) {
      index++;
      continue;
    }
    const valued = flagValue(args, index, PNPM_VALUED_NEUTRAL);
    if (valued) {
      if (valued.value === undefined) return unresolved(`${word} without a value`);
      index += valued.width;
      continue;
    }
    return unresolved(`pnpm's ${word.split('=')[0]} is not read by vouch`);
  }
  const command = args[index];
  if (command === undefined) return unresolved('no script');
  let script: string;
  let next = index + 1;
  if (RUN_COMMANDS.pnpm.includes(command)) {
    const named = args[next++];
    if (named === undefined || named.startsWith('-')) return unresolved('no script after run');
    script = named;
  } else if (TEST_COMMANDS.pnpm.includes(command)) {
    script = 'test';
  } else if (!isOwnCommand('pnpm', command)) {
    script = command;
  } else {
    return unresolved(`pnpm ${command} is not a script run`);
  }
  if (next < args.length) return unresolved('arguments after the script change the command (they go to every script)');
  if (!recursive && filters.length === 0) return unresolved('a workspace flag vouch does not read');
  const where = fromRoot(target) ?? wrongManager('pnpm', target);
  if (where) return where;
  if (filters.length === 0) return finish(target.workspace.packages, script, true, target.workspace);
  const selection = selectAll(filters, 'pnpm', target);
  if (typeof selection === 'string') return unresolved(selection);
  if (selection.mayTakeRoot) {
    const root = rootMayRun(target, script);
    if (root) return unresolved(root);
  }
  return finish(selection.packages, script, true, target.workspace);
}

// ---------------------------------------------------------------- npm

const NPM_WORKSPACE = /^(?:-w|--workspace(?:=.*)?|--workspaces(?:=.*)?|-ws|--include-workspace-root(?:=.*)?|--prefix(?:=.*)?|-C)$/;

/**
 * npm: `-w X` runs the script in workspace X, named by its name, its
 * directory, or a parent directory of several; `--workspaces` in every one,
 * the root excluded (https://docs.npmjs.com/cli/using-npm/workspaces,
 * https://docs.npmjs.com/cli/using-npm/config#workspace). A selected
 * workspace without the script fails the command unless --if-present
 * (https://docs.npmjs.com/cli/commands/npm-run-script#if-present).
 */
function npmFanOut(args: readonly string[], target: FanOutTarget): FanOut {
  if (!args.some((word) => NPM_WORKSPACE.test(word) || /^-[a-zA-Z]*w/.test(word))) return plainInPackage(['npm', ...args], target);
  const named: string[] = [];
  let all = false;
  let ifPresent = false;
  const positional: string[] = [];
  for (let index = 0; index < args.length; ) {
    const word = args[index]!;
    if (!word.startsWith('-')) {
      positional.push(word);
      index++;
      continue;
    }
    if (word === '--') return unresolved('arguments after -- go to the script');
    const workspace = flagValue(args, index, ['-w', '--workspace']);
    if (workspace) {
      if (workspace.value === undefined || workspace.value === '' || workspace.value.startsWith('-')) return unresolved('--workspace without a value');
      named.push(workspace.value);
      index += workspace.width;
      continue;
    }
    if (word === '--workspaces' || word === '-ws') all = true;
    else if (word === '--if-present') ifPresent = true;
    else return unresolved(`npm's ${word.split('=')[0]} is not read by vouch`);
    index++;
  }
  const [command, ...rest] = positional;
  let script: string;
  if (command !== undefined && RUN_COMMANDS.npm.includes(command) && rest.length === 1) script = rest[0]!;
  else if (command !== undefined && TEST_COMMANDS.npm.includes(command) && rest.length === 0) script = 'test';
  else return unresolved('not one script run, or arguments after the script');
  if (all && named.length > 0) return unresolved('--workspaces together with --workspace');
  const where = fromRoot(target) ?? wrongManager('npm', target);
  if (where) return where;
  if (all) return finish(target.workspace.packages, script, ifPresent, target.workspace);
  const selected = new Map<string, WorkspacePackage>();
  for (const value of named) {
    const found = npmWorkspace(value, target.workspace);
    if (typeof found === 'string') return unresolved(found);
    for (const pkg of found) selected.set(pkg.name, pkg);
  }
  return finish([...selected.values()], script, ifPresent, target.workspace);
}

/** The workspaces `-w value` selects: by name, or by a directory that is a workspace's or holds workspaces. */
function npmWorkspace(value: string, workspace: Workspace): WorkspacePackage[] | string {
  const byName = workspace.packages.filter((pkg) => pkg.name === value);
  // npm matches a directory value as a glob too: only a plain one is read.
  const dir = isPlain(value) ? dirPattern(value) : null;
  if (dir === null && byName.length === 0) return `-w ${JSON.stringify(value)} is neither a workspace's name nor a directory vouch reads`;
  const prefix = dir === null ? null : dir.join('/');
  const byDir = prefix === null ? [] : workspace.packages.filter((pkg) => pkg.dir === prefix || pkg.dir.startsWith(`${prefix}/`));
  const found = [...new Set([...byName, ...byDir])];
  return found.length === 0 ? `-w ${JSON.stringify(value)} matches no workspace` : found;
}

// ---------------------------------------------------------------- yarn

/** Yarn's foreach flags that do not change which workspaces run (https://yarnpkg.com/cli/workspaces/foreach). */
const FOREACH_NEUTRAL = new Set(['--parallel', '--topological', '--topological-dev', '--interlaced', '--verbose']);

/**
 * yarn: `yarn workspace X S` runs S in the workspace named X
 * (https://yarnpkg.com/cli/workspace, https://classic.yarnpkg.com/en/docs/cli/workspace);
 * yarn 1's `yarn workspaces run S` runs it in every workspace and stops at
 * the first one without it (https://classic.yarnpkg.com/en/docs/cli/workspaces);
 * `yarn workspaces foreach -A run S` (https://yarnpkg.com/cli/workspaces/foreach).
 */
function yarnFanOut(args: readonly string[], target: FanOutTarget): FanOut {
  const [command, ...rest] = args;
  if (command !== 'workspace' && command !== 'workspaces') {
    if (args.some((word) => word === '--cwd' || word.startsWith('--cwd='))) return unresolved('yarn --cwd runs in another directory');
    return plainInPackage(['yarn', ...args], target);
  }
  const where = fromRoot(target) ?? wrongManager('yarn', target);
  if (where) return where;
  if (command === 'workspace') {
    const [name, ...run] = rest;
    if (name === undefined || run.length === 0) return unresolved('yarn workspace without a workspace and a command');
    const pkg = target.workspace.packages.find((candidate) => candidate.name === name);
    if (!pkg) return unresolved(`no workspace is named ${JSON.stringify(name)}`);
    let script: string;
    if (run.length === 2 && run[0] === 'run') script = run[1]!;
    else if (run.length === 1 && run[0] === 'test') script = 'test';
    else if (run.length === 1 && !isOwnCommand('yarn', run[0]!) && !run[0]!.startsWith('-')) script = run[0]!;
    else return unresolved('not one script run, or arguments after the script');
    // A missing script fails in yarn 1 and runs a binary of that name in yarn 2+ (https://yarnpkg.com/cli/run).
    return finish([pkg], script, false, target.workspace);
  }
  const [sub, ...more] = rest;
  if (sub === 'run') {
    if (more.length !== 1 || more[0]!.startsWith('-')) return unresolved('not one script run, or arguments after the script');
    return finish(target.workspace.packages, more[0]!, false, target.workspace);
  }
  if (sub === 'foreach') return foreachFanOut(more, target);
  return unresolved(`yarn workspaces ${sub ?? ''} is not a script run`);
}

function foreachFanOut(args: readonly string[], target: FanOutTarget): Answer {
  let all = false;
  const include: string[] = [];
  const exclude: string[] = [];
  let index = 0;
  while (index < args.length && args[index]!.startsWith('-')) {
    const word = args[index]!;
    if (word === '--all') all = true;
    else if (FOREACH_NEUTRAL.has(word)) {
      // nothing
    } else if (/^-[Aptiv]+$/.test(word)) {
      if (word.includes('A')) all = true;
    } else {
      const listed = flagValue(args, index, ['--include', '--exclude']);
      const jobs = flagValue(args, index, ['-j', '--jobs']);
      if (listed) {
        if (listed.value === undefined) return unresolved(`${word} without a value`);
        (word.startsWith('--include') ? include : exclude).push(listed.value);
        index += listed.width;
        continue;
      }
      if (jobs) {
        if (jobs.value === undefined) return unresolved(`${word} without a value`);
        index += jobs.width;
        continue;
      }
      return unresolved(`yarn workspaces foreach ${word.split('=')[0]} is not read by vouch`);
    }
    index++;
  }
  if (!all) return unresolved('yarn workspaces foreach without --all selects by the current workspace or by git');
  const [run, script, ...extra] = args.slice(index);
  if (run !== 'run' || script === undefined || script.startsWith('-') || extra.length > 0) return unresolved('not one script run, or arguments after the script');
  // A script name with ":" is run from any workspace when one defines it (https://yarnpkg.com/getting-started/qa#how-to-share-scripts-between-workspaces).
  if (script.includes(':')) return unresolved(`yarn runs a script with ":" in its name from any workspace when one workspace defines it`);
  const matches = (patterns: string[], pkg: WorkspacePackage): boolean | string => {
    for (const pattern of patterns) {
      if (!isPlain(pattern)) return `the pattern ${JSON.stringify(pattern)} is a glob vouch does not read`;
      if (pattern === pkg.name || pattern === pkg.dir) return true;
    }
    return false;
  };
  const selected: WorkspacePackage[] = [];
  for (const pkg of target.workspace.packages) {
    const included = include.length === 0 ? true : matches(include, pkg);
    const excluded = matches(exclude, pkg);
    if (typeof included === 'string') return unresolved(included);
    if (typeof excluded === 'string') return unresolved(excluded);
    if (included && !excluded) selected.push(pkg);
  }
  const rootName = target.root?.name ?? null;
  for (const pattern of [...include, ...exclude]) {
    const known = target.workspace.packages.some((pkg) => pkg.name === pattern || pkg.dir === pattern) || (exclude.includes(pattern) && pattern === rootName);
    if (!known) return unresolved(`${JSON.stringify(pattern)} matches no workspace`);
  }
  // -A takes in the root workspace; --include of workspace names leaves it out. Without that, the
  // root runs the script, or, lacking it, yarn 4 runs a binary of that name there if one is installed.
  if (include.length === 0) {
    if (rootName === null || !exclude.includes(rootName)) {
      return unresolved('yarn workspaces foreach --all takes in the root workspace, which runs the script or a binary of that name');
    }
  }
  // A workspace without the script runs a binary of that name in yarn 4, if it has one.
  return finish(selected, script, false, target.workspace);
}

// ---------------------------------------------------------------- bun

/**
 * bun: `bun run --filter P S` and `bun --filter P S` run S in every package
 * matching P, by name or by `./path`, skipping packages without it
 * (https://bun.sh/docs/cli/filter). Only one positive pattern is read.
 */
function bunFanOut(args: readonly string[], target: FanOutTarget): FanOut {
  const hasFilter = args.some((word) => word.startsWith('--filter') || word.startsWith('-F'));
  if (!hasFilter) return plainInPackage(['bun', ...args], target);
  let index = 0;
  const viaRun = args[0] === 'run';
  if (viaRun) index++;
  const filters: string[] = [];
  while (index < args.length && args[index]!.startsWith('-')) {
    const filter = flagValue(args, index, ['--filter', '-F']);
    if (!filter) return unresolved(`bun's ${args[index]!.split('=')[0]} is not read by vouch`);
    if (filter.value === undefined) return unresolved('--filter without a pattern');
    filters.push(filter.value);
    index += filter.width;
  }
  const [script, ...extra] = args.slice(index);
  if (script === undefined || extra.length > 0) return unresolved('not one script run, or arguments after the script');
  // Without `run`, a bun command of that name runs instead (https://bun.sh/docs/cli/run).
  if (!viaRun && isOwnCommand('bun', script)) return unresolved(`bun ${script} is bun's own command`);
  if (filters.length !== 1) return unresolved('several --filter patterns');
  const where = fromRoot(target) ?? wrongManager('bun', target);
  if (where) return where;
  const pattern = filters[0]!;
  if (pattern.startsWith('!')) return unresolved('bun exclusion patterns are not read by vouch');
  let selected: WorkspacePackage[];
  let mayTakeRoot: boolean;
  if (pattern.startsWith('./')) {
    const dir = dirPattern(pattern);
    if (dir === null) return unresolved(`the path pattern ${JSON.stringify(pattern)} is not one vouch reads`);
    selected = [];
    for (const pkg of target.workspace.packages) {
      const matches = dirMatches(dir, pkg.dir);
      if (matches === null) return unresolved(`whether ${JSON.stringify(pattern)} selects ${pkg.dir} depends on the glob library`);
      if (matches) selected.push(pkg);
    }
    mayTakeRoot = false;
  } else {
    selected = [];
    for (const pkg of target.workspace.packages) {
      // "*" alone matches every package (https://bun.sh/docs/cli/filter); otherwise whether bun's `*`
      // crosses the "/" of a scoped name is not documented, so only patterns where it makes no difference are read.
      const matches = pattern === '*' ? true : nameMatches(pattern, pkg.name, 'unknown');
      if (matches === null) return unresolved(`the name pattern ${JSON.stringify(pattern)} is not one vouch reads`);
      if (matches) selected.push(pkg);
    }
    mayTakeRoot = pattern.includes('*');
  }
  if (selected.length === 0) return unresolved(`${JSON.stringify(pattern)} matches no workspace package`);
  if (mayTakeRoot) {
    const root = rootMayRun(target, script);
    if (root) return unresolved(root);
  }
  return finish(selected, script, true, target.workspace);
}

// ---------------------------------------------------------------- task runners

type RunnerCall = { tool: 'turbo' | 'nx'; args: readonly string[] } | { why: string };

/**
 * turbo or nx, alone or through a runner that runs the project's own binary:
 * `npx` (https://docs.npmjs.com/cli/commands/npx), `pnpm exec`
 * (https://pnpm.io/cli/exec), and `pnpm turbo` / `yarn turbo`, which run a
 * root script named "turbo" when there is one (https://pnpm.io/cli/run,
 * https://classic.yarnpkg.com/en/docs/cli/run). Null when argv is neither.
 */
function taskRunnerCall(argv: readonly string[], target: FanOutTarget): RunnerCall | null {
  const tool = (word: string | undefined) => (word === 'turbo' || word === 'nx' ? word : null);
  const direct = tool(argv[0]);
  if (direct) return { tool: direct, args: argv.slice(1) };
  const [program, first, second] = argv;
  if (program === 'npx' && tool(first)) return { tool: tool(first)!, args: argv.slice(2) };
  if (program === 'pnpm' && first === 'exec' && tool(second)) {
    const wrong = wrongManager('pnpm', target);
    if (wrong) return { why: (wrong as { why: string }).why };
    return { tool: tool(second)!, args: argv.slice(3) };
  }
  if ((program === 'pnpm' || program === 'yarn') && tool(first)) {
    const wrong = wrongManager(program, target);
    if (wrong) return { why: (wrong as { why: string }).why };
    if (target.root === undefined) return { why: `${program} ${first} runs a root script named "${first}" if there is one, and the root's scripts are not known` };
    if (Object.hasOwn(target.root.scripts, first!)) return { why: `${program} ${first} runs the root's "${first}" script` };
    return { tool: tool(first)!, args: argv.slice(2) };
  }
  const runners = [['npx'], ['pnpm', 'exec'], ['pnpm', 'dlx'], ['pnpx'], ['npm', 'exec'], ['npm', 'x'], ['yarn', 'exec'], ['yarn', 'dlx'], ['bunx'], ['bun', 'x']];
  for (const words of runners) {
    if (!words.every((word, index) => argv[index] === word)) continue;
    const after = argv.slice(words.length);
    if (after.some((word) => tool(word)) && (after[0]?.startsWith('-') || tool(after[0]))) return { why: `${words.join(' ')} with turbo or nx is not a form vouch reads` };
  }
  return null;
}

/** turbo's own commands (https://turborepo.com/docs/reference): `turbo NAME` runs these, not a task. */
const TURBO_COMMANDS = new Set(
  'run watch prune gen generate login logout link unlink daemon bin completion telemetry scan ls query info boundaries devtools docs config help ci sso'.split(' '),
);
/** turbo run flags that do not change which tasks run (https://turborepo.com/docs/reference/run). */
const TURBO_NEUTRAL = new Set(['--force', '--no-cache', '--continue', '--no-daemon', '--only', '--parallel']);
const TURBO_VALUED_NEUTRAL = ['--output-logs', '--log-order', '--log-prefix', '--concurrency', '--ui', '--cache-workers'];

/**
 * turbo: `turbo run T` (or `turbo T`) runs T in every package whose
 * package.json has that script, in the filter's selection
 * (https://turborepo.com/docs/reference/run); the tasks in dependsOn run
 * first, and a package's own turbo.json may change the task
 * (https://turborepo.com/docs/reference/package-configurations).
 */
function turboFanOut(args: readonly string[], target: FanOutTarget): Answer {
  const where = fromRoot(target);
  if (where) return where;
  let index = 0;
  if (args[0] === 'run') index++;
  const tasks: string[] = [];
  const filters: string[] = [];
  for (; index < args.length; index++) {
    const word = args[index]!;
    if (word === '--') return unresolved('arguments after -- go to the tasks');
    if (!word.startsWith('-')) {
      tasks.push(word);
      continue;
    }
    const filter = flagValue(args, index, ['--filter', '-F']);
    if (filter) {
      if (filter.value === undefined) return unresolved('--filter without a selector');
      filters.push(filter.value);
      index += filter.width - 1;
      continue;
    }
    if (TURBO_NEUTRAL.has(word) || /^--continue=(?:always|never|dependencies-successful)$/.test(word)) continue;
    const valued = flagValue(args, index, TURBO_VALUED_NEUTRAL);
    if (valued) {
      if (valued.value === undefined) return unresolved(`${word} without a value`);
      index += valued.width - 1;
      continue;
    }
    return unresolved(`turbo's ${word.split('=')[0]} is not read by vouch`);
  }
  if (tasks.length !== 1) return unresolved(tasks.length === 0 ? 'no task' : 'several tasks');
  const task = tasks[0]!;
  if (args[0] !== 'run' && TURBO_COMMANDS.has(task)) return unresolved(`turbo ${task} is turbo's own command`);
  if (task.includes('#')) return unresolved('a package task (PACKAGE#TASK) through turbo');
  const config = target.turbo;
  if (config === null) return unresolved('no turbo.json at the root');
  if (config.blocked !== undefined) return unresolved(config.blocked);
  const definition = config.tasks[task];
  if (!definition) return unresolved(`turbo.json has no "${task}" task`);
  if (definition.dependsOn.length > 0) return unresolved(`turbo runs ${definition.dependsOn.join(', ')} before or beside "${task}"`);
  if (Object.hasOwn(config.tasks, `//#${task}`)) return unresolved(`turbo.json runs the root's "${task}" too (//#${task})`);
  let selected: WorkspacePackage[];
  if (filters.length === 0) {
    selected = target.workspace.packages;
  } else {
    const selection = selectAll(filters, 'turbo', target);
    if (typeof selection === 'string') return unresolved(selection);
    selected = selection.packages;
  }
  const running = selected.filter((pkg) => Object.hasOwn(pkg.scripts, task));
  const overridden = running.filter((pkg) => config.overridden.includes(pkg.name) || Object.hasOwn(config.tasks, `${pkg.name}#${task}`));
  if (overridden.length > 0) return unresolved(`${overridden.map((pkg) => pkg.name).join(', ')} configure${overridden.length === 1 ? 's' : ''} turbo's tasks otherwise`);
  return finish(selected, task, true, target.workspace);
}

/** nx's own commands (https://nx.dev/reference/nx-commands): `nx NAME` runs these, not a target. */
const NX_COMMANDS = new Set(
  'run run-many affected exec graph dep-graph show list report reset init generate g migrate format format:check format:write release watch sync sync:check connect connect-to-nx-cloud view-logs add import repair daemon login logout mcp configure-ai-agents print-affected affected:graph help'.split(' '),
);
/** nx flags that do not change which tasks run (https://nx.dev/reference/nx-commands#run-many). */
const NX_NEUTRAL = /^(?:--skip-nx-cache|--skipNxCache|--skip-remote-cache|--parallel(?:=\d+)?|--verbose|--nx-bail|--nxBail|--output-style=(?:dynamic|static|stream|stream-without-prefixes|tui))$/;

/**
 * nx: `nx run P:T`, `nx T P` and `nx run-many -t T [-p P…]` run target T;
 * a package.json project's targets are its scripts
 * (https://nx.dev/reference/project-configuration), nx.json targetDefaults
 * may add dependsOn (https://nx.dev/reference/nx-json#target-defaults), and
 * a project.json or package.json "nx" may change the target. Words nx does
 * not know go to the script.
 */
function nxFanOut(args: readonly string[], target: FanOutTarget): Answer {
  const where = fromRoot(target);
  if (where) return where;
  const [command, ...rest] = args;
  if (command === undefined) return unresolved('no nx command');
  let task: string;
  let projects: string[] | null;
  if (command === 'run') {
    const [spec, ...flags] = rest;
    const parts = spec?.split(':') ?? [];
    if (parts.length !== 2 || parts.some((part) => part === '')) return unresolved('nx run takes PROJECT:TARGET, without a configuration');
    const bad = flags.find((flag) => !NX_NEUTRAL.test(flag));
    if (bad !== undefined) return unresolved(`nx's ${bad} is not read by vouch (an unknown word goes to the script)`);
    projects = [parts[0]!];
    task = parts[1]!;
  } else if (command === 'run-many') {
    const parsed = runManyArgs(rest);
    if (typeof parsed === 'string') return unresolved(parsed);
    ({ task, projects } = parsed);
  } else if (command === 'affected') {
    return unresolved('nx affected selects by git changes');
  } else if (NX_COMMANDS.has(command) || command.startsWith('-') || command.includes(':')) {
    return unresolved(`nx ${command} is not a form vouch reads`);
  } else {
    const [project, ...flags] = rest;
    if (project === undefined || project.startsWith('-')) return unresolved('nx TARGET without a project runs the project of the current directory');
    const bad = flags.find((flag) => !NX_NEUTRAL.test(flag));
    if (bad !== undefined) return unresolved(`nx's ${bad} is not read by vouch (an unknown word goes to the script)`);
    task = command;
    projects = [project];
  }
  const config = target.nx;
  if (config === null) return unresolved('no nx.json at the root');
  if (config.blocked !== undefined) return unresolved(config.blocked);
  const defaults = config.tasks[task];
  if (defaults && defaults.dependsOn.length > 0) return unresolved(`nx.json targetDefaults run ${defaults.dependsOn.join(', ')} before "${task}"`);
  let selected: WorkspacePackage[];
  if (projects === null) {
    // run-many without projects: every project with the target, the root's own package.json project included.
    if (config.overridden.includes('//')) return unresolved('the root is an nx project with its own configuration');
    const root = rootMayRun(target, task);
    if (root) return unresolved(root);
    selected = target.workspace.packages;
  } else {
    selected = [];
    for (const name of projects) {
      const pkg = target.workspace.packages.find((candidate) => candidate.name === name);
      if (!pkg) return unresolved(`no workspace package is named ${JSON.stringify(name)}`);
      selected.push(pkg);
    }
  }
  const overridden = selected.filter((pkg) => config.overridden.includes(pkg.name));
  if (overridden.length > 0) return unresolved(`${overridden.map((pkg) => pkg.name).join(', ')} configure${overridden.length === 1 ? 's' : ''} nx targets in project.json or package.json "nx"`);
  // Named projects must each have the target; run-many over all skips those without it.
  return finish(selected, task, projects === null, target.workspace);
}

function runManyArgs(args: readonly string[]): { task: string; projects: string[] | null } | string {
  const tasks: string[] = [];
  let projects: string[] | null = null;
  for (let index = 0; index < args.length; ) {
    const word = args[index]!;
    const targets = flagValue(args, index, ['-t', '--target', '--targets']);
    const listed = flagValue(args, index, ['-p', '--projects']);
    const found = targets ?? listed;
    if (found) {
      if (found.value === undefined || found.value === '' || found.value.startsWith('-')) return `${word} without a value`;
      const values = found.value.split(',');
      index += found.width;
      // yargs reads an array option's following words as more values.
      if (found.width === 2) {
        while (index < args.length && !args[index]!.startsWith('-')) values.push(...args[index++]!.split(','));
      }
      if (targets) tasks.push(...values);
      else projects = [...(projects ?? []), ...values];
      continue;
    }
    if (NX_NEUTRAL.test(word)) {
      index++;
      continue;
    }
    return `nx's ${word.split('=')[0]} is not read by vouch (an unknown word goes to the script)`;
  }
  if (tasks.length !== 1 || tasks[0] === '') return tasks.length === 0 ? 'nx run-many without a target' : 'several targets';
  if (projects !== null) {
    for (const project of projects) if (!isPlain(project) || project.startsWith('tag:')) return `the project pattern ${JSON.stringify(project)} is not read by vouch`;
  }
  return { task: tasks[0]!, projects };
}
