import { isAbsolute, relative, resolve, sep } from 'node:path';
import type { Assignment, Command, Pipeline, PipelineNode, Redirection, SyntaxNode } from 'unbash';
import { forEachChild } from 'unbash';
import type { PackageManagerName } from '../core/config.js';
import { isPackageManagerSetting } from '../core/context.js';
import { contextEnvPatterns } from '../core/scriptContext.js';
import type { CheckDefinition } from '../core/definition.js';
import { canonicalArgv, isPackageManager } from '../core/packageManagerGrammar.js';
import { trimmerOf, type Trimmer } from '../core/replay.js';
import type { TaskRunnerConfig } from '../core/taskRunners.js';
import { PACKAGE_SEPARATOR, splitCheckName, type Workspace } from '../core/workspace.js';
import type { fanOutOf } from './fanOut.js';
import { commandWords as shellWords, parseShell, staticArgv, staticWord } from '../core/shellWords.js';
import { checkForms, envNameMatches, type CommandForm } from './matchForms.js';
import { chainElements, commandWords } from './shellCommand.js';

export interface MatchTarget {
  /** Absolute project root. */
  root: string;
  /** Absolute directory the shell command starts in. */
  cwd: string;
  packageManager: PackageManagerName | null;
  /** package.json scripts. */
  scripts: Record<string, string> | null;
  checks: CheckDefinition[];
  /** CDPATH is set in the shell: a relative `cd` may then go anywhere, so it is not followed. */
  cdpath?: boolean;
  /** The workspace, when some check is a package check: fan-out commands are matched to them with `fanOut`. */
  workspace?: Workspace | null;
  /** agents/fanOut.ts's resolver, loaded by the caller only for a workspace: a project without one never loads it. */
  fanOut?: typeof fanOutOf;
  /** turbo.json's and nx.json's tasks, which decide whether `turbo run` or `nx` runs more than the scripts. */
  turbo?: TaskRunnerConfig | null;
  nx?: TaskRunnerConfig | null;
  /** pnpm and npm are known to leave the root out of a recursive run (exec/workspaceRootSetting.ts). */
  rootExcluded?: boolean;
  /** Yarn 1 or 2+, when the project uses yarn (exec/detectPackageManager.ts). */
  yarnVariant?: 'classic' | 'berry' | null;
}

export interface MatchedPart {
  /** The checks' names: one, or each package check a fan-out command runs (in dependency order). */
  checks: string[];
  /** UTF-16 offsets in the original command of the command words to replace (assignments and the `2>&1 | tail -n N` suffix excluded). */
  start: number;
  end: number;
  /** The leading VAR=value assignments whose values are static, unquoted. */
  env: Record<string, string>;
  /** The `| tail -N`, `| head -N` or `| grep PATTERN` after it (null: none); a replay shows what it would have. */
  trimmer?: Trimmer | null;
  /** VOUCH_FORCE=1 in front of this command: it runs whatever its receipts say (through `vouch run`, which keeps its result). */
  forced?: boolean;
  /** Both streams reach what follows: `2>&1` before the pipe, or no pipe at all. */
  stderrMerged?: boolean;
}

export interface CommandMatch {
  /** Matched simple commands in source order (may be empty). */
  parts: MatchedPart[];
  /** Nothing else in the chain but matched parts (and `cd` into the root). */
  onlyChecks: boolean;
  /** VOUCH_FORCE=1 leads the command (or a part): run as typed. */
  force: boolean;
}

/**
 * Builtins that change the shell itself: what a later command in the same
 * chain means (its directory, environment, resolution, or whether it runs
 * code first). After one of them nothing later in the chain matches.
 */
const SHELL_STATE_BUILTINS = new Set([
  'cd', '.', 'source', 'eval', 'exec', 'export', 'unset', 'declare', 'typeset', 'local', 'readonly', 'let', 'read', 'mapfile', 'readarray',
  'alias', 'unalias', 'shopt', 'enable', 'builtin', 'command', 'hash', 'trap', 'pushd', 'popd', 'ulimit', 'umask', 'fc', 'set',
]);

/** `set` flags that change nothing about how a later command runs: errexit, nounset, xtrace, pipefail. */
const HARMLESS_SET = /^(?:[-+][eux]+|[-+][eux]*o|pipefail|errexit|nounset|xtrace)$/;

/** Where the chain is, as far as can be followed. */
type Place = { known: true; dir: string } | { known: false };

/**
 * Finds the simple commands of a shell command's top-level chain that stand
 * for a configured check. Null when the command does not parse: fail open.
 */
