import type { Workspace, WorkspacePackage } from '../../core/workspace.js';
import type { FanOutTarget } from './answer.js';
import { dirMatches, dirPattern, nameMatches, type StarSemantics } from './patterns.js';

/*
 * The --filter selectors pnpm and turbo share, and the packages they select.
 */

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
  // The model counts a dependency by its name in any of the four fields; a tool may not count one
  // (a range its workspace package does not satisfy, no workspace: protocol), so a closure here can
  // only hold more packages than the tool's. Selected, that runs no fewer; excluded, it could.
  if (selector.exclude) return `excluding a dependency closure (${JSON.stringify(raw)}) could leave out packages the tool runs`;
  if (tool === 'turbo') {
    // turbo's package graph leaves out peerDependencies, which the workspace model counts.
    return `turbo's dependency selectors (${JSON.stringify(raw)}) follow a package graph that vouch's model does not match exactly`;
  }
  const found = new Map<string, WorkspacePackage>();
  const reached = new Set<string>();
  const edges = graphEdges(workspace, selector.graph);
  for (const pkg of base) {
    for (const member of reachable(pkg, edges)) {
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

/** Each package's neighbours: the packages it depends on, or the packages that depend on it. */
function graphEdges(workspace: Workspace, graph: 'dependencies' | 'dependents'): Map<string, WorkspacePackage[]> {
  const byName = new Map(workspace.packages.map((pkg) => [pkg.name, pkg]));
  const edges = new Map<string, WorkspacePackage[]>(workspace.packages.map((pkg) => [pkg.name, []]));
  for (const pkg of workspace.packages) {
    for (const name of pkg.dependsOn) {
      const dependency = byName.get(name);
      if (!dependency) continue;
      if (graph === 'dependencies') edges.get(pkg.name)!.push(dependency);
      else edges.get(dependency.name)!.push(pkg);
    }
  }
  return edges;
}

/** The package and every package reachable from it (as dependencyClosure and dependentClosure in core/workspace.ts, in one pass). */
function reachable(start: WorkspacePackage, edges: Map<string, WorkspacePackage[]>): WorkspacePackage[] {
  const seen = new Map<string, WorkspacePackage>([[start.name, start]]);
  const stack = [start];
  while (stack.length > 0) {
    for (const next of edges.get(stack.pop()!.name) ?? []) {
      if (seen.has(next.name)) continue;
      seen.set(next.name, next);
      stack.push(next);
    }
  }
  return [...seen.values()];
}

/** Union of the positive selectors (all packages when there are only exclusions), less the excluded. */
export function selectAll(raws: readonly string[], tool: Tool, target: FanOutTarget): Selection | string {
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
