import { existsSync, mkdirSync, readdirSync, writeFileSync, type Dirent } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import picomatch from 'picomatch';
import { globMatcher } from '../fs/globMatcher.js';
import { CONFIG_FILE, type PackageManagerName } from '../core/config.js';
import { checkStateDir, ensureStateDir } from '../store/stateDir.js';
import { VouchError } from '../core/errors.js';
import { traceAvailability } from '../exec/trace/tracer.js';
import { INVENTED_NOTE, proposeConfig, type Proposal, type VerifyOutcome } from './initProposal.js';
import { readWorkspace } from '../exec/readWorkspace.js';
import type { Workspace } from '../core/workspace.js';
import { readBuildOutputs } from '../exec/readBuildOutputs.js';
import {
  detectPackageManager,
  readPackageJson,
  workspaceGlobs,
  type DetectedPackageManager,
} from '../exec/detectPackageManager.js';

export interface InitOptions {
  cwd: string;
  /** Where to write the config (relative to cwd); default vouch.config.json at the root. */
  config?: string;
  /** The state dir (relative to cwd); default .vouch/ at the root. */
  stateDir?: string;
  /** Propose only: write nothing. */
  dryRun?: boolean;
  /** Propose the scripts left out by default too. */
  all?: boolean;
  /** Run each proposed check once before writing: drop an invented check that fails, flag a script that fails. */
  verify?: boolean;
  /** The environment checks run with under --verify. */
  env?: NodeJS.ProcessEnv;
  /** Told as each check starts and ends under --verify (progress for a person). */
  onVerify?(event: { name: string; outcome: VerifyOutcome | null }): void;
}

export interface InitResult {
  root: string;
  configPath: string;
  stateDir: string;
  /** The config was written by this call. */
  written: boolean;
  /** A file already sat at configPath, so nothing was written. */
  existing: boolean;
  dryRun: boolean;
  /** --all was given. */
  all: boolean;
  /** --verify ran each proposed check. */
  verify: boolean;
  packageManager: DetectedPackageManager;
  proposal: Proposal;
  /** The proposed config file's exact text. */
  configText: string;
}

export const STATE_DIR = '.vouch';

/**
 * Proposes a config from the project's package.json, package manager and
 * tsconfig, and writes it unless a config is already there. It never
 * overwrites: the write itself fails if the file appeared meanwhile.
 */
