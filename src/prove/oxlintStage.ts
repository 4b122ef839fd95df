import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, extname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Draft, Issue } from '../core/claim.js';
import { ClaimError } from '../core/claimError.js';
import { initializeMsFrom } from './deadline.js';
import { LspConnection, LspTimeout } from './lspConnection.js';
import { LinterInputs, lintable, oxlintIgnored, oxlintInputs } from './lintIgnore.js';
import type { Inspection, StageInstance, Tool } from './stage.js';

/** A warm document answers in 0.5–10 ms; a missing answer past this is the instrument's failure, not a pass. */
const DIAGNOSTICS_MS = 5000;
const SHUTDOWN_MS = 2000;

interface Diagnostic {
  range: { start: { line: number } };
  severity?: number;
  code?: string | number;
  message: string;
}

interface Waiting {
  version: number;
  resolve: (diagnostics: Diagnostic[]) => void;
  reject: (error: Error) => void;
}

const LANGUAGE: Record<string, string> = {
  '.js': 'javascript',
  '.mjs': 'javascript',
  '.cjs': 'javascript',
  '.jsx': 'javascriptreact',
  '.ts': 'typescript',
  '.mts': 'typescript',
  '.cts': 'typescript',
  '.tsx': 'typescriptreact',
  '.vue': 'vue',
  '.svelte': 'svelte',
  '.astro': 'astro',
};

/**
 * A text oxlint reports on under any config (a syntax error), unless it
 * skips the path. An empty answer for a draft is only trusted after this
 * probe draws a diagnostic at the same URI: the server's own ignore rules
 * (.gitignore without git, .eslintignore, ignorePatterns, oxlint.config.ts)
 * are not all readable from here, and an ignored path answers `[]`.
 */
function ignoreProbe(path: string): string {
  const ext = extname(path).toLowerCase();
  if (ext === '.vue' || ext === '.svelte') return '<script>\n)\n</script>\n';
  if (ext === '.astro') return '---\n)\n---\n';
  return ')\n';
}

/** The workspace's oxlint: its package.json (for the version) and the bin it declares. */
function resolveOxlint(workspace: string): { bin: string; version: string } {
  let manifest: string;
  try {
    manifest = createRequire(join(workspace, 'package.json')).resolve('oxlint/package.json');
  } catch {
    throw new ClaimError('workspace', 'missing', `oxlint is not installed in ${workspace}; install it there (npm install --save-dev oxlint)`);
  }
  const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as { version: string; bin?: string | Record<string, string> };
  const bin = typeof pkg.bin === 'string' ? pkg.bin : pkg.bin?.oxlint;
  if (bin === undefined) throw new ClaimError('workspace', 'missing', `${manifest} declares no oxlint bin; reinstall oxlint`);
  return { bin: join(dirname(manifest), bin), version: pkg.version };
}

export interface OxlintOptions {
  /** Bounds the wait for one document's answer; tests shorten it to see a silent server quickly. */
  diagnosticsMs?: number;
  /** The workspace's lint script fails on warnings (`--deny-warnings`), so a warning is an issue too. */
  warningsFail?: boolean;
  /** Bounds the server's answer to `initialize`; by default VOUCH_PROVE_INITIALIZE_MS, else 5000. */
  initializeMs?: number;
}

/**
 * Lints drafts with one resident `oxlint --lsp`, as in-memory documents at
 * their declared paths, so path-based overrides apply and nothing is written.
 */
export class OxlintStage implements StageInstance {
  readonly stage = 'lint' as const;
  readonly #workspace: string;
  #server: LspConnection | null = null;
  readonly #inputs = new LinterInputs();
  /** Errors the server showed (a config it could not parse); it then lints with defaults, so no answer of it is the workspace's. */
  #configErrors: string[] = [];
  readonly #waiting = new Map<string, Waiting>();
  #version = 0;
  #progress = 0;
  #destroyed = false;

  readonly #diagnosticsMs: number;
  readonly #warningsFail: boolean;
  readonly #initializeMs: number;

  constructor(workspace: string, options: OxlintOptions = {}) {
    this.#workspace = workspace;
    this.#diagnosticsMs = options.diagnosticsMs ?? DIAGNOSTICS_MS;
    this.#warningsFail = options.warningsFail ?? false;
    this.#initializeMs = options.initializeMs ?? initializeMsFrom(process.env);
  }

  /** The running server's pid, for tests that check destroy(). */
  get pid(): number | undefined {
    return this.#server?.pid;
  }

