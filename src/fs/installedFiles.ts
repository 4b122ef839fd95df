import { readdirSync, type Dirent } from 'node:fs';
import { join } from 'node:path';
import picomatch from 'picomatch';
import { reason, type Reason } from '../core/reason.js';
import { TOOL_CACHES } from '../core/toolCaches.js';

export interface InstalledListing {
  /** Root-relative paths of files and links (never directories) the globs select. */
  paths: string[];
  problems: Reason[];
}

/**
 * Walks the static base of each positive glob (for "node_modules/**", the
 * node_modules directory) without following links, and keeps what the globs
 * select. Tool caches are pruned by name; see docs/config.md.
 */
export function listInstalledFiles(root: string, globs: readonly string[]): InstalledListing {
  const positive = globs.filter((glob) => !glob.startsWith('!'));
  const negative = [...globs.filter((glob) => glob.startsWith('!')).map((glob) => glob.slice(1)), ...TOOL_CACHES];
  const paths: string[] = [];
  const problems: Reason[] = [];
  if (positive.length === 0) return { paths, problems };
  // "dir/**" globs are walked from dir, so every file found is selected; "x/**" exclusions prune whole directories.
  const selects = positive.every(isWholeTree) ? () => true : picomatch(positive, { dot: true });
  const fileExcludes = negative.filter((glob) => !glob.endsWith('/**'));
  const excludes = fileExcludes.length > 0 ? picomatch(fileExcludes, { dot: true }) : () => false;
  const prunedDirs = negative.filter((glob) => glob.endsWith('/**')).map((glob) => picomatch(glob.slice(0, -3), { dot: true }));

  const bases = [...new Set(positive.map((glob) => picomatch.scan(glob).base))].sort();
  const walked = bases.filter((base, index) => !bases.slice(0, index).some((outer) => outer === '' || base.startsWith(outer + '/')));
  const visit = (rel: string) => {
    let entries: Dirent[];
    try {
      entries = readdirSync(rel === '' ? root : join(root, rel), { withFileTypes: true });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return;
      problems.push(reason('input-unreadable', `cannot list ${rel}: ${(error as Error).message}; fix its permissions, or exclude it with a "!" glob in "installed"`));
      return;
    }
    for (const entry of entries) {
      const path = rel === '' ? entry.name : `${rel}/${entry.name}`;
      if (rel === '' && entry.name === '.git') continue;
      const pruned = () => prunedDirs.some((matches) => matches(path));
      if (entry.isDirectory()) {
        if (!pruned()) visit(path);
      } else if (selects(path) && !excludes(path) && !(entry.isSymbolicLink() && pruned())) {
        paths.push(path);
      }
    }
  };
  for (const base of walked) visit(base);
  return { paths, problems };
}

function isWholeTree(glob: string): boolean {
  return glob.endsWith('/**') && !picomatch.scan(glob.slice(0, -3)).isGlob;
}
