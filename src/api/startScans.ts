import type { CheckDefinition } from '../core/definition.js';
import { nowNs } from '../core/identity.js';
import { InstalledScans } from '../fs/installedScans.js';
import type { Project } from './project.js';

/** Starts walking the checks' install trees on other threads, keeping directory listings in the state dir. */
export function startInstalledScans(project: Project, definitions: readonly CheckDefinition[]): InstalledScans {
  const scans = new InstalledScans(project.root, nowNs(), project.stateDir);
  for (const definition of definitions) scans.start(definition.installed);
  return scans;
}