export async function init(options: InitOptions): Promise<InitResult> {
  const cwd = resolve(options.cwd);
  const explicitConfig = options.config === undefined ? null : resolve(cwd, options.config);
  const searchFrom = explicitConfig === null ? cwd : dirname(explicitConfig);
  const root = findPackageRoot(searchFrom);
  const configPath = explicitConfig ?? join(root, CONFIG_FILE);
  const stateDir = options.stateDir === undefined ? join(root, STATE_DIR) : resolve(cwd, options.stateDir);
  const dryRun = options.dryRun === true;

  const packageManager = detectPackageManager(root);
  const packageJson = readPackageJson(root) ?? {};
  const rootField = relative(dirname(configPath), root).split('\\').join('/');
  // A workspace vouch cannot read costs only its package checks: the root's are proposed, and init says why.
  let workspace: Workspace | null = null;
  let workspaceProblem: string | null = null;
  try {
    workspace = readWorkspace(root);
  } catch (error) {
    if (!(error instanceof VouchError)) throw error;
    workspaceProblem = error.message;
  }
  const proposal = proposeConfig({
    packageJson,
    packageManager,
    hasTsconfig: existsSync(join(root, 'tsconfig.json')),
    tsc: findTsc(root),
    workspaceInstallDirs: workspaceInstallDirs(root),
    rootField: rootField === '' ? undefined : rootField,
    tracing: traceAvailability(),
    all: options.all === true,
    workspace,
    buildOutputs: readBuildOutputs(root, workspace),
  });
  if (workspaceProblem !== null) {
    proposal.notes.push(`No package checks are proposed: ${workspaceProblem}. Fix that and run vouch init again to propose each package's scripts as PACKAGE#SCRIPT checks.`);
  }
  if (packageManager.name === 'yarn' && existsSync(join(root, '.pnp.cjs'))) {
    proposal.notes.push(
      "Yarn Plug'n'Play keeps packages in .yarn/ and its cache, not node_modules/, and vouch records installed packages only " +
        'under the "installed" globs. A dependency change still shows through yarn.lock, which the proposed checks read; ' +
        'keep it committed, or set "nodeLinker: node-modules" in .yarnrc.yml.',
    );
  }
  if (rootField === '..' || rootField.startsWith('../') || isAbsolute(rootField)) {
    proposal.notes.push(
      `${configPath} lies outside the root ${root}, and a config's "root" may only name its own directory or one below it ` +
        `(a cloned repository's config must not point vouch elsewhere). Pass --root ${root} with --config to every command, ` +
        'or put the config at the root.',
    );
  }
  if (proposal.checks.length === 0) throw nothingToCheck(root, proposal);
  if (options.verify === true) {
    await verifyProposal(root, packageManager.name, proposal, options);
    if (proposal.checks.length === 0) throw nothingToCheck(root, proposal);
  } else if (proposal.checks.some((p) => p.invented)) {
    proposal.notes.push(INVENTED_NOTE);
  }

  const configText = JSON.stringify(proposal.config, null, 2) + '\n';
  // The same validator every command loads with: a proposal it rejects is never written.
  const { parseConfig } = await import('../core/configSchema.js');
  parseConfig(configText, configPath);

  let existing = existsSync(configPath);
  let written = false;
  // Refused before the config is written, so a refusal leaves nothing behind.
  if (!dryRun && !existing) checkStateDir(stateDir);
  if (!dryRun && !existing) {
    mkdirSync(dirname(configPath), { recursive: true });
    try {
      writeFileSync(configPath, configText, { flag: 'wx' });
      written = true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      existing = true;
    }
  }
  if (written) ensureStateDir(stateDir);
  return { root, configPath, stateDir, written, existing, dryRun, all: options.all === true, verify: options.verify === true, packageManager, proposal, configText };
}

/** Longer than any check a person would wait for at init; a hung check must not hang init. */
const VERIFY_TIMEOUT_MS = 15 * 60 * 1000;

/**
 * Runs each proposed check once, in the config's order (so a build runs
 * before the checks that read its output). An invented check that fails is
 * dropped, with why; a script that fails stays proposed, flagged: it is the
 * project's own check, and it fails on this tree.
 */
async function verifyProposal(root: string, packageManager: PackageManagerName, proposal: Proposal, options: InitOptions): Promise<void> {
  const { verifyCheck } = await import('../exec/verifyCheck.js');
  // A copy: a dropped check leaves proposal.checks while this walks it.
  for (const proposed of proposal.checks.slice()) {
    options.onVerify?.({ name: proposed.check.name, outcome: null });
    const outcome = await verifyCheck(root, proposed.check, packageManager, options.env ?? process.env, VERIFY_TIMEOUT_MS);
    proposed.verify = outcome;
    options.onVerify?.({ name: proposed.check.name, outcome });
    if (outcome.passed || !proposed.invented) continue;
    proposal.checks.splice(proposal.checks.indexOf(proposed), 1);
    proposal.config.checks.splice(proposal.config.checks.indexOf(proposed.check), 1);
    proposal.dropped.push({ name: proposed.check.name, command: proposed.check.command ?? [], reason: failureText(outcome), verify: outcome });
    for (const other of proposal.checks) other.needsFirst = other.needsFirst.filter((name) => name !== proposed.check.name);
  }
  const failed = proposal.checks.filter((p) => p.verify !== null && !p.verify.passed);
  if (failed.length > 0) {
    proposal.notes.push(
      `${failed.map((p) => `"${p.check.name}"`).join(', ')} failed when --verify ran ${failed.length === 1 ? 'it' : 'them'} on this tree. ` +
        `${failed.length === 1 ? 'It is' : 'They are'} proposed anyway, as the project's own script${failed.length === 1 ? '' : 's'}: a receipt records a failure as well. ` +
          `Fix the tree, or remove ${failed.length === 1 ? 'it' : 'them'} from the config.`,
    );
  }
}

