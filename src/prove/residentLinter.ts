import { extname, join } from 'node:path';
import type { Draft, Issue } from '../core/claim.js';
import { ClaimError } from '../core/claimError.js';
import { sha256 } from '../core/digest.js';
import { type Baseline, BaselineCache, splitByBaseline, takeBaseline } from './lintBaseline.js';
import { LinterInputs, lintable, readTextInside } from './lintIgnore.js';
import { ignoreProbe, parseProbe } from './lintProbe.js';
import type { Inspection, StageInstance, Tool } from './stage.js';

export interface LinterOptions {
  /** The workspace's lint script fails on warnings (`--max-warnings 0`, `--deny-warnings`), so a warning is an issue too. */
  warningsFail?: boolean;
}

/** One diagnostic in the terms the lint stage judges it by, whichever linter gave it. */
export interface Finding {
  /**
   * The linter exits non-zero on an error, and 0 on a warning: the workspace's
   * lint check passes with warnings unless its script denies them.
   */
  level: 'error' | 'warning' | 'other';
  message: string;
  /** 1-based, when the linter gives one. */
  line?: number;
  /** 1-based, with a line. */
  column?: number;
  /** The rule, when the linter names one (a parse error names none). */
  code?: string;
  /** The text did not parse: the draft's fault or the config's, which the parse probe decides. */
  fatal?: boolean;
}

/** Why the linter skips a path (a source a person can find: `git (.gitignore:1: tmp/)`), or null when it lints it. */
export type IgnoredBy = (path: string) => Promise<string | null>;

/** What a lint that threw leaves behind. */
export interface LintFailure {
  message: string;
  /** The linter can still lint the inspection's other drafts; when not, the inspection ends with the issues it has. */
  survived: boolean;
}

/**
 * The lint stage around one resident linter, whichever it is: which drafts are
 * lint targets, restarting the linter when a file it read at start changed,
 * ignored paths as unjudged workspace issues (never a pass), progress, the
 * probes that decide whose failure a silent or unparsable answer is, the
 * baseline of each drafted file that exists on disk (lintBaseline.ts), the
 * mapping of findings to issues, and destroy. A subclass says only how its
 * linter starts and stops, what it ignores and how it lints one text.
 */
export abstract class ResidentLinter implements StageInstance {
  readonly stage = 'lint' as const;
  protected readonly workspace: string;
  readonly #warningsFail: boolean;
  readonly #inputs: LinterInputs;
  /** Baselines of drafted files' disk texts, for the running linter and its config. */
  readonly #baselines = new BaselineCache();
  #progress = 0;
  #destroyed = false;

  /** The package name the receipt carries. */
  protected abstract readonly tool: string;
  /** The linter as messages name it. */
  protected abstract readonly label: string;
  /**
   * The ignore rules to name when the linter stays silent even on the ignore
   * probe, or null when ignores() is its whole answer and its silence a pass.
   */
  protected abstract readonly silentIgnores: string | null;

  constructor(workspace: string, options: LinterOptions) {
    this.workspace = workspace;
    this.#inputs = new LinterInputs(workspace);
    this.#warningsFail = options.warningsFail ?? false;
  }

  /** The config and ignore files the linter reads at start, for the drafts at `paths` (see LinterInputs). */
  protected abstract inputs(paths: readonly string[]): string[];
  /** A linter is running and may be asked. */
  protected abstract get running(): boolean;
  /** Starts the linter from the workspace's own install; resolves with its version. */
  protected abstract start(): Promise<string>;
  /** Stops a linter whose inputs changed, so the next start reads them afresh. */
  protected abstract stop(): Promise<void>;
  /** Stops the linter at once, for destroy(). */
  protected abstract halt(): Promise<void>;
  /** The linter's ignore answer for this inspection's paths. A config it cannot read throws workspace/malformed. */
  protected abstract ignores(paths: readonly string[]): Promise<IgnoredBy>;
  /** Lints `text` as the file at `path` (workspace-relative), from memory. */
  protected abstract lint(path: string, text: string): Promise<Finding[]>;
  /** Called when lint() threw for a draft; a linter that cannot be trusted any more drops itself here. */
  protected abstract failed(path: string, error: Error): Promise<LintFailure>;

  /**
   * Called once per inspection, after ignores() and before the documents are
   * linted one at a time: a linter that answers each document only after a
   * fixed delay (Biome's language server) may start them all here, so the
   * delay is paid once, not once per document.
   */
  protected prepare(_documents: readonly Draft[]): void {}

  /** Errors the linter reported about its config while it ran, or null; its answers are then not the workspace's. */
  protected configErrors(): string | null {
    return null;
  }

