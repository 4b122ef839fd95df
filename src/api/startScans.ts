import type { CheckDefinition } from '../core/definition.js';
import { nowNs } from '../core/identity.js';
import { InstalledScans } from '../fs/installedScans.js';
import { startSourceListing, type PendingSourceListing } from '../fs/sourceFiles.js';
import type { Project } from './project.js';

/** A scan's slow parts, begun before the store opens: they run on other threads meanwhile. */
export interface StartedScans {
  installed: InstalledScans;
  sources: PendingSourceListing;
}

/** Starts listing the sources and walking the checks' install trees, keeping directory listings in the state dir. */
export function startScans(project: Project, definitions: readonly CheckDefinition[]): StartedScans {
  const installed = new InstalledScans(project.root, nowNs(), project.stateDir);
  for (const definition of definitions) installed.start(definition.installed);
  return { installed, sources: startSourceListing(project.root, project.excluded) };
}
