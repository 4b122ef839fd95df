import { lstatSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The first symbolic link on the way from `root` to `rel` (the file itself
 * included), as "path (to target)", or null when every existing part is real.
 * A cloned repository may hold `.claude` as a link to a directory elsewhere:
 * setup must neither read nor write through it.
 */
export function linkOnPath(root: string, rel: string): string | null {
  let path = root;
  for (const segment of rel.split('/')) {
    path = join(path, segment);
    const stats = lstatSync(path, { throwIfNoEntry: false });
    if (stats === undefined) return null;
    if (stats.isSymbolicLink()) return `${path} (to ${readlinkSync(path)})`;
  }
  return null;
}
