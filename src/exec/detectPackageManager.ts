import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { globMatcher } from '../fs/globMatcher.js';
import { PACKAGE_MANAGERS, type PackageManagerName } from '../core/config.js';
import { VouchError } from '../core/errors.js';

export interface DetectedPackageManager {
  name: PackageManagerName;
  /** What decided: package.json "packageManager", a lockfile, pnpm-workspace.yaml, or nothing (npm). */
  source: 'packageManager-field' | 'lockfile' | 'workspace-file' | 'default';
  /** The lockfile, relative to the root ("../../pnpm-lock.yaml" for a workspace member); null when there is none. */
  lockfile: string | null;
  /** Yarn only: 1.x ("classic") or 2+ ("berry"); they differ in lockfile format, install layout and flags. */
  variant?: 'classic' | 'berry';
  /** The directory whose package.json or lockfile decided: the root, or the workspace root above it. */
  decidedBy: string;
  /** The raw package.json "packageManager" value, when that decided. */
  field?: string;
}

/** Lockfiles by manager, in the order each manager itself prefers them. */
const LOCKFILES: Record<PackageManagerName, readonly string[]> = {
  npm: ['npm-shrinkwrap.json', 'package-lock.json'],
  pnpm: ['pnpm-lock.yaml'],
  yarn: ['yarn.lock'],
  bun: ['bun.lock', 'bun.lockb'],
};

/**
 * Which package manager runs the project's scripts. The package.json
 * "packageManager" field wins (it is what Corepack enforces); otherwise the
 * lockfiles decide, and when lockfiles of several managers lie side by side
 * this refuses to guess. A workspace member without either defers to the
 * workspace root above it, which holds the lockfile.
 */
export function detectPackageManager(root: string): DetectedPackageManager {
  const own = detectIn(root, root);
  if (own) return own;
  const workspaceRoot = findWorkspaceRoot(root);
  if (workspaceRoot) {
    const inherited = detectIn(workspaceRoot, root);
    if (inherited) return inherited;
  }
  return { name: 'npm', source: 'default', lockfile: null, decidedBy: root };
}

function detectIn(dir: string, root: string): DetectedPackageManager | null {
  const rel = (file: string) => relative(root, join(dir, file)).split('\\').join('/');
  const field = readPackageJson(dir)?.packageManager;
  const present = PACKAGE_MANAGERS.flatMap((name) =>
    LOCKFILES[name].filter((file) => existsSync(join(dir, file))).map((file) => ({ name, file })),
  );

  if (typeof field === 'string' && field.trim() !== '') {
    const { name, version } = parseField(field, join(dir, 'package.json'));
    const lockfile = present.find((found) => found.name === name)?.file ?? null;
    const detected: DetectedPackageManager = {
      name,
      source: 'packageManager-field',
      lockfile: lockfile === null ? null : rel(lockfile),
      decidedBy: dir,
      field,
    };
    if (name === 'yarn') detected.variant = yarnVariantFromVersion(version) ?? yarnVariantFromFiles(dir);
    return detected;
  }

  const managers = [...new Set(present.map((found) => found.name))];
  if (managers.length > 1) {
    throw new VouchError(
      'package-manager-ambiguous',
      `${dir} has lockfiles of ${managers.length} package managers: ${present.map((found) => `${found.file} (${found.name})`).join(', ')}. ` +
        `vouch does not guess which one runs the scripts. Set "packageManager" in package.json (${managers.map((name) => `"${name}@<version>"`).join(' or ')}), ` +
        `or delete the stale lockfile, and run vouch init again; or write ${'vouch.config.json'} by hand with "packageManager" set (see docs/config.md) and pass it with --config FILE.`,
    );
  }
  const first = present[0];
  // No lockfile yet: pnpm-workspace.yaml is pnpm's alone (https://pnpm.io/pnpm-workspace_yaml), and npm would not read its packages.
  if (!first) return existsSync(join(dir, 'pnpm-workspace.yaml')) ? { name: 'pnpm', source: 'workspace-file', lockfile: null, decidedBy: dir } : null;
  const detected: DetectedPackageManager = { name: first.name, source: 'lockfile', lockfile: rel(first.file), decidedBy: dir };
  if (first.name === 'yarn') detected.variant = yarnVariantFromFiles(dir);
  return detected;
}

function parseField(field: string, file: string): { name: PackageManagerName; version: string | null } {
  // Corepack's format: "<name>@<version>[+<hash>]".
  const at = field.indexOf('@', 1);
  const name = (at === -1 ? field : field.slice(0, at)).trim();
  const version = at === -1 ? null : field.slice(at + 1).split('+')[0] ?? null;
  if (!(PACKAGE_MANAGERS as readonly string[]).includes(name)) {
    throw new VouchError(
      'package-manager-unsupported',
      `${file} says "packageManager": ${JSON.stringify(field)}, but vouch runs scripts only through ${PACKAGE_MANAGERS.join(', ')}. ` +
        `Use "command" checks instead of "script" checks, written by hand (see docs/config.md).`,
    );
  }
  return { name: name as PackageManagerName, version };
}