export function matchCommand(command: string, target: MatchTarget): CommandMatch | null {
  const script = parseShell(command);
  if (script === null) return null;
  // Forms and typed words are both compared in canonical words, so an alias (`npm run-script x`) matches what it stands for.
  // A package check's script runs in its package: typed in the root, its script forms are the root's script, so
  // only `vouch run NAME` stands for it there; in its package, fanOut.ts matches it.
  const forms = target.checks.map((check) => ({
    check,
    forms: (check.package === undefined ? checkForms(check, target) : [['vouch', 'run', check.name]]).map(canonicalArgv),
    context: contextPatterns(check, scriptsOf(check, target)),
  }));

  const parts: MatchedPart[] = [];
  let onlyChecks = true;
  let force = false;
  let place: Place = { known: true, dir: resolve(target.cwd) };

  for (const { node, statement } of chainElements(script)) {
    const head = headCommand(node);
    if (head && forced(head)) force = true;
    if (statement.background) {
      onlyChecks = false;
      continue;
    }
    if (node.type === 'Command' && isCd(node)) {
      place = afterCd(node, place, target);
      // A cd within the root changes nothing a check reads; the command after it is matched where it lands.
      if (!(place.known && dirInRoot(place.dir, target) !== null)) onlyChecks = false;
      continue;
    }
    const dir = place.known ? dirInRoot(place.dir, target) : null;
    const candidate = dir !== null ? matchable(node, command) : null;
    const matched = candidate === null ? null : (dir === '' ? matchPart(candidate.command, forms) : null) ?? matchFanOut(candidate.command, dir!, forms, target);
    if (candidate && matched) {
      parts.push({
        checks: matched.checks.map((check) => check.name),
        start: candidate.start,
        end: candidate.end,
        env: matched.env,
        trimmer: candidate.trimmer,
        stderrMerged: candidate.stderrMerged,
        ...(forced(candidate.command) ? { forced: true } : {}),
      });
      if (matched.dynamic) onlyChecks = false;
      // An assignment like `X=${Y:=z}` sets a shell variable on the way.
      if (changesShellState(candidate.command)) place = { known: false };
      continue;
    }
    onlyChecks = false;
    if (changesShellState(node)) place = { known: false };
  }
  return { parts, onlyChecks: onlyChecks && parts.length > 0, force };
}

/** The simple command a chain element starts with, for spotting VOUCH_FORCE=1. */
function headCommand(node: PipelineNode): Command | null {
  if (node.type === 'Command') return node;
  if (node.type === 'Pipeline' && node.prefixes.length === 0 && node.commands[0]?.type === 'Command') return node.commands[0];
  return null;
}

function forced(command: Command): boolean {
  return command.prefix.some((item) => {
    if (item.type !== 'Assignment' || item.name !== 'VOUCH_FORCE' || item.value.type !== 'Word') return false;
    const value = staticWord(item.value);
    return value !== null && value !== '' && value !== '0';
  });
}

interface Matchable {
  command: Command;
  start: number;
  end: number;
  trimmer: Trimmer | null;
  stderrMerged: boolean;
}

/**
 * The simple command in a chain element that may stand for a check, with the
 * span of its words: the command alone, or followed by `2>&1`, or by a single
 * `| tail -n N` / `| head -N` / `| grep PATTERN` (with or without `2>&1`). Anything
 * else in a pipeline, and `time` or `!` in front, never matches.
 */
function matchable(node: PipelineNode, source: string): Matchable | null {
  let command: Command;
  let trimmer: Trimmer | null = null;
  if (node.type === 'Command') {
    command = node;
  } else if (node.type === 'Pipeline') {
    const pipeline = node as Pipeline;
    if (pipeline.prefixes.length > 0 || pipeline.commands.length !== 2 || pipeline.operators[0] !== '|') return null;
    const [first, second] = pipeline.commands;
    if (first?.type !== 'Command' || second?.type !== 'Command') return null;
    trimmer = trimmerOfCommand(second);
    if (trimmer === null) return null;
    command = first;
  } else {
    return null;
  }
  if (command.name === undefined || command.prefix.some((item) => item.type !== 'Assignment')) return null;
  const { words, trailing } = commandWords(command);
  if (trailing.length > 1) return null;
  if (trailing.length === 1 && !isStderrToStdout(trailing[0] as Redirection, source)) return null;
  const last = words[words.length - 1]!;
  return { command, start: command.name.pos, end: last.end, trimmer, stderrMerged: trimmer === null || trailing.length === 1 };
}

function isStderrToStdout(item: Redirection, source: string): boolean {
  return item.type === 'Redirect' && source.slice(item.pos, item.end) === '2>&1';
}

