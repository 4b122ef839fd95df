import type { CheckConfig, CheckKind, Config, PackageManagerName } from '../core/config.js';
import { DEFAULT_INSTALLED } from '../core/config.js';
import { isPackageManager, runnerLength, scriptRun } from '../core/packageManagerGrammar.js';
import { simpleCommands } from '../core/shellWords.js';

/** What `vouch init` learned about the project; everything the proposal depends on. */
export interface ProposalInput {
  /** The root package.json, parsed. */
  packageJson: Record<string, unknown>;
  packageManager: { name: PackageManagerName; lockfile: string | null };
  /** A tsconfig.json at the root. */
  hasTsconfig: boolean;
  /**
   * How to run the project's own tsc, or null when TypeScript is not installed.
   * A check's PATH starts with node_modules/.bin of the root and of each
   * directory above it, so "tsc" finds a hoisted TypeScript too.
   */
  tsc: string | null;
  /** Root-relative workspace directories that have their own node_modules. */
  workspaceInstallDirs?: readonly string[];
  /** The config's "root" field, when the config file does not sit in the root. */
  rootField?: string;
  /**
   * Whether a run can be traced here (exec/trace/tracer.ts's traceAvailability), and if not why:
   * traced checks are proposed only where tracing works. Left out, checks are declared and
   * nothing is said.
   */
  tracing?: { available: true } | { available: false; message: string };
}

export interface ProposedCheck {
  check: CheckConfig;
  /** The package.json script's command line, for script checks. */
  scriptCommand: string | null;
  /** Why this check was proposed, and why its kind. */
  reason: string;
  /** Why its inputs are what they are. */
  inputsNote: string;
}

export interface SkippedScript {
  script: string;
  reason: string;
}

export interface Proposal {
  config: Config;
  checks: ProposedCheck[];
  /** Scripts that look like checks but are not proposed, with why. */
  skipped: SkippedScript[];
  /** Things the user should know that are not about one check. */
  notes: string[];
}

/**
 * tsc reads TypeScript and JavaScript sources, declaration files, JSON modules
 * and its JSON configs, and nothing else from the source tree; its packages
 * are installed inputs. A README or stylesheet edit cannot change its verdict.
 */
export const TSC_INPUTS = ['**/*.{ts,tsx,mts,cts,js,jsx,mjs,cjs,json,jsonc}'];

const KIND_ORDER: readonly CheckKind[] = ['typecheck', 'lint', 'test', 'build', 'custom'];

const KIND_PHRASE: Record<CheckKind, string> = {
  typecheck: 'a type checker',
  lint: 'a linter',
  test: 'a test runner',
  build: 'a build',
  custom: 'a custom check',
};

const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]*$/;
const NAME_MAX = 64;

/** npm lifecycle scripts: they run around installs and publishes, not as checks. */
const LIFECYCLE = new Set([
  'preinstall', 'install', 'postinstall', 'prepare', 'prepublish', 'prepublishOnly', 'publish', 'postpublish',
  'prepack', 'pack', 'postpack', 'preversion', 'version', 'postversion', 'dependencies',
  'prestart', 'start', 'poststart', 'prestop', 'stop', 'poststop', 'prerestart', 'restart', 'postrestart',
]);

/**
 * Proposes one check per script that verifies something, plus a direct tsc
 * check when the project has TypeScript but no typecheck script. Pure: the
 * caller gathers the facts, so every rule here is testable without files.
 */