function yarnVariantFromVersion(version: string | null): 'classic' | 'berry' | undefined {
  const major = Number.parseInt(version ?? '', 10);
  if (Number.isNaN(major)) return undefined;
  return major >= 2 ? 'berry' : 'classic';
}

/** Yarn 2+ writes .yarnrc.yml and a lockfile with a "__metadata:" block; Yarn 1 writes neither. */
function yarnVariantFromFiles(dir: string): 'classic' | 'berry' {
  if (existsSync(join(dir, '.yarnrc.yml'))) return 'berry';
  try {
    if (/^__metadata:/m.test(readFileSync(join(dir, 'yarn.lock'), 'utf8'))) return 'berry';
  } catch {
    // No lockfile: nothing says berry.
  }
  return 'classic';
}

/**
 * The nearest directory above `root` whose workspaces include it, or null.
 * Only the nearest package.json above is asked: a project that merely sits
 * inside another one's folder is not its workspace member.
 */
export function findWorkspaceRoot(root: string): string | null {
  for (let dir = dirname(root); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json')) || existsSync(join(dir, 'pnpm-workspace.yaml'))) {
      let globs: string[];
      try {
        globs = workspaceGlobs(dir);
      } catch {
        // A broken package.json above the project is not the project's problem: treat it as no workspace.
        return null;
      }
      const member = relative(dir, root).split('\\').join('/');
      return includes(globs, member) ? dir : null;
    }
    if (dirname(dir) === dir) return null;
  }
}

function includes(globs: readonly string[], member: string): boolean {
  const positive = globs.filter((glob) => !glob.startsWith('!')).map(trimGlob);
  const negative = globs.filter((glob) => glob.startsWith('!')).map((glob) => trimGlob(glob.slice(1)));
  if (positive.length === 0) return false;
  return globMatcher(positive)(member) && !globMatcher(negative)(member);
}

function trimGlob(glob: string): string {
  return glob.replace(/^\.\//, '').replace(/\/+$/, '');
}

/** Workspace globs from package.json "workspaces" (array, or Yarn's { packages }) and pnpm-workspace.yaml "packages:". */
export function workspaceGlobs(dir: string): string[] {
  const globs: string[] = [];
  const workspaces = readPackageJson(dir)?.workspaces;
  const list = Array.isArray(workspaces)
    ? workspaces
    : workspaces && typeof workspaces === 'object' && Array.isArray((workspaces as { packages?: unknown }).packages)
      ? (workspaces as { packages: unknown[] }).packages
      : [];
  for (const glob of list) if (typeof glob === 'string' && glob.trim() !== '') globs.push(glob.trim());
  globs.push(...pnpmWorkspacePackages(dir));
  return [...new Set(globs)];
}

/** The "packages:" list of pnpm-workspace.yaml; a block list of plain or quoted strings is all pnpm documents. */
function pnpmWorkspacePackages(dir: string): string[] {
  let text: string;
  try {
    text = readFileSync(join(dir, 'pnpm-workspace.yaml'), 'utf8');
  } catch {
    return [];
  }
  const globs: string[] = [];
  let inPackages = false;
  for (const rawLine of text.split(/\r?\n/)) {
    const line = rawLine.replace(/\s+#.*$/, '');
    if (/^packages\s*:/.test(line)) {
      inPackages = true;
      const inline = /^packages\s*:\s*\[(.*)\]\s*$/.exec(line);
      if (inline?.[1] !== undefined) {
        for (const item of inline[1].split(',')) pushYamlScalar(globs, item);
        inPackages = false;
      }
      continue;
    }
    if (!inPackages) continue;
    if (/^\S/.test(line)) {
      inPackages = false;
      continue;
    }
    const item = /^\s*-\s*(.+)$/.exec(line);
    if (item?.[1] !== undefined) pushYamlScalar(globs, item[1]);
  }
  return globs;
}

function pushYamlScalar(into: string[], raw: string): void {
  const value = raw.trim().replace(/^(['"])(.*)\1$/, '$2').trim();
  if (value !== '') into.push(value);
}

export function readPackageJson(dir: string): Record<string, unknown> | null {
  const file = join(dir, 'package.json');
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return null;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new VouchError('package-json-invalid', `${file} is not valid JSON: ${(error as Error).message}. Fix its syntax and run vouch init again.`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new VouchError('package-json-invalid', `${file} is not a JSON object. Fix it and run vouch init again.`);
  }
  return parsed as Record<string, unknown>;
}