  async warm(): Promise<Tool> {
    return { name: this.tool, version: await this.#start([]) };
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
    await this.halt();
  }

  async inspect(inspection: Inspection): Promise<Issue[]> {
    this.#alive();
    const documents: Draft[] = [...inspection.drafts, inspection.test].filter((draft) => lintable(draft.path));
    const paths = documents.map((draft) => draft.path);
    const inputs = this.inputs(paths);
    if (this.running && this.#inputs.changed(inputs)) await this.stop();
    else this.#inputs.note(inputs);
    if (!this.running) {
      try {
        await this.#start(paths);
      } catch (error) {
        if (error instanceof ClaimError) throw error;
        this.#alive();
        return [{ origin: 'instrument', stage: 'lint', message: `${this.label} did not start: ${(error as Error).message}` }];
      }
    }
    const ignoredBy = await this.ignores(paths);
    this.prepare(documents);
    const issues: Issue[] = [];
    /** Findings the disk already had, listed after everything else: the claimant acts on its own first. */
    const old: Issue[] = [];
    for (const draft of documents) {
      this.#alive();
      const source = await ignoredBy(draft.path);
      if (source !== null) {
        issues.push(ignoredIssue(draft.path, source));
        continue;
      }
      this.#progress += 1;
      let findings: Finding[];
      let baseline: Baseline | null = null;
      try {
        findings = await this.#lint(draft.path, draft.text);
        if (findings.length === 0 && this.silentIgnores !== null && (await this.#lint(draft.path, ignoreProbe(draft.path))).length === 0) {
          issues.push(ignoredIssue(draft.path, this.silentIgnores));
          continue;
        }
        // Taken only when there is something to excuse; the test is new by construction (a claim may not draft over it).
        if (draft !== inspection.test && findings.some((finding) => this.#counts(finding))) baseline = await this.#baseline(draft, findings);
      } catch (error) {
        this.#alive();
        const failure = await this.failed(draft.path, error as Error);
        issues.push({ origin: 'instrument', stage: 'lint', path: draft.path, message: failure.message });
        if (!failure.survived) return issues;
        continue;
      }
      for (const finding of findings) if (finding.fatal) issues.push(await this.#parseFailure(draft.path, finding));
      const counted = findings.filter((finding) => this.#counts(finding));
      const { old: already, added } = baseline === null ? { old: [], added: counted } : splitByBaseline(counted, draft.text, baseline);
      for (const finding of added) issues.push(findingIssue('claimant', draft.path, finding));
      for (const finding of already) old.push(findingIssue('workspace', draft.path, finding));
    }
    // A config the linter cannot read is not a claim's failure, and its fallback answers are not the workspace's: refuse them.
    const configErrors = this.configErrors();
    if (configErrors !== null) throw new ClaimError('workspace', 'malformed', configErrors);
    return [...issues, ...old];
  }

  /** A finding the workspace's lint check fails on: an error, or a warning when its script denies them. A parse failure is judged apart. */
  #counts(finding: Finding): boolean {
    return !finding.fatal && (finding.level === 'error' || (finding.level === 'warning' && this.#warningsFail));
  }

  /**
   * The baseline of the file a draft replaces, or null when there is none on
   * disk (a new file, or not a regular file inside the workspace). The disk
   * text is linted at the draft's path, under the running linter and config,
   * once per content (BaselineCache). A disk text equal to the draft's is not
   * linted again: the draft's findings are its own baseline.
   */
  async #baseline(draft: Draft, findings: readonly Finding[]): Promise<Baseline | null> {
    const disk = readTextInside(this.workspace, join(this.workspace, draft.path));
    if (disk === null) return null;
    const digest = sha256(disk);
    return this.#baselines.take(draft.path, digest, async () => {
      const found = disk === draft.text ? findings : await this.#lint(draft.path, disk);
      return takeBaseline(
        found.filter((finding) => this.#counts(finding)),
        disk,
        found.some((finding) => finding.fatal),
      );
    });
  }

  async #start(paths: readonly string[]): Promise<string> {
    // Recorded before the linter reads them: a change while it starts is then seen by the next inspection.
    this.#inputs.reset(this.inputs(paths));
    // Baselines were taken under the config the last linter read.
    this.#baselines.clear();
    const version = await this.start();
    if (this.#destroyed) {
      await this.halt();
      this.#alive();
    }
    return version;
  }

  /** Every ask of the linter passes here: a destroyed stage asks nothing more. */
  #lint(path: string, text: string): Promise<Finding[]> {
    this.#alive();
    return this.lint(path, text);
  }

  #alive(): void {
    if (this.#destroyed) throw new ClaimError('instrument', 'destroyed', 'the lint stage was destroyed');
  }

  async #parseFailure(path: string, finding: Finding): Promise<Issue> {
    const probe = await this.#lint(path, parseProbe(path));
    if (probe.some((result) => result.fatal)) {
      return { origin: 'workspace', stage: 'lint', path, message: `${this.label}'s config cannot parse ${extname(path)} files such as ${path} (${finding.message}); configure a parser for them`, unjudged: true };
    }
    return { origin: 'claimant', stage: 'lint', path, message: finding.message, ...located(finding) };
  }
}

function findingIssue(origin: 'claimant' | 'workspace', path: string, finding: Finding): Issue {
  return {
    origin,
    stage: 'lint',
    path,
    message: finding.message,
    ...located(finding),
    ...(finding.code === undefined ? {} : { code: finding.code }),
  };
}

function ignoredIssue(path: string, source: string): Issue {
  return {
    origin: 'workspace',
    stage: 'lint',
    path,
    message: `${path} is ignored by ${source}; the linter would not check it, so its silence is not a pass`,
    unjudged: true,
  };
}

/** Where a finding is, as far as the linter said. */
function located(finding: Finding): Pick<Issue, 'line' | 'column'> {
  if (finding.line === undefined) return {};
  return finding.column === undefined ? { line: finding.line } : { line: finding.line, column: finding.column };
}