  async warm(): Promise<Tool> {
    const { version } = resolveOxlint(this.#workspace);
    await this.#start([]);
    return { name: 'oxlint', version };
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
    const server = this.#server;
    this.#server = null;
    if (server) await server.kill();
  }

  async inspect(inspection: Inspection): Promise<Issue[]> {
    if (this.#destroyed) throw new ClaimError('instrument', 'destroyed', 'the lint stage was destroyed');
    const documents: Draft[] = [...inspection.drafts, inspection.test].filter((draft) => lintable(draft.path));
    const paths = documents.map((draft) => draft.path);
    const inputs = oxlintInputs(this.#workspace, paths);
    if (this.#server !== null && this.#inputs.changed(inputs)) await this.#stop();
    else this.#inputs.note(inputs);
    if (this.#server === null) {
      try {
        await this.#start(paths);
      } catch (error) {
        if (error instanceof ClaimError) throw error;
        if (this.#destroyed) throw new ClaimError('instrument', 'destroyed', 'the lint stage was destroyed');
        return [{ origin: 'instrument', stage: 'lint', message: `oxlint --lsp did not start: ${(error as Error).message}` }];
      }
    }
    const ignored = await oxlintIgnored(this.#workspace, paths);
    const issues: Issue[] = [];
    for (const draft of documents) {
      const source = ignored.get(draft.path);
      if (source !== undefined) {
        issues.push(ignoredIssue(draft.path, source));
        continue;
      }
      this.#progress += 1;
      let diagnostics: Diagnostic[];
      try {
        diagnostics = await this.#lint(draft.path, draft.text);
        if (diagnostics.length === 0 && (await this.#lint(draft.path, ignoreProbe(draft.path))).length === 0) {
          issues.push(ignoredIssue(draft.path, "oxlint's own ignore rules (.gitignore, .eslintignore or ignorePatterns)"));
          continue;
        }
      } catch (error) {
        if (this.#destroyed) throw new ClaimError('instrument', 'destroyed', 'the lint stage was destroyed');
        // A server that missed an answer (or died) is not trusted again: the next inspection starts a new one.
        const server = this.#server;
        this.#server = null;
        await server?.kill();
        issues.push({ origin: 'instrument', stage: 'lint', path: draft.path, message: `oxlint gave no diagnostics for ${draft.path}: ${(error as Error).message}` });
        return issues;
      }
      for (const diagnostic of diagnostics) {
        // Severity 2 is a warning: oxlint exits 0 on warnings, so the workspace's lint check passes with them, unless it denies them.
        if (diagnostic.severity !== 1 && !(diagnostic.severity === 2 && this.#warningsFail)) continue;
        const code = diagnostic.code === undefined || diagnostic.code === '' ? {} : { code: String(diagnostic.code) };
        issues.push({ origin: 'claimant', stage: 'lint', path: draft.path, line: diagnostic.range.start.line + 1, message: diagnostic.message, ...code });
      }
    }
    // A config oxlint cannot read is not a claim's failure, and its fallback answers are not the workspace's: refuse them.
    if (this.#configErrors.length > 0) throw new ClaimError('workspace', 'malformed', this.#configErrors.join('\n'));
    return issues;
  }

  async #start(paths: readonly string[]): Promise<void> {
    const { bin } = resolveOxlint(this.#workspace);
    // Recorded before the spawn: a change while it starts is then seen by the next inspection.
    this.#inputs.reset(oxlintInputs(this.#workspace, paths));
    this.#configErrors = [];
    const server = new LspConnection(process.execPath, [bin, '--lsp'], this.#workspace);
    this.#server = server;
    // A replaced server's late messages are not about the current config or documents.
    server.onNotification((method, params) => {
      if (this.#server === server) this.#notified(method, params);
    });
    server.onDeath((error) => {
      if (this.#server === server) this.#server = null;
      for (const waiting of this.#waiting.values()) waiting.reject(error);
      this.#waiting.clear();
    });
    const root = pathToFileURL(this.#workspace).href;
    try {
      await server.request('initialize', { processId: process.pid, rootUri: root, capabilities: {}, workspaceFolders: [{ uri: root, name: basename(this.#workspace) }] }, this.#initializeMs);
      server.notify('initialized', {});
    } catch (error) {
      if (this.#server === server) this.#server = null;
      await server.kill();
      // Slow is not broken: a server that starts late on a loaded machine is worth another try, not a bug report.
      if (error instanceof LspTimeout) {
        throw new ClaimError(
          'instrument',
          'stage-timeout',
          `the lint stage's oxlint --lsp did not answer initialize within ${error.ms} ms; the machine may be overloaded. Try again, or allow it longer with VOUCH_PROVE_INITIALIZE_MS (milliseconds)`,
        );
      }
      throw error;
    }
    if (this.#destroyed) await server.kill();
  }

  async #stop(): Promise<void> {
    const server = this.#server;
    this.#server = null;
    if (server) await server.close(SHUTDOWN_MS);
  }

  #notified(method: string, params: unknown): void {
    if (method === 'window/showMessage') {
      const { type, message } = params as { type: number; message: string };
      if (type === 1) this.#configErrors.push(message);
      return;
    }
    if (method !== 'textDocument/publishDiagnostics') return;
    const { uri, version, diagnostics } = params as { uri: string; version?: number; diagnostics: Diagnostic[] };
    const waiting = this.#waiting.get(uri);
    // The versionless list after a didClose clears the editor; only the answer to our own open counts.
    if (waiting !== undefined && version === waiting.version) waiting.resolve(diagnostics);
  }

  /** Opens `text` at `path`'s URI, waits for its diagnostics (bounded), then closes it. */
  async #lint(path: string, text: string): Promise<Diagnostic[]> {
    const server = this.#server;
    if (server === null) throw new Error('the language server is gone');
    const uri = pathToFileURL(join(this.#workspace, path)).href;
    // A version unique for the server's life: a late answer to an earlier open of the same URI cannot pass for this one.
    const version = ++this.#version;
    let timer: NodeJS.Timeout | undefined;
    const answer = new Promise<Diagnostic[]>((resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`no publishDiagnostics within ${this.#diagnosticsMs} ms`)), this.#diagnosticsMs);
      this.#waiting.set(uri, { version, resolve, reject });
    });
    try {
      server.notify('textDocument/didOpen', { textDocument: { uri, languageId: LANGUAGE[extname(path).toLowerCase()] ?? 'javascript', version, text } });
      return await answer;
    } finally {
      clearTimeout(timer);
      this.#waiting.delete(uri);
      if (server.death === null) server.notify('textDocument/didClose', { textDocument: { uri } });
    }
  }
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

export function createOxlintStage(workspace: string, options: OxlintOptions = {}): StageInstance {
  return new OxlintStage(workspace, options);
}
