import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, linkSync, lstatSync, mkdirSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

/**
 * node_modules laid out as pnpm lays it out, without pnpm: a content-addressed store outside the
 * project holds each file once, every project's `node_modules/.pnpm/NAME@VERSION/node_modules/NAME/`
 * holds hard links to the store's files, and `node_modules/NAME` is a symbolic link into it
 * (https://pnpm.io/symlinked-node-modules-structure, https://pnpm.io/npmrc#package-import-method).
 * So installing a second project from the same store changes the link count and change time of
 * the first one's installed files, and a reinstall of the same version links the same inodes again.
 */

export interface StorePackage {
  name: string;
  version: string;
  /** Path inside the package -> content. */
  files: Record<string, string>;
}

/** How files come out of the store: hard links (pnpm's default) or copies (`package-import-method=copy`). */
export type ImportMethod = 'hardlink' | 'copy';

/** A content-addressed store: `files/XX/REST`, named by the sha256 of the bytes, as pnpm's store v3 names them. */
export class ContentStore {
  constructor(readonly dir: string) {
    mkdirSync(join(dir, 'files'), { recursive: true });
  }

  /** The store's file for these bytes, written once. */
  add(content: string | Buffer): string {
    const hash = createHash('sha256').update(content).digest('hex');
    const path = join(this.dir, 'files', hash.slice(0, 2), hash.slice(2));
    if (!existsSync(path)) {
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, content, { mode: 0o444 });
    }
    return path;
  }
}

/** `@scope/name` as pnpm spells it in a directory name: `@scope+name`. */
export function pnpmDirName(pkg: Pick<StorePackage, 'name' | 'version'>): string {
  return `${pkg.name.replace('/', '+')}@${pkg.version}`;
}

/** The package's own directory in a project's virtual store: `node_modules/.pnpm/NAME@VERSION/node_modules/NAME`, root-relative. */
export function virtualStorePath(pkg: Pick<StorePackage, 'name' | 'version'>): string {
  return join('node_modules', '.pnpm', pnpmDirName(pkg), 'node_modules', pkg.name);
}

/** Imports a package's files from the store into `root`'s virtual store, without linking it anywhere. */
export function importPackage(root: string, store: ContentStore, pkg: StorePackage, method: ImportMethod = 'hardlink'): string {
  const dir = join(root, virtualStorePath(pkg));
  for (const [path, content] of Object.entries(pkg.files)) {
    const target = join(dir, path);
    mkdirSync(dirname(target), { recursive: true });
    const stored = store.add(content);
    if (method === 'hardlink') linkSync(stored, target);
    else copyFileSync(stored, target);
  }
  return dir;
}

/** A relative symbolic link at `at` to `target` (both absolute), replacing whatever link was there. */
export function relativeLink(at: string, target: string): void {
  mkdirSync(dirname(at), { recursive: true });
  if (lstatSync(at, { throwIfNoEntry: false }) !== undefined) unlinkSync(at);
  symlinkSync(relative(dirname(at), target), at);
}

/**
 * Installs a package into `root` as pnpm does: its files imported into the virtual store, and
 * `DIR/node_modules/NAME` a link to it for each of `dependents` (root-relative directories; the
 * root itself by default). Returns the package's directory in the virtual store.
 */
export function installPackage(root: string, store: ContentStore, pkg: StorePackage, options: { method?: ImportMethod; dependents?: string[] } = {}): string {
  const dir = importPackage(root, store, pkg, options.method);
  for (const dependent of options.dependents ?? ['.']) relativeLink(join(root, dependent, 'node_modules', pkg.name), dir);
  return dir;
}

/** Removes a package's directory from `root`'s virtual store (its links elsewhere stay, dangling). */
export function removeImported(root: string, pkg: Pick<StorePackage, 'name' | 'version'>): void {
  rmSync(join(root, 'node_modules', '.pnpm', pnpmDirName(pkg)), { recursive: true, force: true });
}

/** A pnpm-lock.yaml naming these packages, with each one's integrity: the same packages give the same bytes. */
export function lockfileText(importers: Record<string, string[]>, packages: StorePackage[]): string {
  const integrity = (pkg: StorePackage) =>
    'sha512-' +
    createHash('sha512')
      .update(JSON.stringify(Object.entries(pkg.files).sort()))
      .digest('base64');
  const lines = ["lockfileVersion: '9.0'", '', 'importers:', ''];
  for (const [importer, names] of Object.entries(importers)) {
    lines.push(`  ${importer}:`);
    if (names.length > 0) {
      lines.push('    dependencies:');
      for (const name of names) {
        const pkg = packages.find((p) => p.name === name);
        lines.push(`      ${name.includes('@') ? `'${name}'` : name}:`, `        specifier: ${pkg ? `^${pkg.version}` : 'workspace:*'}`, `        version: ${pkg ? pkg.version : 'link:'}`);
      }
    }
    lines.push('');
  }
  lines.push('packages:', '');
  for (const pkg of packages) lines.push(`  '${pkg.name}@${pkg.version}':`, `    resolution: {integrity: ${integrity(pkg)}}`, '');
  return lines.join('\n');
}
