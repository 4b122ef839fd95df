import type { PackageManagerName } from '../../core/config.js';
import { RUN_COMMANDS, scriptRun } from '../../core/packageManagerGrammar.js';
import type { TaskRunnerConfig } from '../../core/taskRunners.js';
import { dependencyOrder, packageByDir, type Workspace, type WorkspacePackage } from '../../core/workspace.js';

/*
 * What every fan-out reader shares: the target it reads against, the answer,
 * and the rules that hold for every tool.
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
  /**
   * Whether pnpm and npm are known to leave the root out of workspace
   * commands: `include-workspace-root` unset in every .npmrc, in the
   * environment (npm_config_include_workspace_root) and, for pnpm, in
   * pnpm-workspace.yaml (includeWorkspaceRoot). The setting makes `pnpm -r S`
   * (and pnpm's exclusion-only filters) and every npm workspace form, `npm test`
   * in a package's directory included, run the root's S too
   * (https://pnpm.io/cli/recursive#--include-workspace-root,
   * https://docs.npmjs.com/cli/using-npm/config#include-workspace-root; checked
   * with pnpm 10 and npm 11). Not known (absent or false): those forms are
   * exact only when the root has no script S.
   */
  rootExcluded?: boolean;
  /** The project's package manager, when known: a package-manager form typed through another one fails (or reads another workspace), so it is unresolved. */
  packageManager?: PackageManagerName | null;
  /**
   * Yarn 1 ("classic") or 2+ ("berry"), when known: `yarn workspaces run` is yarn 1's and `yarn workspaces foreach`
   * yarn 2+'s, and each fails under the other, so it runs as typed there. Unknown: both resolve.
   */
  yarnVariant?: 'classic' | 'berry' | null;
}

export type FanOut =
  | { kind: 'packages'; script: string; packages: string[] }
  | { kind: 'unresolved'; why: string }
  | null;

export type Answer = Exclude<FanOut, null>;

export const unresolved = (why: string): Answer => ({ kind: 'unresolved', why });

/**
 * The answer for a selection: the selected packages that have the script, in
 * dependency order. `skipMissing` says whether the tool skips a selected
 * package without the script (pnpm, turbo, bun, npm with --if-present) or fails.
 */
export function finish(selected: readonly WorkspacePackage[], script: string, skipMissing: boolean, workspace: Workspace): Answer {
  if (selected.length === 0) return unresolved('the selection matches no workspace package');
  const having = selected.filter((pkg) => Object.hasOwn(pkg.scripts, script));
  if (having.length === 0) return unresolved(`none of the selected packages has a "${script}" script`);
  if (!skipMissing && having.length < selected.length) {
    const missing = selected.filter((pkg) => !Object.hasOwn(pkg.scripts, script)).map((pkg) => pkg.name);
    return unresolved(`${missing.join(', ')} ${missing.length === 1 ? 'has' : 'have'} no "${script}" script, and the command would fail there`);
  }
  const names = new Set(having.map((pkg) => pkg.name));
  return { kind: 'packages', script, packages: dependencyOrder(workspace).filter((pkg) => names.has(pkg.name)).map((pkg) => pkg.name) };
}

/** Null when the root cannot run the script: it is known, and has no script of that name. */
export function rootMayRun(target: FanOutTarget, script: string): string | null {
  if (target.root === undefined) return `the selection may take in the workspace root, whose scripts are not known`;
  if (Object.hasOwn(target.root.scripts, script)) return `the selection takes in the workspace root, which has a "${script}" script too`;
  return null;
}

/** For pnpm and npm: null when the root cannot be among the packages that run the script (see FanOutTarget.rootExcluded). */
export function rootSettingsMayRun(target: FanOutTarget, script: string): string | null {
  if (target.rootExcluded === true) return null;
  const root = rootMayRun(target, script);
  return root === null ? null : `${root} (and include-workspace-root may be set)`;
}

export function wrongManager(program: PackageManagerName, target: FanOutTarget): Answer | null {
  const expected = target.packageManager;
  if (expected === undefined || expected === null || expected === program) return null;
  return unresolved(`the project uses ${expected}, not ${program}`);
}

export function fromRoot(target: FanOutTarget): Answer | null {
  return target.cwdDir === '' ? null : unresolved('a workspace command run outside the workspace root (the tools scope it, or resolve its selectors, by the directory)');
}

/**
 * A plain script form run in a package's directory (`cd packages/a && pnpm test`):
 * that package's script. Null in the root (a root check) and in any
 * directory that is not a package's own.
 */
export function plainInPackage(argv: readonly string[], target: FanOutTarget): FanOut {
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
  // npm takes a workspace's directory as --workspace (https://docs.npmjs.com/cli/using-npm/workspaces#running-commands-in-the-context-of-workspaces), so include-workspace-root applies.
  if (program === 'npm') {
    const settings = rootSettingsMayRun(target, run.script);
    if (settings) return unresolved(settings);
  }
  return { kind: 'packages', script: run.script, packages: [pkg.name] };
}

/** `--flag value` or `--flag=value` at args[index]; the value and how many words it took, or null when absent. */
export function flagValue(args: readonly string[], index: number, names: readonly string[]): { value: string | undefined; width: number } | null {
  const word = args[index]!;
  if (names.includes(word)) return { value: args[index + 1], width: 2 };
  for (const name of names) if (name.startsWith('--') && word.startsWith(`${name}=`)) return { value: word.slice(name.length + 1), width: 1 };
  return null;
}
