import type { CheckDefinition } from '../core/definition.js';
import { nowNs } from '../core/identity.js';
import { InstalledScans } from './installedScans.js';
import { startSourceListing, type PendingSourceListing } from './sourceFiles.js';

/** A scan's slow parts, begun before the store opens: they run on other threads meanwhile. */
export interface StartedScans {
  installed: InstalledScans;
  sources: PendingSourceListing;
}

export interface ScanPlace {
  root: string;
  /** Files and directories left out of the sources (the state dir, the config). */
  excluded: readonly string[];
  /** Where the walks keep directory listings between scans. */
  stateDir: string;
}

/**
 * Starts listing the sources and walking the checks' install trees. A traced check's install
 * trees are not walked ahead: its receipt is bound to its evidence, and only a receipt that fell
 * back to the declared inputs needs them (the scan then starts the walk itself).
 */
export function startScans(place: ScanPlace, definitions: readonly CheckDefinition[]): StartedScans {
  const installed = new InstalledScans(place.root, nowNs(), place.stateDir);
  for (const definition of definitions) if (definition.mode !== 'traced') installed.start(definition.installed);
  return { installed, sources: startSourceListing(place.root, place.excluded) };
}
