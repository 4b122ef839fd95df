import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import type { Workspace } from '../core/workspace.js';
import { readPackageJson } from './detectPackageManager.js';

/** What vouch init needs to know about build output that checks read. */
export interface BuildOutputs {
  rootReferences: boolean;
  /** The root tsconfig.json only lists references ("files": [], no "include"): tsc without -b checks nothing there. */
  rootSolution: boolean;
  builtEntries: Array<{ package: string; field: string; path: string }>;
}

/** A tsconfig.json larger than this is not read: a repository cannot make init read without bound. */
const MAX_TSCONFIG_BYTES = 1024 * 1024;
const ENTRY_FIELDS = ['types', 'typings', 'main', 'module'] as const;
const MAX_EXPORT_PATHS = 32;

/**
 * Whether the root tsconfig.json has project references, and which workspace
 * packages point their entry ("types", "main", "module", "exports") at files
 * that a build writes: git-ignored, or not there at all. Anything unreadable
 * counts as nothing.
 */
export function readBuildOutputs(root: string, workspace: Workspace | null): BuildOutputs {
  const candidates: Array<{ package: string; field: string; path: string }> = [];
  for (const pkg of workspace?.packages ?? []) {
    let json: Record<string, unknown> | null = null;
    try {
      json = readPackageJson(join(root, pkg.dir));
    } catch {
      continue;
    }
    if (json === null) continue;
    const entries: Array<{ field: string; value: unknown }> = ENTRY_FIELDS.map((field) => ({ field, value: json[field] }));
    for (const path of exportPaths(json.exports)) entries.push({ field: 'exports', value: path });
    for (const { field, value } of entries) {
      const rel = entryPath(value);
      if (rel === null || !isBuiltFile(rel)) continue;
      candidates.push({ package: pkg.name, field, path: `${pkg.dir}/${rel}` });
    }
  }
  const ignored = gitIgnored(root, candidates.map((c) => c.path));
  const built = candidates.filter((c) => ignored.has(c.path) || !existsSync(join(root, c.path)));
  // One entry per package: the first field that points into build output says enough.
  const seen = new Set<string>();
  const builtEntries = built.filter((c) => !seen.has(c.package) && (seen.add(c.package), true));
  const tsconfig = readTsconfig(join(root, 'tsconfig.json'));
  const references = tsconfig?.references;
  const rootReferences = Array.isArray(references) && references.length > 0;
  const rootSolution = rootReferences && Array.isArray(tsconfig?.files) && tsconfig.files.length === 0 && tsconfig.include === undefined;
  return { rootReferences, rootSolution, builtEntries };
}

/** A package-relative path without "..", or null. */
function entryPath(value: unknown): string | null {
  if (typeof value !== 'string' || value === '' || value.length > 1024 || value.includes('\0') || value.includes('*')) return null;
  const normal = posix.normalize(value.replace(/\\/g, '/'));
  if (normal.startsWith('/') || normal === '..' || normal.startsWith('../') || normal === '.') return null;
  return normal.replace(/^\.\//, '');
}

/** Emitted JavaScript or declarations; a TypeScript source needs no build. */
function isBuiltFile(path: string): boolean {
  return /\.(d\.[mc]?ts|[mc]?js)$/.test(path);
}

function exportPaths(exports: unknown): string[] {
  const out: string[] = [];
  const visit = (value: unknown, depth: number) => {
    if (out.length >= MAX_EXPORT_PATHS || depth > 4) return;
    if (typeof value === 'string') out.push(value);
    else if (value !== null && typeof value === 'object' && !Array.isArray(value)) for (const item of Object.values(value)) visit(item, depth + 1);
  };
  visit(exports, 0);
  return out;
}

function gitIgnored(root: string, paths: readonly string[]): Set<string> {
  if (paths.length === 0) return new Set();
  const result = spawnSync('git', ['check-ignore', '--stdin', '-z'], {
    cwd: root,
    input: paths.join('\0') + '\0',
    encoding: 'utf8',
    env: { ...process.env, GIT_OPTIONAL_LOCKS: '0' },
    timeout: 10_000,
    maxBuffer: 4 * 1024 * 1024,
  });
  // Exit 1: none is ignored; 128: not a repository (then "not there" alone decides).
  if (result.status !== 0 || typeof result.stdout !== 'string') return new Set();
  return new Set(result.stdout.split('\0').filter(Boolean));
}

/**
 * A tsconfig.json's top-level object, or null when it is missing, too large or
 * not JSON. Comments and trailing commas are allowed, as tsc allows them;
 * "extends" is not followed (references and files are not inherited).
 */
function readTsconfig(path: string): Record<string, unknown> | null {
  try {
    const stat = lstatSync(path);
    if (!stat.isFile() || stat.size > MAX_TSCONFIG_BYTES) return null;
    const parsed = JSON.parse(stripJsonc(readFileSync(path, 'utf8'))) as unknown;
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** JSON with comments and trailing commas, as tsconfig.json allows, made plain JSON. */
export function stripJsonc(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i += 1) {
    const char = text[i]!;
    if (char === '"') {
      const start = i;
      for (i += 1; i < text.length && text[i] !== '"'; i += 1) if (text[i] === '\\') i += 1;
      out += text.slice(start, i + 1);
    } else if (char === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i += 1;
      out += '\n';
    } else if (char === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end === -1 ? text.length : end + 1;
      out += ' ';
    } else {
      out += char;
    }
  }
  return out.replace(/,(\s*[}\]])/g, '$1');
}
