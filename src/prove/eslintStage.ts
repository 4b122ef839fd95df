import { join } from 'node:path';
import { ClaimError } from '../core/claimError.js';
import { eslintInputs } from './lintIgnore.js';
import { type Finding, type IgnoredBy, type LintFailure, type LinterOptions, ResidentLinter } from './residentLinter.js';
import { importPackageEntry, installedPackage, packageEntry } from './workspaceTool.js';

/** The slice of ESLint's API this stage uses; typed here because vouch must not import the workspace's types. */
interface LintMessage {
  ruleId: string | null;
  severity: number;
  fatal?: boolean;
  message: string;
  line?: number;
  column?: number;
}
interface ESLintInstance {
  lintText(code: string, options: { filePath: string; warnIgnored: boolean }): Promise<Array<{ messages: LintMessage[] }>>;
  isPathIgnored(filePath: string): Promise<boolean>;
  calculateConfigForFile(filePath: string): Promise<unknown>;
}
type ESLintClass = new (options: { cwd: string }) => ESLintInstance;

/** The workspace's ESLint: its class and version, from its own install (as it is now), never vouch's. */
async function loadESLint(workspace: string): Promise<{ ESLint: ESLintClass; version: string }> {
  const installed = installedPackage(workspace, 'eslint');
  let main: string;
  try {
    if (installed === null) throw new Error('not installed');
    main = packageEntry(installed, '.');
  } catch {
    throw new ClaimError('workspace', 'missing', `eslint is not installed in ${workspace}; install it there (npm install --save-dev eslint)`);
  }
  const module = await importPackageEntry<{ ESLint?: ESLintClass; default?: { ESLint?: ESLintClass } }>(installed, main);
  const ESLint = module.ESLint ?? module.default?.ESLint;
  if (ESLint === undefined) throw new ClaimError('workspace', 'missing', `${main} exports no ESLint class; vouch needs ESLint 9 or later`);
  return { ESLint, version: installed.version };
}

/** ESLint's severities: 2 is an error, 1 a warning (`eslint` exits 0 on warnings). */
function finding(message: LintMessage): Finding {
  return {
    level: message.severity === 2 ? 'error' : message.severity === 1 ? 'warning' : 'other',
    message: message.message,
    ...(message.line === undefined ? {} : { line: message.line }),
    ...(message.line === undefined || message.column === undefined ? {} : { column: message.column }),
    ...(message.ruleId ? { code: message.ruleId } : {}),
    ...(message.fatal ? { fatal: true } : {}),
  };
}

/**
 * Lints drafts with one resident `ESLint` from the workspace, through
 * `lintText` at each draft's declared path: overrides apply and nothing is
 * written. ESLint runs in this process, so destroy() cannot interrupt a
 * lintText already running; it refuses every later step instead.
 */
export class EslintStage extends ResidentLinter {
  protected readonly tool = 'eslint';
  protected readonly label = 'ESLint';
  /** isPathIgnored is ESLint's own answer for the path, so a silence after it is a pass. */
  protected readonly silentIgnores = null;
  #eslint: ESLintInstance | null = null;

  constructor(workspace: string, options: LinterOptions = {}) {
    super(workspace, options);
  }

  protected inputs(paths: readonly string[]): string[] {
    return eslintInputs(this.workspace, paths);
  }

  protected get running(): boolean {
    return this.#eslint !== null;
  }

  protected async start(): Promise<string> {
    const { ESLint, version } = await loadESLint(this.workspace);
    const eslint = new ESLint({ cwd: this.workspace });
    // Loads the root config now (the cold cost, about 0.8 s with typescript-eslint) rather than in the first claim.
    await this.#config(() => eslint.calculateConfigForFile(join(this.workspace, 'vouch-warm.js')));
    this.#eslint = eslint;
    return version;
  }

  /** ESLint caches each config it loaded: a changed config needs a new instance. */
  protected async stop(): Promise<void> {
    this.#eslint = null;
  }

  protected async halt(): Promise<void> {
    this.#eslint = null;
  }

  protected async ignores(): Promise<IgnoredBy> {
    const eslint = this.#instance();
    return async (path) =>
      (await this.#config(() => eslint.isPathIgnored(join(this.workspace, path)))) ? "ESLint's config (an ignores pattern, or no config object whose files match it)" : null;
  }

  protected async lint(path: string, text: string): Promise<Finding[]> {
    const results = await this.#instance().lintText(text, { filePath: join(this.workspace, path), warnIgnored: true });
    return results.flatMap((result) => result.messages.map(finding));
  }

  /** The config already loaded (isPathIgnored answered), so this is a rule or parser crashing mid-lint: the lint did not complete, and the instance still serves the other drafts. */
  protected async failed(path: string, error: Error): Promise<LintFailure> {
    return { message: `ESLint failed on ${path}: ${error.message}`, survived: true };
  }

  #instance(): ESLintInstance {
    if (this.#eslint === null) throw new Error('ESLint is not running');
    return this.#eslint;
  }

  /** Loading a config is the config's failure: malformed, the workspace's to fix. */
  async #config<T>(load: () => Promise<T>): Promise<T> {
    try {
      return await load();
    } catch (error) {
      throw new ClaimError('workspace', 'malformed', `ESLint cannot use the config in ${this.workspace}: ${(error as Error).message}`);
    }
  }
}