export function proposeConfig(input: ProposalInput): Proposal {
  const scripts = scriptsOf(input.packageJson);
  const pm = input.packageManager;
  const lockfileInput = pm.lockfile !== null && !pm.lockfile.startsWith('../') ? pm.lockfile : null;
  const installed = installedGlobs(input.workspaceInstallDirs ?? []);
  const proposed: ProposedCheck[] = [];
  const skipped: SkippedScript[] = [];
  const notes: string[] = [];
  const names = new Set<string>();

  const judged = Object.entries(scripts).map(([script, command]) => ({ script, command, verdict: judgeScript(script, command, scripts) }));
  // A script whose name is already a valid check name keeps it; sanitised names make way for those.
  for (const { script, verdict } of judged) {
    if (verdict !== null && !('skip' in verdict) && NAME_PATTERN.test(script) && script.length <= NAME_MAX) names.add(script);
  }
  for (const { script, command, verdict } of judged) {
    if (verdict === null) continue;
    if ('skip' in verdict) {
      skipped.push({ script, reason: verdict.skip });
      continue;
    }
    const name = names.has(script) ? script : uniqueName(sanitiseName(script), names);
    const check: CheckConfig = { name, kind: verdict.kind, script };
    let inputsNote: string;
    if (verdict.tscOnly) {
      check.inputs = narrowedTscInputs(lockfileInput);
      inputsNote = tscNarrowingNote(lockfileInput, pm.lockfile);
    } else {
      inputsNote = broadInputsNote(verdict.kind, verdict.tools, verdict.unknown);
    }
    if (installed) check.installed = installed;
    proposed.push({ check, scriptCommand: command, reason: verdict.reason, inputsNote });
  }

  if (!proposed.some((p) => p.check.kind === 'typecheck')) {
    if (input.hasTsconfig && input.tsc !== null) {
      const check: CheckConfig = {
        name: uniqueName('typecheck', names),
        kind: 'typecheck',
        command: [input.tsc, '--noEmit'],
        inputs: narrowedTscInputs(lockfileInput),
      };
      if (installed) check.installed = installed;
      proposed.push({
        check,
        scriptCommand: null,
        reason:
          'no typecheck script, but tsconfig.json is at the root and TypeScript is installed; ' +
          '"tsc" is looked up in node_modules/.bin of the root and the directories above it first, so this runs the project\'s own TypeScript',
        inputsNote: tscNarrowingNote(lockfileInput, pm.lockfile),
      });
    } else if (input.hasTsconfig) {
      notes.push(
        'tsconfig.json is at the root, but TypeScript is not installed (no node_modules/.bin/tsc), so no typecheck is proposed. ' +
          'Install dependencies, or add a "typecheck" script, and run vouch init again.',
      );
    }
  }

  proposed.sort((a, b) => KIND_ORDER.indexOf(a.check.kind) - KIND_ORDER.indexOf(b.check.kind));

  if (proposed.length > 0 && input.tracing !== undefined) {
    if (input.tracing.available) {
      for (const p of proposed) p.check.mode = 'traced';
      notes.push(TRACED_NOTE);
    } else {
      notes.push(declaredNote(input.tracing.message));
    }
  }

  // Field order is the order a reader wants: format, where, how, what.
  const config: Config = {
    schema: 1,
    ...(input.rootField !== undefined && input.rootField !== '.' && input.rootField !== '' ? { root: input.rootField } : {}),
    packageManager: pm.name,
    checks: proposed.map((p) => p.check),
  };
  return { config, checks: proposed, skipped, notes };
}

const EVIDENCE_DOCS = 'see "Evidence: declared or traced" in docs/config.md';

const TRACED_NOTE =
  'Checks are proposed "traced": a receipt holds the files its run really read, listed and looked up, so an edit to a file ' +
  `a check never reads leaves it CURRENT. Their "inputs" stand in where tracing cannot run; ${EVIDENCE_DOCS}.`;

/** Said once, not per check: the reason is the machine's, the same for every check. */
function declaredNote(why: string): string {
  return (
    'Checks are proposed "declared" (a receipt holds the files its "inputs" globs match), not "traced" (what its run really reads), ' +
    `because tracing cannot run here: ${why}. Once it can, add "mode": "traced" to a check; ${EVIDENCE_DOCS}.`
  );
}

function scriptsOf(packageJson: Record<string, unknown>): Record<string, string> {
  const raw = packageJson.scripts;
  const scripts: Record<string, string> = {};
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return scripts;
  for (const [name, command] of Object.entries(raw)) if (typeof command === 'string') scripts[name] = command;
  return scripts;
}

function narrowedTscInputs(lockfile: string | null): string[] {
  return lockfile === null ? [...TSC_INPUTS] : [...TSC_INPUTS, lockfile];
}

function tscNarrowingNote(lockfileInput: string | null, lockfile: string | null): string {
  const lock =
    lockfileInput !== null
      ? ` and ${lockfileInput}`
      : lockfile !== null
        ? ` (the lockfile ${lockfile} is outside the root, so it cannot be an input; installed packages still are)`
        : '';
  return (
    `inputs narrowed to TypeScript, JavaScript and JSON files${lock}: tsc reads only those sources and its JSON configs, ` +
    'so editing a README or a stylesheet leaves the receipt CURRENT'
  );
}

