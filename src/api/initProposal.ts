import type { CheckConfig, CheckKind, Config, PackageManagerName } from '../core/config.js';
import { CHECK_NAME, CHECK_NAME_MAX, DEFAULT_INSTALLED } from '../core/config.js';
import { dependencyOrder, packageCheckName, type Workspace } from '../core/workspace.js';
import { judgeScript, type Judgement } from './initJudge.js';
import { orderBuildsFirst } from './initOrder.js';
import type { VerifyRun } from '../exec/verifyCheck.js';

export { classify, judgeScript } from './initJudge.js';

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
  /** `vouch init --all`: propose the scripts left out by default too (not lifecycle scripts, nor npm's placeholder). */
  all?: boolean;
  /** The workspace at the root (exec/readWorkspace.ts), or null: each package's scripts are proposed as PACKAGE#SCRIPT checks. */
  workspace?: Workspace | null;
  /** What checks read that a build writes. */
  buildOutputs?: BuildOutputFacts;
}

export interface BuildOutputFacts {
  /** The root tsconfig.json has project references (https://www.typescriptlang.org/docs/handbook/project-references.html). */
  rootReferences: boolean;
  /** The root tsconfig.json only lists its references ("files": [], no "include"), as a solution does. */
  rootSolution?: boolean;
  /** Workspace packages whose package.json entry points ("types", "main", …) lie in build output, not in the repository. */
  builtEntries: Array<{ package: string; field: string; path: string }>;
}

/** What `vouch init --verify` saw when it ran a check once. */
export type VerifyOutcome = VerifyRun;

export interface ProposedCheck {
  check: CheckConfig;
  /** The package.json script's command line, for script checks. */
  scriptCommand: string | null;
  /** Why this check was proposed, and why its kind. */
  reason: string;
  /** Why its inputs are what they are. */
  inputsNote: string;
  /** The workspace package's name, for a package check; null for a root check. */
  packageName: string | null;
  /** vouch made it up: the project has no script for it (a direct tsc --noEmit). */
  invented: boolean;
  /** Builds proposed before it because it reads their output. */
  needsFirst: string[];
  /** Set by `vouch init --verify`. */
  verify: VerifyOutcome | null;
}

export interface SkippedScript {
  script: string;
  reason: string;
  /** --all would propose it. */
  overridable: boolean;
  /** The workspace package's name, for a package script; null for a root script. */
  package: string | null;
}

/** An invented check that `vouch init --verify` ran and saw fail: it is not proposed. */
export interface DroppedCheck {
  name: string;
  command: string[];
  reason: string;
  verify: VerifyOutcome;
}

export interface Proposal {
  config: Config;
  checks: ProposedCheck[];
  /** Scripts that look like checks but are not proposed, with why. */
  skipped: SkippedScript[];
  /** Invented checks that failed under --verify. */
  dropped: DroppedCheck[];
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

const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]*$/;
const NAME_MAX = 64;

export const FAN_OUT_REASON = "runs the packages' own checks: each is proposed as PACKAGE#SCRIPT";

const byKind = (a: ProposedCheck, b: ProposedCheck) => KIND_ORDER.indexOf(a.check.kind) - KIND_ORDER.indexOf(b.check.kind);

/**
 * Proposes one check per script that verifies something, plus a direct tsc
 * check when the project has TypeScript but no typecheck script; in a
 * workspace, one PACKAGE#SCRIPT check per package script that does. Pure: the
 * caller gathers the facts, so every rule here is testable without files.
 */