/**
 * `tail -n N`, `tail -N`, `head -n N`, `head -N`, or `grep [-F|-E] [-v] PATTERN`
 * with static words and nothing more (core/replay.ts): each reads only its
 * stdin and prints part of it, so the check's run is the same without it.
 */
function trimmerOfCommand(command: Command): Trimmer | null {
  if (command.prefix.length > 0) return null;
  const argv = staticArgv(command);
  if (argv === null || command.suffix.length !== argv.length - 1) return null;
  return trimmerOf(argv);
}

interface PartMatch {
  /** One check, or a fan-out's package checks in dependency order. */
  checks: CheckDefinition[];
  env: Record<string, string>;
  /** An assignment's value is not static: the part runs something besides the check. */
  dynamic: boolean;
}

function matchPart(command: Command, checks: Array<{ check: CheckDefinition; forms: CommandForm[]; context: string[] }>): PartMatch | null {
  // The words only: a trailing 2>&1 was allowed by matchable().
  const argv: string[] = [];
  for (const word of commandWords(command).words) {
    const value = staticWord(word);
    if (value === null) return null;
    argv.push(value);
  }
  const typed = canonicalArgv(argv);
  for (const { check, forms, context } of checks) {
    if (!forms.some((form) => sameArgv(form, typed))) continue;
    const assigned = assignments(command.prefix as Assignment[], context);
    if (assigned === null) return null;
    return { checks: [check], ...assigned };
  }
  // `vouch run test` also runs every PACKAGE#test (api/project.ts selectChecks).
  const [program, verb, name, ...rest] = argv;
  if (program === 'vouch' && verb === 'run' && name !== undefined && rest.length === 0 && !name.startsWith('-') && !name.includes(PACKAGE_SEPARATOR)) {
    const named = checks.filter(({ check }) => check.name === name || (check.package !== undefined && splitCheckName(check.name)?.script === name));
    if (named.some(({ check }) => check.package !== undefined)) return withAssignments(command, named);
  }
  return null;
}

/**
 * A workspace fan-out (`pnpm -r test`, `turbo run test --filter=a`, `npm test` in a package directory) as the
 * package checks it runs: each selected package must have a check for exactly that script, run by the same package
 * manager, or the command runs as typed. fanOut.ts resolves only forms whose meaning is certain.
 */
function matchFanOut(command: Command, dir: string, checks: Array<{ check: CheckDefinition; forms: CommandForm[]; context: string[] }>, target: MatchTarget): PartMatch | null {
  const workspace = target.workspace;
  const fanOutOf = target.fanOut;
  if (!workspace || !fanOutOf) return null;
  const argv: string[] = [];
  for (const word of commandWords(command).words) {
    const value = staticWord(word);
    if (value === null) return null;
    argv.push(value);
  }
  const fanOut = fanOutOf(argv, {
    workspace,
    cwdDir: dir,
    turbo: target.turbo ?? null,
    nx: target.nx ?? null,
    ...(target.scripts !== null ? { root: { name: workspace.rootName ?? null, scripts: target.scripts } } : {}),
    packageManager: target.packageManager,
    rootExcluded: target.rootExcluded === true,
    yarnVariant: target.yarnVariant ?? null,
  });
  if (fanOut === null || fanOut.kind !== 'packages' || fanOut.packages.length === 0) return null;
  const runner = packageManagerOf(argv);
  const selected: Array<{ check: CheckDefinition; forms: CommandForm[]; context: string[] }> = [];
  for (const name of fanOut.packages) {
    const pkg = workspace.packages.find((member) => member.name === name);
    const found = pkg && checks.find(({ check }) => check.package === pkg.dir && check.script === fanOut.script && check.command === null);
    if (!found) return null;
    // npm running a pnpm check's script runs the same body another way: not the run its receipt records.
    if (runner !== null && found.check.packageManager !== runner) return null;
    selected.push(found);
  }
  return withAssignments(command, selected);
}

function withAssignments(command: Command, selected: Array<{ check: CheckDefinition; context: string[] }>): PartMatch | null {
  const assigned = assignments(command.prefix as Assignment[], [...new Set(selected.flatMap(({ context }) => context))]);
  return assigned === null ? null : { checks: selected.map(({ check }) => check), ...assigned };
}

