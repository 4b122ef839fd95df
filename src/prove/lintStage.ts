import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Issue } from '../core/claim.js';
import { ClaimError } from '../core/claimError.js';
import { installedVersion } from './workspaceTool.js';
import { BIOME_PACKAGE } from './biomeInstall.js';
import { BiomeStage } from './biomeStage.js';
import { EslintStage } from './eslintStage.js';
import { BIOME_CONFIGS, ESLINT_CONFIGS, OXLINT_CONFIGS } from './lintIgnore.js';
import { OxlintStage } from './oxlintStage.js';
import type { Inspection, StageInstance, Tool } from './stage.js';

export type LinterName = 'oxlint' | 'eslint' | 'biome';

/** The npm package each linter is installed as, whose version the receipt carries under the linter's name. */
const PACKAGES: Record<LinterName, string> = { oxlint: 'oxlint', eslint: 'eslint', biome: BIOME_PACKAGE };

/** The installed version of a linter's package, as the workspace resolves it. */
export function linterVersion(workspace: string, name: LinterName): string | null {
  return installedVersion(workspace, PACKAGES[name]);
}

/** The linter a workspace uses, and whether its lint script fails on warnings too. */
export interface LinterChoice {
  name: LinterName;
  /**
   * `oxlint --deny-warnings`, `biome lint --error-on-warnings`, or
   * `--max-warnings 0` for oxlint or ESLint: the workspace's lint check then
   * fails on a warning, so a warning is an issue. Any other `--max-warnings N`
   * is a count across the whole run, which one claim cannot be judged
   * against; warnings then stay out, as by default.
   */
  warningsFail: boolean;
}

/**
 * The linter a script runs, by the first one it mentions: oxlint or eslint as
 * a word, or Biome by a command that lints (`biome lint`, `biome check`,
 * `biome ci`; `biome format` does not, https://biomejs.dev/reference/cli/).
 */
function named(script: string): LinterChoice | null {
  const match = /\b(oxlint|eslint)\b|\b(biome)\s+(?:lint|check|ci)\b/.exec(script);
  if (match === null) return null;
  const name = (match[1] ?? match[2]) as LinterName;
  const warningsFail =
    name === 'biome'
      ? /--error-on-warnings\b/.test(script)
      : /--max-warnings(?:=|\s+)0\b/.test(script) || (name === 'oxlint' && /--deny-warnings\b/.test(script));
  return { name, warningsFail };
}


/**
 * The linter the workspace itself uses, in order of how plainly it says so:
 * the `lint` script, then any other script, then a config file at the root
 * (oxlint's, then ESLint's, then Biome's with @biomejs/biome installed), then
 * whichever is installed, in the same order. The first answer wins, so a workspace that runs two is
 * judged by the one its `lint` script names first, and one with a
 * `biome.json` beside an `eslint.config.js` and no script naming either by
 * ESLint (a Biome config is often there for formatting alone).
 */
export function pickLinter(workspace: string): LinterChoice {
  let scripts: Record<string, unknown> = {};
  try {
    const pkg = JSON.parse(readFileSync(join(workspace, 'package.json'), 'utf8')) as { scripts?: Record<string, unknown> };
    scripts = pkg.scripts ?? {};
  } catch {
    // No package.json, or one that does not parse: the config files and installs below still say something.
  }
  const lint = typeof scripts.lint === 'string' ? named(scripts.lint) : null;
  if (lint) return lint;
  for (const script of Object.values(scripts)) {
    const choice = typeof script === 'string' ? named(script) : null;
    if (choice) return choice;
  }
  if (OXLINT_CONFIGS.some((file) => existsSync(join(workspace, file)))) return { name: 'oxlint', warningsFail: false };
  if (ESLINT_CONFIGS.some((file) => existsSync(join(workspace, file)))) return { name: 'eslint', warningsFail: false };
  // A biome.json counts with Biome installed beside it: it is also read by editors, and kept for formatting.
  const biomeConfigured = BIOME_CONFIGS.some((file) => existsSync(join(workspace, file)));
  if (biomeConfigured && linterVersion(workspace, 'biome') !== null) return { name: 'biome', warningsFail: false };
  for (const name of ['oxlint', 'eslint', 'biome'] as const) if (linterVersion(workspace, name) !== null) return { name, warningsFail: false };
  if (biomeConfigured) {
    throw new ClaimError('workspace', 'missing', `${workspace} has a Biome config but no ${BIOME_PACKAGE} installed, and no other linter; install it there (npm install --save-dev ${BIOME_PACKAGE})`);
  }
  throw new ClaimError(
    'workspace',
    'missing',
    `${workspace} has no linter: none of oxlint, eslint or Biome is named in package.json scripts, configured (.oxlintrc.json, eslint.config.js, biome.json) or installed; add one (npm install --save-dev oxlint, plus a "lint": "oxlint" script)`,
  );
}