function broadInputsNote(kind: CheckKind, tools: readonly string[], unknown: readonly string[]): string {
  const others = tools.filter((tool) => tool !== 'tsc');
  const what =
    kind === 'typecheck'
      ? others.length > 0
        ? `${others.join(', ')} reads more than TypeScript (for example .vue files)`
        : unknown.length > 0
          ? `the script also runs ${unknown.map((program) => `"${program}"`).join(', ')}, which may read any file`
          : 'vouch cannot tell which files the script reads'
      : kind === 'lint'
        ? 'linters read any file their plugins cover (Markdown, YAML, CSS)'
        : kind === 'test'
          ? 'tests read fixtures, snapshots and data files of any kind'
          : kind === 'build'
            ? 'builds read assets, styles and templates of any kind'
            : 'a custom check may read any file';
  return `inputs: every source file (the default), because ${what}`;
}

function installedGlobs(workspaceDirs: readonly string[]): string[] | undefined {
  if (workspaceDirs.length === 0) return undefined;
  return [...DEFAULT_INSTALLED, ...[...new Set(workspaceDirs)].sort().map((dir) => `${dir}/node_modules/**`)];
}

/** A check name the config accepts, made from a script name: other characters become "-". */
export function sanitiseName(script: string): string {
  let name = script
    .replace(/[^A-Za-z0-9._:-]+$/, '')
    .replace(/[^A-Za-z0-9._:-]+/g, '-').replace(/^[^A-Za-z0-9]+/, '').slice(0, NAME_MAX);
  if (!NAME_PATTERN.test(name)) name = 'script';
  return name;
}

function uniqueName(wanted: string, taken: Set<string>): string {
  let name = wanted;
  for (let n = 2; taken.has(name); n += 1) name = `${wanted.slice(0, NAME_MAX - String(n).length - 1)}-${n}`;
  taken.add(name);
  return name;
}

// ---- Judging one script ------------------------------------------------------

type Verdict = { kind: CheckKind; reason: string; tscOnly: boolean; tools: string[]; unknown: string[] } | { skip: string } | null;

interface ToolUse {
  tool: string;
  kind: CheckKind;
  watch: boolean;
  writes: boolean;
}

interface Analysis {
  /** Recognised tools run by the script itself. */
  direct: ToolUse[];
  /** Recognised tools, including those of scripts it runs and its pre/post scripts. */
  all: ToolUse[];
  /** Programs it runs that are not recognised tools (they may read anything). */
  unknown: string[];
  /** Extra arguments forwarded to another script ("npm run x -- --watch"). */
  watchForwarded: boolean;
  writesForwarded: boolean;
}

function nameKind(script: string): CheckKind | 'check' | null {
  if (/^(typecheck|type-check|tsc)(:.+)?$/.test(script)) return 'typecheck';
  if (/^lint(:.+)?$/.test(script)) return 'lint';
  if (/^test(:.+)?$/.test(script)) return 'test';
  if (script === 'build') return 'build';
  if (script === 'check') return 'check';
  return null;
}

const WATCH_NAME = /^(dev|start|serve|preview|watch)(:.*)?$|:(watch|dev)$/;

