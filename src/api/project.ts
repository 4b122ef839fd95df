import { existsSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import type { Config, PackageManagerName } from '../core/config.js';
import { PACKAGE_SEPARATOR, splitCheckName, type Workspace } from '../core/workspace.js';
import type { TaskRunnerConfig } from '../core/taskRunners.js';
import { CONFIG_RULES_REVISION } from '../core/configLimits.js';
import { checkArgv, definitionOf, type CheckDefinition } from '../core/definition.js';
import { sha256 } from '../core/digest.js';
import { VouchError } from '../core/errors.js';
import { VERSION } from '../core/version.js';
import { isInside } from '../core/pathInside.js';
import { needsShellParser, plainCommandWords, type CommandSplitter } from '../core/scriptContext.js';
import { readStateFile, writeStateFile } from '../store/stateDir.js';
import { locateProject, type ProjectOptions } from './projectPlace.js';

export { findConfig, locateProject, type ProjectOptions, type ProjectPlace } from './projectPlace.js';

/** A config, resolved against the file system: everything a command needs to know where to look. */
export interface Project {
  root: string;
  configPath: string;
  config: Config;
  stateDir: string;
  /** Root-relative paths that are never inputs: the state dir (with a trailing "/") and vouch's own config. */
  excluded: string[];
  scripts: Record<string, string> | null;
  /** Splits the script bodies the checks run: the shell parser only where a body needs it (core/scriptContext.ts). */
  splitScript: CommandSplitter;
  definitions: CheckDefinition[];
  /** The workspace, read only when a check names a "package" (docs/workspaces.md); else null. */
  workspace: Workspace | null;
  /** The root came from --root, not from the config: a process started for this project must be given it too. */
  rootFromCommandLine: boolean;
}

const VALIDATED_MARK = 'config.validated';

export async function loadProject(options: ProjectOptions): Promise<Project> {
  const { configPath, root, stateDir, text, rootFromCommandLine } = locateProject(options);
  const config = await validated(text, configPath, root, stateDir);
  if (!existsSync(root)) {
    throw new VouchError(
      'root-not-found',
      rootFromCommandLine
        ? `the root ${root} given with --root does not exist; fix the path`
        : `the root ${root} named in ${configPath} does not exist; fix "root" (it is relative to the config file)`,
    );
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
  const workspace = config.checks.some((check) => check.package !== undefined) ? await memberWorkspace(root, configPath, config) : null;
  const definitions = config.checks.map((check) => definitionOf(check, packageManager, workspace));
  const project: Project = { root, configPath, config, stateDir, excluded, scripts, splitScript: plainCommandWords, definitions, workspace, rootFromCommandLine };
  if (definitions.some((definition) => needsShellParser(checkArgv(definition), scriptsFor(project, definition)))) {
    project.splitScript = (await import('../core/shellWords.js')).commandWords;
  }
  return project;
}

/** The workspace, when every check's "package" is one of its members; else a config error that names the members. */
async function memberWorkspace(root: string, configPath: string, config: Config): Promise<Workspace> {
  const { readWorkspace } = await import('../exec/readWorkspace.js');
  const workspace = readWorkspace(root);
  for (const check of config.checks) {
    if (check.package === undefined) continue;
    if (workspace === null) {
      throw new VouchError(
        'config-invalid',
        `${configPath}: check "${check.name}" names the package "${check.package}", but ${root} declares no workspace (no pnpm-workspace.yaml "packages", no package.json "workspaces"); declare one, or remove "package"`,
      );
    }
    if (!workspace.packages.some((pkg) => pkg.dir === check.package)) {
      const dirs = workspace.packages.map((pkg) => pkg.dir);
      throw new VouchError(
        'config-invalid',
        `${configPath}: check "${check.name}" names the package "${check.package}", which is not a member of the workspace (${dirs.length > 0 ? `members: ${dirs.slice(0, 20).join(', ')}${dirs.length > 20 ? ', …' : ''}` : 'it has no members'}); fix "package"`,
      );
    }
  }
  return workspace!;
}

/** The package.json scripts a check's package manager sees: its package's for a package check, else the root's. */
export function scriptsFor(project: Pick<Project, 'scripts' | 'workspace'>, definition: CheckDefinition): Record<string, string> | null {
  if (definition.package === undefined) return project.scripts;
  return project.workspace?.packages.find((pkg) => pkg.dir === definition.package)?.scripts ?? null;
}

/** `path` relative to the root, "/"-separated, when it lies below it. */
function insideRoot(root: string, path: string): string[] {
  const rel = relative(root, path);
  return rel !== '' && isInside(root, path) ? [rel.split(sep).join('/')] : [];
}

/**
 * The validator costs ~100 ms to load, more than a whole warm status. A config
 * whose exact bytes were validated before, by this vouch, for this root and
 * state dir, is trusted; any change revalidates. The version is in the digest
 * because rules only get stricter: a mark an older vouch wrote proves nothing.
 */
async function validated(text: string, configPath: string, root: string, stateDir: string): Promise<Config> {
  const digest = sha256(`vouch ${VERSION} rules ${CONFIG_RULES_REVISION}\0${configPath}\0${root}\0${stateDir}\0${text}`);
  const mark = join(stateDir, VALIDATED_MARK);
  // locateProject has refused a state dir that is a link or someone else's: its mark may be trusted.
  const stateDirExists = existsSync(stateDir);
  if (stateDirExists && readStateFile(mark) === digest) return JSON.parse(text) as Config;
  const { parseConfig } = await import('../core/configSchema.js');
  const stateRel = relative(root, stateDir).split(sep).join('/');
  const config = parseConfig(text, configPath, { reserved: isInside(root, stateDir) && stateRel !== '' ? [stateRel] : [] });
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

/**
 * Picks checks by name, in the order asked; with no names, every check in
 * config order. A name without "#" also picks every package check of that
 * name: `test` is the root's `test` and every `PACKAGE#test`, in config order.
 */
export async function selectChecks(project: Project, names: readonly string[]): Promise<CheckDefinition[]> {
  if (names.length === 0) return project.definitions;
  const byName = new Map(project.definitions.map((definition) => [definition.name, definition]));
  const selected: CheckDefinition[] = [];
  for (const name of names) {
    const definitions = [
      ...(byName.has(name) ? [byName.get(name)!] : []),
      ...(name.includes(PACKAGE_SEPARATOR) ? [] : project.definitions.filter((definition) => definition.package !== undefined && splitCheckName(definition.name)?.script === name)),
    ];
    if (definitions.length === 0) {
      const { closest } = await import('fastest-levenshtein');
      const known = [...byName.keys()];
      throw new VouchError('unknown-check', `no check named "${name}" in ${project.configPath}; did you mean "${closest(name, known)}"? Checks: ${known.join(', ')}`);
    }
    for (const definition of definitions) if (!selected.includes(definition)) selected.push(definition);
  }
  return selected;
}

/** The one check named exactly `name`; a name that stands for several package checks asks for one of them. */
export async function selectCheck(project: Project, name: string): Promise<CheckDefinition> {
  const selected = await selectChecks(project, [name]);
  const exact = selected.find((definition) => definition.name === name);
  if (exact) return exact;
  throw new VouchError('unknown-check', `"${name}" is ${selected.length} package checks (${selected.map((definition) => definition.name).join(', ')}); name one of them`);
}

/**
 * What decides which packages a workspace command runs, besides the workspace itself: turbo.json's and
 * nx.json's tasks (whether `turbo run` or `nx` runs more than a package's script), read only for a command
 * that may name them, and whether pnpm and npm leave the root out of a recursive run.
 */
export async function fanOutFacts(
  project: Pick<Project, 'root' | 'workspace'>,
  command: string,
  env: NodeJS.ProcessEnv,
): Promise<{ turbo: TaskRunnerConfig | null; nx: TaskRunnerConfig | null; rootExcluded: boolean; yarnVariant: 'classic' | 'berry' | null }> {
  const [{ readTurbo, readNx }, { workspaceRootExcluded }] = await Promise.all([import('../exec/readTaskRunners.js'), import('../exec/workspaceRootSetting.js')]);
  const plain = command.replace(/["'\\]/g, '');
  const packages = project.workspace?.packages ?? [];
  return {
    turbo: plain.includes('turbo') ? readTurbo(project.root, packages) : null,
    nx: plain.includes('nx') ? readNx(project.root, packages) : null,
    rootExcluded: workspaceRootExcluded(project.root, env),
    yarnVariant: plain.includes('yarn') ? await yarnVariantOf(project.root) : null,
  };
}

async function yarnVariantOf(root: string): Promise<'classic' | 'berry' | null> {
  const { detectPackageManager } = await import('../exec/detectPackageManager.js');
  try {
    const detected = detectPackageManager(root);
    return detected.name === 'yarn' ? (detected.variant ?? null) : null;
  } catch {
    return null; // ambiguous lockfiles: nothing known, both forms resolve as without the variant
  }
}
