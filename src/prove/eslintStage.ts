import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { extname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Draft, Issue } from '../core/claim.js';
import { ClaimError } from '../core/claimError.js';
import { LinterInputs, eslintInputs, lintable } from './lintIgnore.js';
import type { Inspection, StageInstance, Tool } from './stage.js';

/** The slice of ESLint's API this stage uses; typed here because vouch must not import the workspace's types. */
interface LintMessage {
  ruleId: string | null;
  severity: number;
  fatal?: boolean;
  message: string;
  line?: number;
}
interface ESLintInstance {
  lintText(code: string, options: { filePath: string; warnIgnored: boolean }): Promise<Array<{ messages: LintMessage[] }>>;
  isPathIgnored(filePath: string): Promise<boolean>;
  calculateConfigForFile(filePath: string): Promise<unknown>;
}
type ESLintClass = new (options: { cwd: string }) => ESLintInstance;

/** The workspace's ESLint: its class and version, from its own install, never vouch's. */
async function loadESLint(workspace: string): Promise<{ ESLint: ESLintClass; version: string }> {
  const require = createRequire(join(workspace, 'package.json'));
  let manifest: string;
  let main: string;
  try {
    manifest = require.resolve('eslint/package.json');
    main = require.resolve('eslint');
  } catch {
    throw new ClaimError('workspace', 'missing', `eslint is not installed in ${workspace}; install it there (npm install --save-dev eslint)`);
  }
  const { version } = JSON.parse(readFileSync(manifest, 'utf8')) as { version: string };
  const module = (await import(pathToFileURL(main).href)) as { ESLint?: ESLintClass; default?: { ESLint?: ESLintClass } };
  const ESLint = module.ESLint ?? module.default?.ESLint;
  if (ESLint === undefined) throw new ClaimError('workspace', 'missing', `${main} exports no ESLint class; vouch needs ESLint 9 or later`);
  return { ESLint, version };
}

/**
 * A text that parses under any config able to parse this kind of file. When
 * a draft's parse fails, this decides whose failure it is: if the probe fails
 * too, the workspace's config has no parser for the file type (a `.ts` draft
 * with no TypeScript parser configured), which is the workspace's to fix; if
 * the probe parses, the draft itself does not parse, which is the claimant's.
 */
function parseProbe(path: string): string {
  return /^\.[mc]?tsx?$/.test(extname(path).toLowerCase()) ? 'let vouchProbe: number = 1;\nvoid vouchProbe;\n' : 'void 0;\n';
}

/**
 * Lints drafts with one resident `ESLint` from the workspace, through
 * `lintText` at each draft's declared path: overrides apply and nothing is
 * written. ESLint runs in this process, so destroy() cannot interrupt a
 * lintText already running; it refuses every later step instead.
 */
export class EslintStage implements StageInstance {
  readonly stage = 'lint' as const;
  readonly #workspace: string;
  #eslint: ESLintInstance | null = null;
  readonly #inputs = new LinterInputs();
  #progress = 0;
  #destroyed = false;

  /** The workspace's lint script fails on warnings (`--max-warnings 0`), so a warning is an issue too. */
  readonly #warningsFail: boolean;

  constructor(workspace: string, options: { warningsFail?: boolean } = {}) {
    this.#workspace = workspace;
    this.#warningsFail = options.warningsFail ?? false;
  }

  async warm(): Promise<Tool> {
    const { version } = await this.#start([]);
    return { name: 'eslint', version };
  }

  /** The lint stage around this linter decides when the workspace's linter changed. */
  stale(): boolean {
    return false;
  }

  progress(): number {
    return this.#progress;
  }

  async destroy(): Promise<void> {
    this.#destroyed = true;
    this.#eslint = null;
  }