function judgeScript(script: string, command: string, scripts: Record<string, string>): Verdict {
  const byName = nameKind(script);
  const analysis = analyse(script, scripts);
  if (byName === null && analysis.direct.length === 0) return null;

  const tools = [...new Set(analysis.all.map((use) => use.tool))];
  if (/no test specified/.test(command)) return { skip: 'npm\'s placeholder test script: it only fails' };
  if (WATCH_NAME.test(script)) return { skip: 'a dev or watch mode by its name: it never finishes, so it cannot leave a receipt' };
  const watching = analysis.all.find((use) => use.watch);
  if (watching || analysis.watchForwarded) {
    return { skip: `runs ${watching ? watching.tool : 'a script'} in watch mode: it never finishes, so it cannot leave a receipt` };
  }
  if (analysis.unknown.includes('lint-staged')) {
    return { skip: 'runs lint-staged, which checks only staged files and may rewrite them: its verdict is not about the working tree' };
  }
  const writing = analysis.all.find((use) => use.writes);
  if (writing || analysis.writesForwarded) {
    return { skip: `runs ${writing ? writing.tool : 'a script'} in a mode that rewrites files (--fix, --write): a check must only read what it checks` };
  }
  if (LIFECYCLE.has(script) || hookTarget(script, scripts) !== null) {
    return { skip: `a lifecycle script: the package manager runs it around "${hookTarget(script, scripts) ?? script}"` };
  }

  const toolKinds = [...new Set(analysis.all.map((use) => use.kind))];
  const toolText = tools.length > 0 ? `runs ${tools.join(', ')}` : `runs "${command}"`;
  let kind: CheckKind;
  let reason: string;
  if (byName !== null && byName !== 'check') {
    kind = byName;
    reason = `script "${script}": its name says ${kind}; it ${toolText}`;
  } else if (toolKinds.length === 1 && toolKinds[0] !== undefined) {
    kind = toolKinds[0];
    reason =
      byName === 'check'
        ? `script "check" ${toolText}, ${KIND_PHRASE[kind]}`
        : `script "${script}" ${toolText}, ${KIND_PHRASE[kind]}`;
  } else {
    kind = 'custom';
    reason =
      toolKinds.length > 1
        ? `script "${script}" ${toolText}: several kinds at once, so its kind is custom`
        : `script "${script}" is named "check"; it ${toolText}, so its kind is custom`;
  }
  const tscOnly = kind === 'typecheck' && analysis.unknown.length === 0 && analysis.all.length > 0 && analysis.all.every((use) => use.tool === 'tsc');
  return { kind, reason, tscOnly, tools, unknown: [...new Set(analysis.unknown)] };
}

function hookTarget(script: string, scripts: Record<string, string>): string | null {
  const match = /^(pre|post)(.+)$/.exec(script);
  const target = match?.[2];
  if (target === undefined) return null;
  return target in scripts || LIFECYCLE.has(target) ? target : null;
}

function analyse(script: string, scripts: Record<string, string>, seen: Set<string> = new Set()): Analysis {
  const analysis: Analysis = { direct: [], all: [], unknown: [], watchForwarded: false, writesForwarded: false };
  seen.add(script);
  const body = scripts[script] ?? '';
  // The package manager may run "pre<name>" and "post<name>" around it: what they read counts too.
  for (const hook of [`pre${script}`, `post${script}`]) {
    if (hook in scripts && !seen.has(hook)) merge(analysis, analyse(hook, scripts, seen));
  }
  for (const words of simpleCommands(body)) {
    const invocation = unwrap(words);
    if (invocation === null) continue;
    const delegated = delegation(invocation, scripts);
    if (delegated !== null) {
      if (delegated.script in scripts && !seen.has(delegated.script)) {
        merge(analysis, analyse(delegated.script, scripts, seen));
      } else if (!(delegated.script in scripts)) {
        analysis.unknown.push(words.join(' '));
      }
      if (delegated.forwarded.some(isWatchFlag)) analysis.watchForwarded = true;
      if (delegated.forwarded.some(isWriteFlag)) analysis.writesForwarded = true;
      continue;
    }
    const use = classify(invocation.program, invocation.args);
    if (use === null) {
      analysis.unknown.push(invocation.program);
    } else {
      analysis.direct.push(use);
      analysis.all.push(use);
    }
  }
  return analysis;
}

function merge(into: Analysis, from: Analysis): void {
  into.all.push(...from.all);
  into.unknown.push(...from.unknown);
  into.watchForwarded ||= from.watchForwarded;
  into.writesForwarded ||= from.writesForwarded;
}

const isWatchFlag = (arg: string) => arg === '--watch' || arg === '--watchAll' || arg === '-w';
const isWriteFlag = (arg: string) => arg === '--fix' || arg === '--write';

// ---- Reading a command line ---------------------------------------------------

interface Invocation {
  program: string;
  args: string[];
}

/** Programs that run another program given later on their command line. */
const WRAPPERS = new Set(['cross-env', 'cross-env-shell', 'dotenv', 'dotenv-cli', 'env', 'time', 'nice', 'nohup', 'c8', 'nyc']);
const TOOLS = new Set(['tsc', 'vue-tsc', 'eslint', 'oxlint', 'biome', 'prettier', 'vitest', 'jest', 'mocha', 'node', 'ava']);

