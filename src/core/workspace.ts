/*
 * A workspace: the packages a pnpm, npm, yarn or bun workspace declares, and
 * how they depend on each other. Pure: fs/readWorkspace.ts reads it.
 *
 * A package check is named as turbo names a task, `PACKAGE#SCRIPT`
 * (https://turborepo.com/docs/reference/run#running-tasks-in-specific-packages),
 * so `@scope/a#test` is the `test` script of the package named `@scope/a`.
 */

export interface WorkspacePackage {
  /** package.json "name"; a package without one is named by its directory. */
  name: string;
  /** Root-relative directory, "/"-separated; never "" (the root is not a member). */
  dir: string;
  /** Its package.json scripts (string values only). */
  scripts: Record<string, string>;
  /** Names of the workspace packages it depends on directly, from dependencies, devDependencies, optionalDependencies and peerDependencies, sorted. */
  dependsOn: string[];
}

export interface Workspace {
  /** The workspace globs as declared (pnpm-workspace.yaml "packages", package.json "workspaces"). */
  globs: string[];
  /** Members, sorted by directory. */
  packages: WorkspacePackage[];
  /** The root package.json's "name", when it has one: some fan-out forms take the root in or leave it out by name. */
  rootName?: string | null;
  /**
   * The root package's edges to members, when read: the members it depends on, and the members that depend
   * on it by its name. A fan-out selector following the graph may take the root in (agents/fanOut.ts).
   */
  rootEdges?: { dependsOn: string[]; dependedOnBy: string[] };
}

/** The separator between a package and its script in a check name. */
export const PACKAGE_SEPARATOR = '#';

export function packageCheckName(packageName: string, script: string): string {
  return `${packageName}${PACKAGE_SEPARATOR}${script}`;
}

/** `@scope/a#test` → { package: '@scope/a', script: 'test' }; null for a root check's name. */
export function splitCheckName(name: string): { package: string; script: string } | null {
  const at = name.lastIndexOf(PACKAGE_SEPARATOR);
  if (at <= 0 || at === name.length - 1) return null;
  return { package: name.slice(0, at), script: name.slice(at + 1) };
}

export function packageByName(workspace: Workspace, name: string): WorkspacePackage | undefined {
  return workspace.packages.find((pkg) => pkg.name === name);
}

export function packageByDir(workspace: Workspace, dir: string): WorkspacePackage | undefined {
  return workspace.packages.find((pkg) => pkg.dir === dir);
}

/** The package itself and every workspace package it depends on, transitively; sorted by name. */
export function dependencyClosure(workspace: Workspace, name: string): WorkspacePackage[] {
  const byName = new Map(workspace.packages.map((pkg) => [pkg.name, pkg]));
  const seen = new Set<string>();
  const stack = [name];
  while (stack.length > 0) {
    const next = stack.pop()!;
    if (seen.has(next)) continue;
    const pkg = byName.get(next);
    if (!pkg) continue;
    seen.add(next);
    stack.push(...pkg.dependsOn);
  }
  return [...seen].sort().map((found) => byName.get(found)!);
}

/** Every package that depends on `name`, transitively, itself included; sorted by name. */
export function dependentClosure(workspace: Workspace, name: string): WorkspacePackage[] {
  return workspace.packages.filter((pkg) => dependencyClosure(workspace, pkg.name).some((dep) => dep.name === name));
}

/**
 * Dependency order: each package after the packages it depends on, ties by
 * name. A cycle (which pnpm allows, with a warning) is broken by name order.
 */
export function dependencyOrder(workspace: Workspace): WorkspacePackage[] {
  const byName = new Map(workspace.packages.map((pkg) => [pkg.name, pkg]));
  const ordered: WorkspacePackage[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (pkg: WorkspacePackage) => {
    if (state.has(pkg.name)) return;
    state.set(pkg.name, 'visiting');
    for (const dep of pkg.dependsOn) {
      const found = byName.get(dep);
      if (found) visit(found);
    }
    state.set(pkg.name, 'done');
    ordered.push(pkg);
  };
  for (const pkg of [...workspace.packages].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) visit(pkg);
  return ordered;
}

/**
 * The root's shared config, as a package check's inputs: every file at the
 * root (base tsconfig, lint and test configs, the lockfile, package.json,
 * .npmrc) but prose and the agents' own MCP config. A package check runs in
 * its package directory, so a root file reaches it only as a config it looks
 * up, never as a source it lints or tests.
 */
export const ROOT_SHARED_INPUTS: readonly string[] = ['*', '!*.md', '!*.markdown', '!*.txt', '!LICENSE*', '!LICENCE*', '!.mcp.json'];

/**
 * A package check's default inputs, from the workspace graph: the package,
 * each workspace package it depends on (transitively), and the root's shared
 * config. Null when `dir` is not a member.
 */
export function packageInputs(workspace: Workspace, dir: string): string[] | null {
  const pkg = packageByDir(workspace, dir);
  if (!pkg) return null;
  const dirs = dependencyClosure(workspace, pkg.name).map((member) => member.dir).sort();
  return [...dirs.map((member) => `${member}/**`), ...ROOT_SHARED_INPUTS];
}

/** A package check's default installed globs: the root's node_modules, and each member's in its closure (pnpm links each package's own). */
export function packageInstalled(workspace: Workspace, dir: string): string[] | null {
  const pkg = packageByDir(workspace, dir);
  if (!pkg) return null;
  return ['node_modules/**', ...dependencyClosure(workspace, pkg.name).map((member) => `${member.dir}/node_modules/**`).sort()];
}
