import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { CONFIG_FILE, type Config, type PackageManagerName } from '../core/config.js';
import { definitionOf, type CheckDefinition } from '../core/definition.js';
import { sha256 } from '../core/digest.js';
import { VouchError } from '../core/errors.js';
import { checkStateDir, readStateFile, writeStateFile } from '../store/stateDir.js';

/** A config, resolved against the file system: everything a command needs to know where to look. */
export interface Project {
  root: string;
  configPath: string;
  config: Config;
  stateDir: string;
  /** Root-relative paths that are never inputs: the state dir (with a trailing "/") and vouch's own config. */
  excluded: string[];
  scripts: Record<string, string> | null;
  definitions: CheckDefinition[];
}

export interface ProjectOptions {
  cwd: string;
  config?: string | undefined;
  stateDir?: string | undefined;
}

const VALIDATED_MARK = 'config.validated';

export function findConfig(cwd: string, explicit: string | undefined): string {
  if (explicit !== undefined) {
    const path = resolve(cwd, explicit);
    if (!existsSync(path)) {
      throw new VouchError('config-not-found', `${path} does not exist; check the --config path, or create it with "vouch init --config ${explicit}"`);
    }
    return path;
  }
  for (let dir = cwd; ; dir = dirname(dir)) {
    const path = join(dir, CONFIG_FILE);
    if (existsSync(path)) return path;
    if (dirname(dir) === dir) break;
  }
  throw new VouchError('config-not-found', `no ${CONFIG_FILE} in ${cwd} or any directory above it; run "vouch init" in the project root, or pass --config FILE`);
}

/** Where a project's config, root and state dir are. */
export interface ProjectPlace {
  configPath: string;
  root: string;
  stateDir: string;
  /** The config's text, as read. */
  text: string;
}

/**
 * Finds the config and reads where its root and state dir are, and nothing
 * more: enough to reach an observer, even one whose root has gone.
 */
export function locateProject(options: ProjectOptions): ProjectPlace {
  const configPath = findConfig(options.cwd, options.config);
  let text: string;
  try {
    text = readFileSync(configPath, 'utf8');
  } catch (error) {
    throw new VouchError('config-unreadable', `cannot read ${configPath} (${(error as NodeJS.ErrnoException).code}); fix its permissions`);
  }
  const root = resolve(dirname(configPath), peekRoot(text));
  const stateDir = options.stateDir !== undefined ? resolve(options.cwd, options.stateDir) : join(root, '.vouch');
  // Every command finds its state here, before it reads or writes any: a link, or someone else's, is refused.
  checkStateDir(stateDir);
  return { configPath, root, stateDir, text };
}

export async function loadProject(options: ProjectOptions): Promise<Project> {
  const { configPath, root, stateDir, text } = locateProject(options);
  const config = await validated(text, configPath, stateDir);
  if (!existsSync(root)) {
    throw new VouchError('root-not-found', `the root ${root} named in ${configPath} does not exist; fix "root" (it is relative to the config file)`);
  }

  // The state dir is written with a trailing "/": the listing flags anything git shows in it (fs/sourceFiles.ts).
  const excluded = [...insideRoot(root, stateDir).map((rel) => rel + '/'), ...insideRoot(root, configPath)];

  const scripts = readScripts(root);
  const needsPackageManager = config.checks.some((check) => check.script !== undefined);
  if (needsPackageManager && scripts === null) {
    throw new VouchError('no-package-json', `${join(root, 'package.json')} does not exist, but ${configPath} has "script" checks; create package.json (npm init), or use "command" checks`);
  }
  let packageManager: PackageManagerName | null = config.packageManager ?? null;
  if (needsPackageManager && packageManager === null) {
    const { detectPackageManager } = await import('../exec/detectPackageManager.js');
    packageManager = detectPackageManager(root).name;
  }
  const definitions = config.checks.map((check) => definitionOf(check, packageManager));
  return { root, configPath, config, stateDir, excluded, scripts, definitions };
}

/** `path` relative to the root, "/"-separated, when it lies below it. */
function insideRoot(root: string, path: string): string[] {
  const rel = relative(root, path);
  if (rel === '' || rel.startsWith('..' + sep) || rel === '..' || isAbsolute(rel)) return [];
  return [rel.split(sep).join('/')];
}

function peekRoot(text: string): string {
  try {
    const value = (JSON.parse(text) as { root?: unknown }).root;
    return typeof value === 'string' && value.length > 0 ? value : '.';
  } catch {
    return '.';
  }
}

/**
 * The validator costs ~100 ms to load, more than a whole warm status. A config
 * whose exact bytes were validated before is trusted; any change revalidates.
 */
async function validated(text: string, configPath: string, stateDir: string): Promise<Config> {
  const digest = sha256(`${configPath}\0${text}`);
  const mark = join(stateDir, VALIDATED_MARK);
  // A state dir that is a link or someone else's is refused here, before its mark is trusted or written.
  const stateDirExists = checkStateDir(stateDir);
  if (stateDirExists && readStateFile(mark) === digest) return JSON.parse(text) as Config;
  const { parseConfig } = await import('../core/configSchema.js');
  const config = parseConfig(text, configPath);
  try {
    if (stateDirExists) writeStateFile(mark, digest, stateDir);
  } catch {
    // A read-only state dir only costs revalidation next time.
  }
  return config;
}

function readScripts(root: string): Record<string, string> | null {
  let text: string;
  try {
    text = readFileSync(join(root, 'package.json'), 'utf8');
  } catch {
    return null;
  }
  try {
    const scripts = (JSON.parse(text) as { scripts?: Record<string, string> }).scripts;
    return scripts && typeof scripts === 'object' ? scripts : {};
  } catch (error) {
    throw new VouchError('package-json-invalid', `${join(root, 'package.json')} is not valid JSON (${(error as Error).message}); fix it`);
  }
}

/** Picks checks by name, in the order asked; with no names, every check in config order. */
export async function selectChecks(project: Project, names: readonly string[]): Promise<CheckDefinition[]> {
  if (names.length === 0) return project.definitions;
  const byName = new Map(project.definitions.map((definition) => [definition.name, definition]));
  const selected: CheckDefinition[] = [];
  for (const name of names) {
    const definition = byName.get(name);
    if (!definition) {
      const { closest } = await import('fastest-levenshtein');
      const known = [...byName.keys()];
      throw new VouchError('unknown-check', `no check named "${name}" in ${project.configPath}; did you mean "${closest(name, known)}"? Checks: ${known.join(', ')}`);
    }
    if (!selected.includes(definition)) selected.push(definition);
  }
  return selected;
}