function createLinter(workspace: string, choice: LinterChoice): StageInstance {
  const options = { warningsFail: choice.warningsFail };
  if (choice.name === 'oxlint') return new OxlintStage(workspace, options);
  return choice.name === 'biome' ? new BiomeStage(workspace, options) : new EslintStage(workspace, options);
}

/**
 * The lint stage: the workspace's linter, chosen again before each
 * inspection, because package.json is read from disk like everything else.
 * A change of flags rebuilds the linter. A change of linter or of its
 * installed version cannot be absorbed: the coordinator took the tool's name
 * and version at warm() for the receipt, so the answer would be attributed to
 * the wrong tool; it is refused as an instrument issue until vouch warms again.
 */
export class LintStage implements StageInstance {
  readonly stage = 'lint' as const;
  readonly #workspace: string;
  #linter: StageInstance | null = null;
  #choice: LinterChoice | null = null;
  #tool: Tool | null = null;
  /** Progress of linters this stage already replaced, so the counter never goes back. */
  #progressBefore = 0;
  #destroyed = false;

  constructor(workspace: string) {
    this.#workspace = workspace;
  }

  /** The linter doing the work now, for tests. */
  get linter(): StageInstance | null {
    return this.#linter;
  }

  async warm(): Promise<Tool> {
    const choice = pickLinter(this.#workspace);
    await this.#replace(choice);
    this.#tool = await this.#linter!.warm();
    return this.#tool;
  }

  async inspect(inspection: Inspection): Promise<Issue[]> {
    if (this.#destroyed) throw new ClaimError('instrument', 'destroyed', 'the lint stage was destroyed');
    if (this.#tool === null) await this.warm();
    const choice = pickLinter(this.#workspace);
    const version = linterVersion(this.#workspace, choice.name);
    if (version === null) throw new ClaimError('workspace', 'missing', `${PACKAGES[choice.name]} is no longer installed in ${this.#workspace}; install it there (npm install --save-dev ${PACKAGES[choice.name]})`);
    const tool = this.#tool!;
    if (choice.name !== tool.name || version !== tool.version) {
      return [{ origin: 'instrument', stage: 'lint', message: `the workspace's linter is now ${choice.name}@${version}, not the ${tool.name}@${tool.version} vouch warmed; restart vouch so the verdict names the tool that judged` }];
    }
    if (choice.warningsFail !== this.#choice!.warningsFail) {
      await this.#replace(choice);
      await this.#linter!.warm();
    }
    return this.#linter!.inspect(inspection);
  }

  progress(): number {
    return this.#progressBefore + (this.#linter?.progress() ?? 0);
  }

  stale(): boolean {
    if (this.#tool === null) return false;
    try {
      const choice = pickLinter(this.#workspace);
      return choice.name !== this.#tool.name || linterVersion(this.#workspace, choice.name) !== this.#tool.version;
    } catch {
      // No linter at all now: warming again says so, as workspace/missing.
      return true;
    }
  }

  async destroy(): Promise<void> {
    this.#destroyed = true;
    await this.#linter?.destroy();
  }

  async #replace(choice: LinterChoice): Promise<void> {
    const old = this.#linter;
    if (old !== null) {
      this.#progressBefore += old.progress();
      await old.destroy();
    }
    this.#linter = createLinter(this.#workspace, choice);
    this.#choice = choice;
  }
}

/** The lint stage for a workspace; one with no linter refuses with workspace/missing from warm() and inspect(). */
export function createLintStage(workspace: string): StageInstance {
  return new LintStage(workspace);
}
