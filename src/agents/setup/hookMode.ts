import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { HookMode } from '../../core/ledgerEntry.js';
import { findVouchEntries, hookModeOf } from './hookEntries.js';
import { HOST_LAYOUTS, type AgentHost } from './host.js';
import { parseJsonObject } from './jsonText.js';
import { linkOnPath } from './linkOnPath.js';

/**
 * The mode of the hooks setup manages for this host, as they stand in its hooks file;
 * null when there are none (or the file cannot be read). Setup keeps it unless told
 * --shadow or --enforce, so an upgrade never turns shadow mode into enforcement.
 */
export function installedHookMode(host: AgentHost, root: string): HookMode | null {
  const layout = HOST_LAYOUTS[host];
  // Never read through a link: setup does not (managedItem.ts).
  if (linkOnPath(root, layout.hooksFile) !== null) return null;
  let text: string;
  try {
    text = readFileSync(join(root, ...layout.hooksFile.split('/')), 'utf8');
  } catch {
    return null;
  }
  const parsed = parseJsonObject(text);
  if ('error' in parsed) return null;
  return hookModeOf(findVouchEntries(parsed.value, host, layout.hooks.map((spec) => spec.event)));
}
