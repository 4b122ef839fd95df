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
  const ordered: CheckDefinition[] = [];
  let group: CheckDefinition[] = [];
  const flush = () => {
    ordered.push(...dependencyOrdered(group, workspace));
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
    after: definition.package === undefined ? [] : ordered.slice(0, index).flatMap((earlier, at) => (earlier.package !== undefined && dependsOn(workspace, definition.package!, earlier.package) ? [at] : [])),
  }));
}

/** Whether the package in `dir` depends on the one in `other`, transitively (never on itself). */
function dependsOn(workspace: Workspace | null, dir: string, other: string): boolean {
  if (workspace === null || dir === other) return false;
  const pkg = packageByDir(workspace, dir);
  const target = packageByDir(workspace, other);
  return pkg !== undefined && target !== undefined && dependencyClosure(workspace, pkg.name).some((member) => member.name === target.name);
}

/** A stable topological order: each check after those of packages it depends on, otherwise as given. */
function dependencyOrdered(group: CheckDefinition[], workspace: Workspace | null): CheckDefinition[] {
  const placed: CheckDefinition[] = [];
  const remaining = [...group];
  while (remaining.length > 0) {
    // The first check none of whose dependencies is still waiting; a cycle takes the first as given.
    const index = remaining.findIndex((candidate) => !remaining.some((other) => other !== candidate && dependsOn(workspace, candidate.package!, other.package!) && !dependsOn(workspace, other.package!, candidate.package!)));
    placed.push(...remaining.splice(index === -1 ? 0 : index, 1));
  }
  return placed;
}