/** Why a check did not pass, in one sentence. */
export function failureText(outcome: VerifyOutcome): string {
  if (outcome.error !== null) return `it did not pass: ${outcome.error}`;
  if (outcome.signal !== null) return `it was ended by ${outcome.signal}`;
  return `it failed on this tree (exit code ${outcome.exitCode})`;
}

/** The nearest directory at or above `start` with a package.json. */
function findPackageRoot(start: string): string {
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) break;
  }
  throw new VouchError(
    'no-package-json',
    `no package.json in ${start} or any directory above it, and vouch init proposes checks from package.json scripts. ` +
      `Run "npm init" there to create one, or write ${CONFIG_FILE} by hand (see docs/config.md).`,
  );
}

/**
 * The project's own tsc: "tsc", which a check finds in the nearest
 * node_modules/.bin at or above the root (a workspace root that hoists
 * TypeScript has it). Null when TypeScript does not resolve from the root,
 * so a tsc elsewhere on PATH is never proposed.
 */
function findTsc(root: string): string | null {
  try {
    createRequire(join(root, 'package.json')).resolve('typescript');
  } catch {
    return null;
  }
  for (let dir = root; ; dir = dirname(dir)) {
    const bin = join(dir, 'node_modules', '.bin', 'tsc');
    if (existsSync(bin)) return 'tsc';
    if (dirname(dir) === dir) return null;
  }
}

const WALK_SKIP = new Set(['node_modules', '.git', STATE_DIR]);
const DEEPEST_WORKSPACE = 8;

/**
 * Workspace directories (from the root's workspace globs) that have their own
 * node_modules: packages installed there are inputs just like the root's.
 */
function workspaceInstallDirs(root: string): string[] {
  const globs = workspaceGlobs(root).map((glob) => glob.replace(/^(!?)\.\//, '$1').replace(/\/+$/, ''));
  const positive = globs.filter((glob) => !glob.startsWith('!'));
  if (positive.length === 0) return [];
  const negative = globs.filter((glob) => glob.startsWith('!')).map((glob) => glob.slice(1));
  const included = globMatcher(positive);
  const excluded = globMatcher(negative);
  const isMember = (path: string) => included(path) && !excluded(path);
  const found = new Set<string>();
  const visit = (rel: string, depth: number) => {
    if (rel !== '' && isMember(rel) && existsSync(join(root, rel, 'node_modules'))) found.add(rel);
    if (depth >= DEEPEST_WORKSPACE) return;
    let entries: Dirent[];
    try {
      entries = readdirSync(rel === '' ? root : join(root, rel), { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (entry.isDirectory() && !WALK_SKIP.has(entry.name)) visit(rel === '' ? entry.name : `${rel}/${entry.name}`, depth + 1);
    }
  };
  for (const base of new Set(positive.map((glob) => picomatch.scan(glob).base))) {
    if (base === '' || existsSync(join(root, base))) visit(base, base === '' ? 0 : base.split('/').length);
  }
  return [...found].sort();
}

function nothingToCheck(root: string, proposal: Proposal): VouchError {
  const skipped = proposal.skipped.map((s) => `\n  "${s.package === null ? '' : `${s.package}#`}${s.script}" not proposed: ${s.reason}`).join('');
  const dropped = proposal.dropped.map((d) => `\n  "${d.name}" (${d.command.join(' ')}) dropped: ${d.reason}${d.verify.outputHead.map((line) => `\n      ${line}`).join('')}`).join('');
  const notes = proposal.notes.map((note) => `\n  ${note}`).join('');
  return new VouchError(
    'init-nothing-to-check',
    `found nothing to check in ${join(root, 'package.json')}: no script is named typecheck, lint, test, build or check, ` +
      `none runs a tool vouch knows (tsc, eslint, oxlint, biome, prettier --check, vitest, jest, mocha, node --test, ava), ` +
      `and there is no tsconfig.json with TypeScript installed.${skipped}${dropped}${notes}\n` +
      `Add such a script to package.json and run vouch init again, or write ${CONFIG_FILE} by hand (see docs/config.md).`,
  );
}
