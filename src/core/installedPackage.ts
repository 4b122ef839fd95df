/**
 * The installed package a path under node_modules belongs to, named by its
 * directory: `node_modules/NAME`, `node_modules/@SCOPE/NAME`, or, for pnpm's
 * store layout, `node_modules/.pnpm/DIR` (one directory per package and
 * version, https://pnpm.io/symlinked-node-modules-structure). A package nested
 * in another's node_modules is its own package: the innermost one is named.
 * Files directly in a node_modules directory (npm's `.package-lock.json`)
 * belong to that directory. Null for a path under no node_modules.
 */
export function installedPackageOf(path: string): string | null {
  const parts = path.split('/');
  let found: string | null = null;
  for (let index = 0; index < parts.length - 1; index++) {
    if (parts[index] !== 'node_modules') continue;
    const next = parts[index + 1] as string;
    const rest = parts.length - index - 2;
    if (rest === 0) {
      found = parts.slice(0, index + 1).join('/');
      break;
    }
    if (next === '.pnpm') {
      // The store's own files (lock.yaml) sit beside its package directories.
      return parts.slice(0, rest === 1 ? index + 2 : index + 3).join('/');
    }
    // A scope is a directory of packages, unless a file sits directly in it.
    const scoped = next.startsWith('@') && rest >= 2;
    found = parts.slice(0, index + (scoped ? 3 : 2)).join('/');
    index += scoped ? 2 : 1;
  }
  return found;
}
