import { lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { VouchError } from '../core/errors.js';
import type { Workspace, WorkspacePackage } from '../core/workspace.js';
import { globMatcher } from '../fs/globMatcher.js';
import { readPackageJson, workspaceGlobs } from './detectPackageManager.js';

/** Far above real workspaces; a repository cannot make the walk unbounded. */
const MAX_DIRS = 20_000;
const MAX_PACKAGES = 2_000;
/** `**` in a workspace glob reaches at most this deep. */
const MAX_DEPTH = 8;

const DEPENDENCY_FIELDS = ['dependencies', 'devDependencies', 'optionalDependencies', 'peerDependencies'] as const;

/**
 * The workspace rooted at `root`, or null when `root` declares none
 * (no pnpm-workspace.yaml "packages", no package.json "workspaces").
 * Members are found by walking real directories only: a link is never
 * followed, so a repository's links cannot lead the walk outside the root.
 * node_modules and dot-directories are never members.
 */
export function readWorkspace(root: string, limits: { dirs: number } = { dirs: MAX_DIRS }): Workspace | null {
  const globs = workspaceGlobs(root);
  if (globs.length === 0) return null;
  const trim = (glob: string) => glob.replace(/^\.\//, '').replace(/\/+$/, '');
  const positive = globs.filter((glob) => !glob.startsWith('!')).map(trim);
  const negative = globs.filter((glob) => glob.startsWith('!')).map((glob) => trim(glob.slice(1)));
  if (positive.length === 0) return null;
  const included = globMatcher(positive);
  const excluded = negative.length > 0 ? globMatcher(negative) : () => false;
  const depth = Math.min(MAX_DEPTH, Math.max(...positive.map((glob) => (glob.includes('**') ? MAX_DEPTH : glob.split('/').length))));
  // Each glob's leading literal directories: the walk enters only what can lead to a member (`packages/*` enters packages/ alone).
  const prefixes = positive.map((glob) => {
    const literal: string[] = [];
    for (const segment of glob.split('/')) {
      if (/[*?[\]{}()!+@]/.test(segment)) break;
      literal.push(segment);
    }
    return literal.join('/');
  });
  const mayLead = (rel: string) => prefixes.some((prefix) => prefix === '' || prefix === rel || prefix.startsWith(`${rel}/`) || rel.startsWith(`${prefix}/`));

  const dirs: string[] = [];
  let visited = 0;
  const walk = (rel: string, level: number) => {
    if (level >= depth) return;
    let names: string[];
    try {
      names = readdirSync(rel === '' ? root : join(root, rel)).sort();
    } catch {
      return;
    }
    for (const name of names) {
      if (name === 'node_modules' || name.startsWith('.')) continue;
      const child = rel === '' ? name : `${rel}/${name}`;
      let isDir = false;
      try {
        isDir = lstatSync(join(root, child)).isDirectory();
      } catch {
        continue;
      }
      if (!isDir || !mayLead(child)) continue;
      if (++visited > limits.dirs) {
        throw new VouchError('workspace-invalid', `${root}: the workspace globs (${globs.join(', ')}) reach more than ${limits.dirs} directories; narrow them`);
      }
      if (included(child) && !excluded(child)) dirs.push(child);
      walk(child, level + 1);
    }
  };
  walk('', 0);

  const manifests: Array<{ dir: string; json: Record<string, unknown> }> = [];
  for (const dir of dirs.sort()) {
    let json: Record<string, unknown> | null;
    try {
      if (!lstatSync(join(root, dir, 'package.json')).isFile()) continue;
      json = readPackageJson(join(root, dir));
    } catch (error) {
      if (error instanceof VouchError) throw error;
      continue;
    }
    if (json === null) continue;
    manifests.push({ dir, json });
    if (manifests.length > MAX_PACKAGES) {
      throw new VouchError('workspace-invalid', `${root}: the workspace has more than ${MAX_PACKAGES} packages; vouch does not support one this large`);
    }
  }

  const names = new Set<string>();
  const packages: WorkspacePackage[] = manifests.map(({ dir, json }) => {
    const name = typeof json.name === 'string' && json.name.trim() !== '' ? json.name : dir;
    if (names.has(name)) {
      throw new VouchError('workspace-invalid', `${join(root, dir, 'package.json')}: the name "${name}" is used by two workspace packages; give each package its own name`);
    }
    names.add(name);
    return { name, dir, scripts: stringRecord(json.scripts), dependsOn: [] as string[] };
  });
  for (const [index, { json }] of manifests.entries()) {
    const deps = new Set<string>();
    for (const field of DEPENDENCY_FIELDS) {
      for (const [dep, spec] of Object.entries(stringRecord(json[field]))) {
        if (names.has(dep)) deps.add(dep);
        // An alias links the member it names under another name: "x": "workspace:@s/a@*" (https://pnpm.io/workspaces#workspace-protocol-workspace), "npm:@s/a@^1".
        const aliased = /^(?:workspace|npm):(@?[^@]+)@/.exec(spec)?.[1];
        if (aliased !== undefined && names.has(aliased)) deps.add(aliased);
      }
    }
    deps.delete(packages[index]!.name);
    packages[index]!.dependsOn = [...deps].sort();
  }
  const rootJson = readPackageJson(root) ?? {};
  const rootName = typeof rootJson.name === 'string' && rootJson.name !== '' ? rootJson.name : null;
  const rootDeps = new Set(DEPENDENCY_FIELDS.flatMap((field) => Object.keys(stringRecord(rootJson[field]))));
  const dependedOnBy =
    rootName === null ? [] : packages.filter((_, index) => DEPENDENCY_FIELDS.some((field) => Object.hasOwn(stringRecord(manifests[index]!.json[field]), rootName))).map((pkg) => pkg.name);
  return {
    globs,
    packages,
    rootName,
    rootEdges: { dependsOn: packages.filter((pkg) => rootDeps.has(pkg.name)).map((pkg) => pkg.name), dependedOnBy: dependedOnBy.sort() },
  };
}

function stringRecord(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return out;
  for (const [key, item] of Object.entries(value)) if (typeof item === 'string') out[key] = item;
  return out;
}