export function proposeConfig(input: ProposalInput): Proposal {
  const pm = input.packageManager;
  const all = input.all === true;
  const workspace = input.workspace ?? null;
  const lockfileInput = pm.lockfile !== null && !pm.lockfile.startsWith('../') ? pm.lockfile : null;
  const installed = installedGlobs(input.workspaceInstallDirs ?? []);
  const skipped: SkippedScript[] = [];
  const packageSkipped: SkippedScript[] = [];
  const notes: string[] = [];

  // Packages first: whether a root script only fans out to them depends on what they propose.
  const packageChecks: ProposedCheck[] = [];
  const packageScripts = new Set<string>();
  if (workspace !== null) {
    for (const pkg of dependencyOrder(workspace)) {
      const scripts = pkg.scripts;
      for (const script of Object.keys(scripts)) packageScripts.add(script);
      const taken = new Set<string>();
      const judged = judgeAll(scripts, all);
      reserveNames(judged, taken);
      const own: ProposedCheck[] = [];
      for (const { script, command, judgement, skip } of judged) {
        if (judgement === null) continue;
        if (skip !== null) {
          packageSkipped.push({ script, reason: skip, package: pkg.name, overridable: overridable(judgement) });
          continue;
        }
        const name = packageCheckName(pkg.name, taken.has(script) && NAME_PATTERN.test(script) ? script : uniqueName(sanitiseName(script), taken));
        if (!CHECK_NAME.test(name) || name.length > CHECK_NAME_MAX) {
          packageSkipped.push({
            script,
            overridable: false,
            reason: `the package's name "${pkg.name}" cannot name a check (PACKAGE#SCRIPT takes an npm package name); give its package.json a "name"`,
            package: pkg.name,
          });
          continue;
        }
        // No "installed": a package check's default is its closure's node_modules (core/workspace.ts packageInstalled).
        const check: CheckConfig = { name, kind: judgement.kind, script, package: pkg.dir };
        own.push(proposed(check, command, judgement, pkg.name, 'inputs: the package, the workspace packages it depends on and the root\'s shared config (the default for a package check)'));
      }
      packageChecks.push(...own.sort(byKind));
    }
  }
  const packageCheckScripts = new Set(packageChecks.map((p) => p.check.script));

  const rootScripts = scriptsOf(input.packageJson);
  const rootJudged = judgeAll(rootScripts, all, (judgement) => {
    if (workspace === null || judgement.fanOut.length === 0 || !judgement.fanOut.some((script) => packageScripts.has(script))) return null;
    return judgement.fanOut.some((script) => packageCheckScripts.has(script))
      ? FAN_OUT_REASON
      : `runs the packages' own "${judgement.fanOut.join('", "')}" scripts, each judged on its own (see the packages' scripts left out)`;
  });
  const names = new Set<string>();
  reserveNames(rootJudged, names);
  const rootChecks: ProposedCheck[] = [];
  /** How each root check runs tsc: plain (reading project references' output) or -b (writing it). */
  const tscUse = new Map<string, { plain: boolean; build: boolean }>();
  for (const { script, command, judgement, skip } of rootJudged) {
    if (judgement === null) continue;
    if (skip !== null) {
      skipped.push({ script, reason: skip, package: null, overridable: overridable(judgement) });
      continue;
    }
    const name = names.has(script) && NAME_PATTERN.test(script) && script.length <= NAME_MAX ? script : uniqueName(sanitiseName(script), names);
    const check: CheckConfig = { name, kind: judgement.kind, script };
    let inputsNote: string;
    if (judgement.tscOnly) {
      check.inputs = narrowedTscInputs(lockfileInput);
      inputsNote = tscNarrowingNote(lockfileInput, pm.lockfile);
    } else {
      inputsNote = broadInputsNote(judgement.kind, judgement.tools, judgement.unknown);
    }
    if (installed) check.installed = installed;
    tscUse.set(name, { plain: judgement.tscPlain, build: judgement.tscBuild });
    rootChecks.push(proposed(check, command, judgement, null, inputsNote));
  }

  if (!rootChecks.some((p) => p.check.kind === 'typecheck')) {
    if (input.hasTsconfig && input.tsc !== null) {
      // A solution tsconfig.json ("files": [], references only) gives plain tsc nothing to check: tsc -b checks each reference.
      const solution = input.buildOutputs?.rootSolution === true;
      const check: CheckConfig = {
        name: uniqueName('typecheck', names),
        kind: 'typecheck',
        command: solution ? [input.tsc, '-b'] : [input.tsc, '--noEmit'],
        inputs: narrowedTscInputs(lockfileInput),
      };
      if (installed) check.installed = installed;
      rootChecks.push({
        ...invented(check),
        reason:
          'no typecheck script, but tsconfig.json is at the root and TypeScript is installed; ' +
          (solution
            ? 'tsconfig.json only lists project references, so "tsc -b" checks (and builds) each of them, where "tsc --noEmit" would check nothing; '
            : '') +
          '"tsc" is looked up in node_modules/.bin of the root and the directories above it first, so this runs the project\'s own TypeScript',
        inputsNote: tscNarrowingNote(lockfileInput, pm.lockfile),
      });
      tscUse.set(check.name, { plain: !solution, build: solution });
    } else if (input.hasTsconfig) {
      notes.push(
        'tsconfig.json is at the root, but TypeScript is not installed (no node_modules/.bin/tsc), so no typecheck is proposed. ' +
          'Install dependencies, or add a "typecheck" script, and run vouch init again.',
      );
    }
  }

  rootChecks.sort(byKind);

  // A check that reads build output runs after the build that writes it.
  const facts = input.buildOutputs;
  if (facts?.rootReferences) {
    const readers = rootChecks.filter((p) => p.check.kind === 'typecheck' && tscUse.get(p.check.name)?.plain === true && tscUse.get(p.check.name)?.build !== true);
    let builder = rootChecks.find((p) => tscUse.get(p.check.name)?.build === true);
    if (readers.length > 0 && builder === undefined && input.tsc !== null) {
      const check: CheckConfig = { name: uniqueName('tsc-build', names), kind: 'build', command: [input.tsc, '-b'] };
      if (installed) check.installed = installed;
      builder = {
        ...invented(check),
        reason: 'tsconfig.json has project references, and no script runs "tsc -b", which builds them: the typecheck reads their output',
        inputsNote: broadInputsNote('build', [], []),
      };
      rootChecks.push(builder);
    }
    if (readers.length > 0 && builder !== undefined) {
      for (const reader of readers) reader.needsFirst.push(builder.check.name);
      notes.push(
        `tsconfig.json has project references ("references"): ${quoteList(readers.map((p) => p.check.name))} run${readers.length === 1 ? 's' : ''} tsc without -b, ` +
          'which reads the declaration files that "tsc -b" writes for the referenced projects, and fails on a clean tree without them. ' +
          `So "${builder.check.name}" is proposed before ${readers.length === 1 ? 'it' : 'them'}: vouch run runs checks in the config's order.`,
      );
    }
  }
  if (workspace !== null && facts !== undefined && facts.builtEntries.length > 0) {
    const dependents = dependentsOf(workspace);
    const readsBuilds = (p: ProposedCheck) => p.check.kind === 'typecheck' || p.check.kind === 'test' || p.check.kind === 'build';
    const ordered: string[] = [];
    const unbuilt: string[] = [];
    for (const entry of facts.builtEntries) {
      const importers = dependents(entry.package);
      const readers = [
        ...rootChecks.filter((p) => p.check.kind === 'typecheck' || p.check.kind === 'test'),
        ...packageChecks.filter((p) => p.packageName !== null && importers.has(p.packageName) && readsBuilds(p)),
      ];
      if (readers.length === 0) continue;
      const builder = packageChecks.find((p) => p.packageName === entry.package && p.check.kind === 'build');
      const where = `${entry.package} ("${entry.field}": ${entry.path})`;
      if (builder === undefined) {
        unbuilt.push(where);
        continue;
      }
      for (const reader of readers) reader.needsFirst.push(builder.check.name);
      ordered.push(`${where} before ${plainList(readers.map((p) => p.check.name))}`);
    }
    // One note for all the packages: a workspace of 200 packages that all build to dist/ needs no 200 notes.
    const whatItMeans = 'build output that is not in the repository, which the checks of the packages that import them read';
    if (ordered.length > 0) {
      notes.push(
        `Packages point their package.json entry into ${whatItMeans}. So each one's build is proposed before those checks ` +
          `(vouch run runs checks in the config's order): ${plainList(ordered, 5)}.`,
      );
    }
    if (unbuilt.length > 0) {
      notes.push(
        `Packages point their package.json entry into ${whatItMeans}, but have no build script vouch proposes, ` +
          `so those checks fail on a clean tree until they are built: ${plainList(unbuilt, 5)}.`,
      );
    }
  }

  const checks = orderBuildsFirst([...rootChecks, ...packageChecks]);

  if (checks.length > 0 && input.tracing !== undefined) {
    if (input.tracing.available) {
      for (const p of checks) p.check.mode = 'traced';
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
    checks: checks.map((p) => p.check),
  };
  return { config, checks, skipped: [...skipped, ...packageSkipped], dropped: [], notes };
}

/** Said when a proposal has an invented check that --verify did not run. */
export const INVENTED_NOTE =
  'A check marked "invented" runs a command the project has no script for. vouch proposes it only when it passes on this tree: ' +
  'run "vouch init --verify" to run each proposed check once first, which drops an invented check that fails.';

function proposed(check: CheckConfig, command: string, judgement: Judgement, packageName: string | null, inputsNote: string): ProposedCheck {
  return { check, scriptCommand: command, reason: judgement.reason, inputsNote, packageName, invented: false, needsFirst: [], verify: null };
}

function invented(check: CheckConfig): Omit<ProposedCheck, 'reason' | 'inputsNote'> {
  return { check, scriptCommand: null, packageName: null, invented: true, needsFirst: [], verify: null };
}

const quoteList = (names: readonly string[]) => names.map((name) => `"${name}"`).join(', ');

/** At most `max` items, then how many more. */
function plainList(items: readonly string[], max = 4): string {
  if (items.length <= max) return items.join(', ');
  return `${items.slice(0, max).join(', ')} and ${items.length - max} more`;
}

/** For each package, the set of workspace packages that depend on it, transitively (itself not included). */
function dependentsOf(workspace: Workspace): (name: string) => Set<string> {
  const reverse = new Map<string, string[]>();
  for (const pkg of workspace.packages) {
    for (const dep of pkg.dependsOn) reverse.set(dep, [...(reverse.get(dep) ?? []), pkg.name]);
  }
  return (name) => {
    const seen = new Set<string>();
    const stack = [...(reverse.get(name) ?? [])];
    while (stack.length > 0) {
      const next = stack.pop()!;
      if (seen.has(next) || next === name) continue;
      seen.add(next);
      stack.push(...(reverse.get(next) ?? []));
    }
    return seen;
  };
}

interface Judged {
  script: string;
  command: string;
  judgement: Judgement | null;
  /** Why it is left out, or null when it is proposed. */
  skip: string | null;
}

/**
 * Judges every script of one package.json. A script that only runs other
 * scripts that are checks themselves (`npm run lint && npm run test`) is left
 * out: its parts are proposed. `extraSkip` adds a reason of the caller's.
 */
function judgeAll(scripts: Record<string, string>, all: boolean, extraSkip?: (judgement: Judgement) => string | null): Judged[] {
  const judged = new Map(Object.entries(scripts).map(([script, command]) => [script, { script, command, judgement: judgeScript(script, command, scripts), skip: null as string | null }]));
  const overridden = (judgement: Judgement, reason: string | null) =>
    reason === null ? null : all && (judgement.skip === null || judgement.skip.overridable) ? null : reason;
  for (const entry of judged.values()) {
    const { judgement } = entry;
    if (judgement === null) continue;
    if (judgement.skip !== null) {
      entry.skip = judgement.skip.overridable && all ? null : judgement.skip.reason;
      if (entry.skip === null) entry.judgement = { ...judgement, reason: `${judgement.reason} (proposed because of --all; by default left out: ${judgement.skip.reason})` };
    }
    if (entry.skip === null && extraSkip) {
      const reason = extraSkip(judgement);
      entry.skip = overridden(judgement, reason);
      if (entry.skip === null && reason !== null) entry.judgement = { ...entry.judgement!, reason: `${entry.judgement!.reason} (proposed because of --all; by default left out: ${reason})` };
    }
  }
  // Covered: proposed itself, or made only of scripts that are covered.
  const isCovered = (script: string, path: Set<string>): boolean => {
    const entry = judged.get(script);
    if (entry === undefined || entry.judgement === null || path.has(script)) return false;
    if (entry.skip === null) return true;
    if (!isAggregator(entry.judgement)) return false;
    path.add(script);
    const result = entry.judgement.delegates.every((part) => isCovered(part, path));
    path.delete(script);
    return result;
  };
  for (const entry of judged.values()) {
    if (entry.judgement === null || entry.skip !== null || !isAggregator(entry.judgement)) continue;
    if (!entry.judgement.delegates.every((part) => isCovered(part, new Set([entry.script])))) continue;
    const parts = entry.judgement.delegates;
    const reason = `only runs ${quoteList(parts)}, which ${parts.length === 1 ? 'is a check itself' : 'are checks themselves'} (or made of checks): its parts are proposed`;
    entry.skip = overridden(entry.judgement, reason);
    if (entry.skip === null) entry.judgement = { ...entry.judgement, reason: `${entry.judgement.reason} (proposed because of --all; by default left out: ${reason})` };
  }
  return [...judged.values()];
}

/** Whether --all proposes a script left out: all but lifecycle scripts and npm's placeholder. */
const overridable = (judgement: Judgement) => judgement.skip === null || judgement.skip.overridable;

/** Runs other scripts of its package.json and nothing else. */
const isAggregator = (judgement: Judgement) => judgement.ownCommands === 0 && judgement.delegates.length > 0;

/** A script whose name is already a valid check name keeps it; sanitised names make way for those. */
function reserveNames(judged: readonly Judged[], names: Set<string>): void {
  for (const { script, judgement, skip } of judged) {
    if (judgement !== null && skip === null && NAME_PATTERN.test(script) && script.length <= NAME_MAX) names.add(script);
  }
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