  async inspect(inspection: Inspection): Promise<Issue[]> {
    this.#alive();
    const documents: Draft[] = [...inspection.drafts, inspection.test].filter((draft) => lintable(draft.path));
    const paths = documents.map((draft) => draft.path);
    const inputs = eslintInputs(this.#workspace, paths);
    // ESLint caches each config it loaded: a changed config needs a new instance.
    if (this.#eslint !== null && this.#inputs.changed(inputs)) this.#eslint = null;
    else this.#inputs.note(inputs);
    const eslint = this.#eslint ?? (await this.#start(paths)).eslint;
    const issues: Issue[] = [];
    for (const draft of documents) {
      this.#alive();
      const filePath = join(this.#workspace, draft.path);
      if (await this.#ignored(eslint, filePath)) {
        issues.push({
          origin: 'workspace',
          stage: 'lint',
          path: draft.path,
          message: `${draft.path} is ignored by ESLint's config (an ignores pattern, or no config object whose files match it); the linter would not check it, so its silence is not a pass`,
          unjudged: true,
        });
        continue;
      }
      this.#progress += 1;
      let messages: LintMessage[];
      try {
        messages = (await eslint.lintText(draft.text, { filePath, warnIgnored: true })).flatMap((result) => result.messages);
      } catch (error) {
        // The config already loaded (isPathIgnored answered), so this is a rule or parser crashing mid-lint: the lint did not complete.
        issues.push({ origin: 'instrument', stage: 'lint', path: draft.path, message: `ESLint failed on ${draft.path}: ${(error as Error).message}` });
        continue;
      }
      for (const message of messages) {
        if (message.fatal) {
          issues.push(await this.#parseFailure(eslint, draft.path, filePath, message));
          continue;
        }
        // Severity 1 is a warning: `eslint` exits 0 on warnings, so the workspace's lint check passes with them, unless it caps them at 0.
        if (message.severity !== 2 && !(message.severity === 1 && this.#warningsFail)) continue;
        issues.push({ origin: 'claimant', stage: 'lint', path: draft.path, message: message.message, ...(message.line === undefined ? {} : { line: message.line }), ...(message.ruleId ? { code: message.ruleId } : {}) });
      }
    }
    return issues;
  }

  async #start(paths: readonly string[]): Promise<{ eslint: ESLintInstance; version: string }> {
    const { ESLint, version } = await loadESLint(this.#workspace);
    this.#inputs.reset(eslintInputs(this.#workspace, paths));
    const eslint = new ESLint({ cwd: this.#workspace });
    // Loads the root config now (the cold cost, about 0.8 s with typescript-eslint) rather than in the first claim.
    await this.#config(() => eslint.calculateConfigForFile(join(this.#workspace, 'vouch-warm.js')));
    this.#alive();
    this.#eslint = eslint;
    return { eslint, version };
  }

  #alive(): void {
    if (this.#destroyed) throw new ClaimError('instrument', 'destroyed', 'the lint stage was destroyed');
  }

  /** isPathIgnored needs only the config, so its failure is the config's: malformed, the workspace's to fix. */
  #ignored(eslint: ESLintInstance, filePath: string): Promise<boolean> {
    return this.#config(() => eslint.isPathIgnored(filePath));
  }

  async #config<T>(load: () => Promise<T>): Promise<T> {
    try {
      return await load();
    } catch (error) {
      throw new ClaimError('workspace', 'malformed', `ESLint cannot use the config in ${this.#workspace}: ${(error as Error).message}`);
    }
  }

  async #parseFailure(eslint: ESLintInstance, path: string, filePath: string, message: LintMessage): Promise<Issue> {
    const line = message.line === undefined ? {} : { line: message.line };
    const probe = await eslint.lintText(parseProbe(path), { filePath, warnIgnored: true });
    if (probe.some((result) => result.messages.some((m) => m.fatal))) {
      return { origin: 'workspace', stage: 'lint', path, message: `ESLint's config cannot parse ${extname(path)} files such as ${path} (${message.message}); configure a parser for them`, unjudged: true };
    }
    return { origin: 'claimant', stage: 'lint', path, message: message.message, ...line };
  }
}

export function createEslintStage(workspace: string, options: { warningsFail?: boolean } = {}): StageInstance {
  return new EslintStage(workspace, options);
}
