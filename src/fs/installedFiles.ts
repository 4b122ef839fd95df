import { readdirSync, type Dirent } from 'node:fs';
import { join } from 'node:path';
import picomatch from 'picomatch';
import { reason, type Reason } from '../core/reason.js';
import { TOOL_CACHES } from '../core/toolCaches.js';
import { globMatcher } from './globMatcher.js';
import { notUtf8 } from './sourceFiles.js';

export interface InstalledListing {
  /** Root-relative paths of files and links (never directories) the globs select. */
  paths: string[];
  problems: Reason[];
}

/** How the installed globs are walked: from which directories, keeping and pruning what. */
export interface InstalledWalk {
  /** Directories walked, none inside another. */
  bases: string[];
  selects: (path: string) => boolean;
  excludes: (path: string) => boolean;
  /** A directory (or a link) the "x/**" exclusions prune. */
  pruned: (path: string) => boolean;
  /** Every file under the bases is kept unless pruned: the native tree scan can walk them. */
  wholeTrees: boolean;
}

export function planInstalledWalk(globs: readonly string[]): InstalledWalk {
  const positive = globs.filter((glob) => !glob.startsWith('!'));
  const negative = [...globs.filter((glob) => glob.startsWith('!')).map((glob) => glob.slice(1)), ...TOOL_CACHES];
  // "dir/**" globs are walked from dir, so every file found is selected; "x/**" exclusions prune whole directories.
  const wholeTree = positive.every(isWholeTree);
  const selects = wholeTree ? () => true : globMatcher(positive);
  const fileExcludes = negative.filter((glob) => !glob.endsWith('/**'));
  const excludes = globMatcher(fileExcludes);
  const pruned = globMatcher(negative.filter((glob) => glob.endsWith('/**')).map((glob) => glob.slice(0, -3)));
  const sorted = [...new Set(positive.map((glob) => picomatch.scan(glob).base))].sort();
  const bases = sorted.filter((base, index) => !sorted.slice(0, index).some((outer) => outer === '' || base.startsWith(outer + '/')));
  const wholeTrees = positive.length > 0 && wholeTree && fileExcludes.length === 0 && !bases.includes('');
  return { bases, selects, excludes, pruned, wholeTrees };
}

/**
 * Walks the static base of each positive glob (for "node_modules/**", the
 * node_modules directory) without following links, and keeps what the globs
 * select. Tool caches are pruned by name; see docs/config.md.
 */
export function listInstalledFiles(root: string, globs: readonly string[]): InstalledListing {
  const paths: string[] = [];
  const problems: Reason[] = [];
  if (!globs.some((glob) => !glob.startsWith('!'))) return { paths, problems };
  const { bases, selects, excludes, pruned } = planInstalledWalk(globs);
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
      // Node decodes a name that is not UTF-8 lossily: such a file could not be looked at again, and
      // such a directory would hide all it holds. Only the replacement character tells, so a name
      // that really holds one is reported too.
      const lossy = entry.name.includes('\uFFFD');
      if (entry.isDirectory()) {
        if (pruned(path)) continue;
        if (lossy) problems.push(notUtf8(path, 'installed'));
        else visit(path);
      } else if (selects(path) && !excludes(path) && !(entry.isSymbolicLink() && pruned(path))) {
        if (lossy) problems.push(notUtf8(path, 'installed'));
        else paths.push(path);
      }
    }
  };
  for (const base of bases) visit(base);
  return { paths, problems };
}

function isWholeTree(glob: string): boolean {
  return glob.endsWith('/**') && !picomatch.scan(glob.slice(0, -3)).isGlob;
}

