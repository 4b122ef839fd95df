import { readFileSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ClaimError } from '../core/claimError.js';

/** A package as the workspace's `node_modules` hold it now. */
export interface InstalledPackage {
  name: string;
  version: string;
  /** The package folder's real path: a retargeted link, or a pnpm upgrade, gives another one. */
  root: string;
}

/**
 * The package the workspace resolves `name` to (never vouch's own copy), or
 * null when it resolves nowhere or its package.json has no version. Looked
 * up afresh on each call, folder by folder as Node's resolution does
 * (https://nodejs.org/api/modules.html#loading-from-node_modules-folders),
 * and not through `require.resolve`: Node caches what a request resolved to
 * for the life of the process, so a `node_modules/vitest` link retargeted
 * from one version to another would go on naming the first.
 */
export function installedPackage(workspace: string, name: string): InstalledPackage | null {
  for (let dir = resolve(workspace); ; dir = dirname(dir)) {
    const found = readManifest(join(dir, 'node_modules', name, 'package.json'));
    if (found !== undefined) {
      const version = found.version;
      return typeof version === 'string' && version !== '' ? { name, version, root: found.root } : null;
    }
    if (dirname(dir) === dir) return null;
  }
}

/** The version of a package as the workspace resolves it now, or null; see installedPackage. */
export function installedVersion(workspace: string, name: string): string | null {
  return installedPackage(workspace, name)?.version ?? null;
}

/** Whether the package the workspace resolves now is another one than `before` (another version, or another folder). */
export function packageChanged(workspace: string, before: InstalledPackage): boolean {
  const now = installedPackage(workspace, before.name);
  return now === null || now.version !== before.version || now.root !== before.root;
}

/**
 * The file a package's own entry point (`.` or a subpath such as `node`)
 * resolves to, through its `exports`. Resolved as the package referring to
 * itself (https://nodejs.org/api/packages.html#self-referencing-a-package-using-its-name),
 * from its real folder, so the answer is about this copy and no other.
 */
export function packageEntry(pkg: InstalledPackage, subpath: string): string {
  const manifest = readManifest(join(pkg.root, 'package.json'));
  const name = typeof manifest?.name === 'string' ? manifest.name : pkg.name;
  const require = createRequire(join(pkg.root, 'package.json'));
  try {
    return require.resolve(subpath === '.' ? name : `${name}/${subpath}`);
  } catch (error) {
    // A package without `exports` cannot name itself; its main entry is still its folder's.
    if (subpath === '.') return require.resolve(pkg.root);
    throw error;
  }
}

/** The version of each entry this process has imported, by URL: Node evaluates a module once per process. */
const imported = new Map<string, string>();

/**
 * Imports a package's entry file. A package replaced in place (the same
 * folder, another version, as `npm install` does) cannot be loaded again in
 * this process: the module cache would hand back the old code under the new
 * version's name. That is refused, so no verdict names a tool that did not judge.
 */
export async function importPackageEntry<T>(pkg: InstalledPackage, entry: string): Promise<T> {
  const href = pathToFileURL(entry).href;
  const before = imported.get(href);
  if (before !== undefined && before !== pkg.version) {
    throw new ClaimError(
      'workspace',
      'unsupported',
      `${pkg.name} ${pkg.version} replaced ${before} in place at ${pkg.root}, and a process cannot load a module twice; restart vouch (vouch prove --serve, vouch mcp) so the new one judges`,
    );
  }
  imported.set(href, pkg.version);
  return (await import(href)) as T;
}

function readManifest(path: string): { root: string; name?: unknown; version?: unknown } | undefined {
  let real: string;
  let text: string;
  try {
    real = realpathSync(path);
    text = readFileSync(real, 'utf8');
  } catch {
    return undefined;
  }
  try {
    const parsed: unknown = JSON.parse(text);
    const fields = typeof parsed === 'object' && parsed !== null ? (parsed as { name?: unknown; version?: unknown }) : {};
    return { root: dirname(real), name: fields.name, version: fields.version };
  } catch {
    // A package.json that does not parse names no version: the stage reports the tool as missing.
    return { root: dirname(real) };
  }
}
