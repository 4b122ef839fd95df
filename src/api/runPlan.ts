import type { CheckDefinition } from '../core/definition.js';
import { dependencyClosure, packageByDir, type Workspace } from '../core/workspace.js';

/** One check of a run, and what must finish before it starts. */
export interface PlannedCheck {
  definition: CheckDefinition;
  /** A root check: it runs with nothing beside it, after every check before it. */
  alone: boolean;
  /** Indexes of earlier planned checks it waits for: the selected checks of the packages it depends on. */
  after: number[];
}

/**
 * The order a run takes. Root checks keep their place; the package checks
 * between two root checks are put in dependency order (a package's checks
 * after those of the packages it depends on, otherwise as asked), so that
 * `vouch run build` builds `a` before `b` when `b` depends on `a`. Pure.
 */
export function runPlan(definitions: readonly CheckDefinition[], workspace: Workspace | null): PlannedCheck[] {
  const dependsOn = dependencyTest(workspace);
  const ordered: CheckDefinition[] = [];
  let group: CheckDefinition[] = [];
  const flush = () => {
    ordered.push(...dependencyOrdered(group, dependsOn));
    group = [];
  };
  for (const definition of definitions) {
    if (definition.package === undefined) {
      flush();
      ordered.push(definition);
    } else {
      group.push(definition);
    }
  }
  flush();
  return ordered.map((definition, index) => ({
    definition,
    alone: definition.package === undefined,
    after: definition.package === undefined ? [] : ordered.slice(0, index).flatMap((earlier, at) => (earlier.package !== undefined && dependsOn(definition.package!, earlier.package) ? [at] : [])),
  }));
}

type DependsOn = (dir: string, other: string) => boolean;

/** Whether the package in `dir` depends on the one in `other`, transitively (never on itself); each closure computed once. */
function dependencyTest(workspace: Workspace | null): DependsOn {
  const closures = new Map<string, Set<string>>();
  return (dir, other) => {
    if (workspace === null || dir === other) return false;
    let closure = closures.get(dir);
    if (closure === undefined) {
      const pkg = packageByDir(workspace, dir);
      closure = new Set(pkg === undefined ? [] : dependencyClosure(workspace, pkg.name).map((member) => member.dir));
      closures.set(dir, closure);
    }
    return closure.has(other);
  };
}

/** A stable topological order: each check after those of packages it depends on, otherwise as given. */
function dependencyOrdered(group: CheckDefinition[], dependsOn: DependsOn): CheckDefinition[] {
  const placed: CheckDefinition[] = [];
  const remaining = [...group];
  while (remaining.length > 0) {
    // The first check none of whose dependencies is still waiting; a cycle takes the first as given.
    const index = remaining.findIndex((candidate) => !remaining.some((other) => other !== candidate && dependsOn(candidate.package!, other.package!) && !dependsOn(other.package!, candidate.package!)));
    placed.push(...remaining.splice(index === -1 ? 0 : index, 1));
  }
  return placed;
}
