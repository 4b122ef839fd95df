import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { Draft } from '../core/claim.js';

/**
 * The draft text one inspection sees in place of the disk, keyed by absolute
 * path. Each inspection gets a fresh revision, so a resident tool that caches
 * by version can never answer one claim from another claim's text.
 */
export interface Overlay {
  readonly revision: string;
  readonly files: ReadonlyMap<string, string>;
}

export function createOverlay(workspace: string, drafts: readonly Draft[]): Overlay {
  const files = new Map<string, string>();
  for (const draft of drafts) files.set(join(workspace, draft.path), draft.text);
  return { revision: randomUUID(), files };
}