const baseName = (word: string) => word.slice(word.lastIndexOf('/') + 1);
const isAssignment = (word: string) => /^[A-Za-z_][A-Za-z0-9_]*=/.test(word);

/** The program a simple command really runs, past variable assignments, package runners (npx, pnpm exec, …) and wrappers. */
function unwrap(words: readonly string[]): Invocation | null {
  const start = words.findIndex((word) => !isAssignment(word));
  if (start === -1) return null;
  let rest = words.slice(start);
  for (let guard = 0; guard < 8; guard += 1) {
    const program = baseName(rest[0] as string);
    if (runnerLength([program, ...rest.slice(1)]) > 0 || WRAPPERS.has(program)) {
      const next = rest.findIndex((word, index) => index > 0 && (TOOLS.has(baseName(word)) || isPackageManager(baseName(word))));
      if (next === -1) return { program, args: rest.slice(1) };
      rest = rest.slice(next);
      continue;
    }
    return { program, args: rest.slice(1) };
  }
  return { program: baseName(rest[0] as string), args: rest.slice(1) };
}

/** "npm run lint", "npm run-script lint", "pnpm lint", "yarn test": the script it runs and the arguments it forwards. */
function delegation(invocation: Invocation, scripts: Record<string, string>): { script: string; forwarded: string[] } | null {
  const run = scriptRun([invocation.program, ...invocation.args], scripts);
  return run === null ? null : { script: run.script, forwarded: run.args };
}

function firstOperand(args: readonly string[]): string | undefined {
  return args.find((arg) => !arg.startsWith('-'));
}

/** What a recognised tool verifies, and whether this command line watches or writes. */
function classify(program: string, args: readonly string[]): ToolUse | null {
  const has = (...flags: string[]) => args.some((arg) => flags.includes(arg) || flags.some((flag) => arg.startsWith(`${flag}=`)));
  switch (program) {
    case 'tsc':
    case 'vue-tsc':
      return { tool: program, kind: 'typecheck', watch: has('--watch', '-w'), writes: false };
    case 'eslint':
      return { tool: 'eslint', kind: 'lint', watch: false, writes: has('--fix') };
    case 'oxlint':
      return { tool: 'oxlint', kind: 'lint', watch: false, writes: has('--fix', '--fix-suggestions', '--fix-dangerously') };
    case 'biome': {
      const sub = firstOperand(args);
      const writes = has('--write', '--fix', '--apply', '--apply-unsafe');
      if (sub === 'check' || sub === 'lint' || sub === 'ci') return { tool: `biome ${sub}`, kind: 'lint', watch: false, writes };
      // Without --write, "biome format" reports unformatted files and fails: a check.
      if (sub === 'format') return { tool: 'biome format', kind: 'lint', watch: false, writes };
      return null;
    }
    case 'prettier':
      if (has('--write', '-w')) return { tool: 'prettier', kind: 'lint', watch: false, writes: true };
      if (has('--check', '-c', '--list-different', '-l')) return { tool: 'prettier --check', kind: 'lint', watch: false, writes: false };
      return null; // plain prettier prints formatted files; it verifies nothing
    case 'vitest': {
      const sub = firstOperand(args);
      if (sub === 'bench' || sub === 'list' || sub === 'init') return null;
      return { tool: 'vitest', kind: 'test', watch: sub === 'watch' || sub === 'dev' || has('--watch', '-w'), writes: false };
    }
    case 'jest':
      return { tool: 'jest', kind: 'test', watch: has('--watch', '--watchAll'), writes: false };
    case 'mocha':
      return { tool: 'mocha', kind: 'test', watch: has('--watch', '-w'), writes: false };
    case 'ava':
      return { tool: 'ava', kind: 'test', watch: has('--watch', '-w'), writes: false };
    case 'node':
      if (!has('--test')) return null;
      return { tool: 'node --test', kind: 'test', watch: has('--watch', '--watch-path'), writes: false };
    case 'bun':
      if (args[0] !== 'test') return null;
      return { tool: 'bun test', kind: 'test', watch: has('--watch'), writes: false };
    default:
      return null;
  }
}