/** The package manager a fan-out command runs its scripts through, when it names one (npx and turbo or nx do not). */
function packageManagerOf(argv: readonly string[]): PackageManagerName | null {
  const program = argv[0];
  if (program === undefined || !isPackageManager(program)) return null;
  // `pnpm exec turbo`, `pnpm turbo`, `yarn turbo`: the task runner runs the scripts, not this package manager.
  if (argv.some((word) => word === 'turbo' || word === 'nx')) return null;
  return program as PackageManagerName;
}

/** `dir` relative to the root ("" for the root itself), or null when it lies outside. */
function dirInRoot(dir: string, target: MatchTarget): string | null {
  const root = resolve(target.root);
  if (dir === root) return '';
  const rel = relative(root, dir);
  return rel === '' || rel.startsWith('..') || isAbsolute(rel) ? null : rel.split(sep).join('/');
}

function scriptsOf(check: CheckDefinition, target: MatchTarget): Record<string, string> | null {
  if (check.package === undefined) return target.scripts;
  return target.workspace?.packages.find((pkg) => pkg.dir === check.package)?.scripts ?? null;
}

/**
 * The static assignments. A variable that is part of the check's context must
 * have a static value, or the part cannot be judged: null then. So is a
 * package manager's setting, whatever its value: typed in front of one
 * command (`npm_config_workspace=packages/a npm test`), it changes what that
 * command runs, and the part runs as typed.
 */
function assignments(prefix: readonly Assignment[], context: readonly string[]): { env: Record<string, string>; dynamic: boolean } | null {
  const env: Record<string, string> = {};
  let dynamic = false;
  for (const assignment of prefix) {
    if (isPackageManagerSetting(assignment.name)) return null;
    const value = assignment.value.type === 'Word' && !assignment.append && assignment.index === undefined ? staticWord(assignment.value) : null;
    if (value === null) {
      if (envNameMatches(assignment.name, context)) return null;
      dynamic = true;
      continue;
    }
    env[assignment.name] = value;
  }
  return { env, dynamic };
}

function sameArgv(form: CommandForm, argv: readonly string[]): boolean {
  return form.length === argv.length && form.every((word, index) => word === argv[index]);
}

/** The environment names whose values are part of the check's context, as the run records them (the shell parser is loaded here already). */
function contextPatterns(check: CheckDefinition, scripts: Record<string, string> | null): string[] {
  return contextEnvPatterns(check, scripts, shellWords);
}

function isCd(command: Command): boolean {
  return command.name !== undefined && staticWord(command.name) === 'cd';
}

/** Follows `cd DIR` with one static argument; any other form loses the place. */
function afterCd(command: Command, place: Place, target: MatchTarget): Place {
  if (!place.known || command.prefix.length > 0) return { known: false };
  const argv = staticArgv(command);
  if (argv === null || argv.length !== 2 || command.suffix.length !== 1) return { known: false };
  const dir = argv[1]!;
  if (dir === '' || dir.startsWith('-')) return { known: false };
  if (target.cdpath && !isAbsolute(dir) && !/^\.\.?(?:\/|$)/.test(dir)) return { known: false };
  return { known: true, dir: resolve(place.dir, dir) };
}

/**
 * Whether running this element may change the shell itself for later
 * elements. Compound commands other than a subshell may run anything in this
 * shell, so they count; so does an expansion that assigns (`${X:=y}`, `$((x=1))`).
 */
function changesShellState(node: PipelineNode): boolean {
  if (node.type === 'Subshell') return assigningExpansion(node);
  if (node.type === 'Pipeline') return node.commands.some((child) => changesShellState(child));
  if (node.type !== 'Command') return true;
  if (node.name === undefined) return true; // a bare assignment sets a shell variable
  const name = staticWord(node.name);
  if (name === null) return true;
  if (name === 'set') {
    const argv = staticArgv(node);
    if (argv === null || argv.length < 2 || !argv.slice(1).every((arg) => HARMLESS_SET.test(arg))) return true;
  } else if (SHELL_STATE_BUILTINS.has(name)) {
    return true;
  } else if (name === 'printf' && node.suffix.some((item) => item.type === 'Word' && item.text.startsWith('-v'))) {
    return true; // printf -v NAME assigns a shell variable
  }
  return assigningExpansion(node);
}

function assigningExpansion(root: SyntaxNode): boolean {
  let found = false;
  const visit = (node: SyntaxNode) => {
    if (found) return;
    if (node.type === 'ArithmeticExpansion' || node.type === 'ArithmeticCommand' || node.type === 'ArithmeticFor') found = true;
    else if (node.type === 'ParameterExpansion' && node.operation?.type === 'Default' && (node.operation.operator === '=' || node.operation.operator === ':=')) found = true;
    else forEachChild(node, visit);
  };
  visit(root);
  return found;
}
