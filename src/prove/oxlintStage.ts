import { readFileSync } from 'node:fs';
import { basename, extname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ClaimError } from '../core/claimError.js';
import { initializeMsFrom } from './deadline.js';
import { LspConnection, LspTimeout } from './lspConnection.js';
import { oxlintIgnored, oxlintInputs } from './lintIgnore.js';
import { type Finding, type IgnoredBy, type LintFailure, type LinterOptions, ResidentLinter } from './residentLinter.js';
import { installedPackage } from './workspaceTool.js';

/** A warm document answers in 0.5–10 ms; a missing answer past this is the instrument's failure, not a pass. */
const DIAGNOSTICS_MS = 5000;
const SHUTDOWN_MS = 2000;

interface Diagnostic {
  range: { start: { line: number; character: number } };
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

/** The workspace's oxlint: its package.json (for the version) and the bin it declares. */
function resolveOxlint(workspace: string): { bin: string; version: string } {
  // Looked up afresh, not through require.resolve's process-wide cache: a retargeted link must start the new binary.
  const installed = installedPackage(workspace, 'oxlint');
  if (installed === null) {
    throw new ClaimError('workspace', 'missing', `oxlint is not installed in ${workspace}; install it there (npm install --save-dev oxlint)`);
  }
  const manifest = join(installed.root, 'package.json');
  const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as { bin?: string | Record<string, string> };
  const bin = typeof pkg.bin === 'string' ? pkg.bin : pkg.bin?.oxlint;
  if (typeof bin !== 'string') throw new ClaimError('workspace', 'missing', `${manifest} declares no oxlint bin; reinstall oxlint`);
  return { bin: join(installed.root, bin), version: installed.version };
}

/** The LSP's severities: 1 is an error, 2 a warning (oxlint exits 0 on warnings); lines and characters are 0-based. */
function finding(diagnostic: Diagnostic): Finding {
  return {
    level: diagnostic.severity === 1 ? 'error' : diagnostic.severity === 2 ? 'warning' : 'other',
    message: diagnostic.message,
    line: diagnostic.range.start.line + 1,
    column: diagnostic.range.start.character + 1,
    ...(diagnostic.code === undefined || diagnostic.code === '' ? {} : { code: String(diagnostic.code) }),
  };
}

export interface OxlintOptions extends LinterOptions {
  /** Bounds the wait for one document's answer; tests shorten it to see a silent server quickly. */
  diagnosticsMs?: number;
  /** Bounds the server's answer to `initialize`; by default VOUCH_PROVE_INITIALIZE_MS, else 5000. */
  initializeMs?: number;
}

/**
 * Lints drafts with one resident `oxlint --lsp`, as in-memory documents at
 * their declared paths, so path-based overrides apply and nothing is written.
 */
export class OxlintStage extends ResidentLinter {
  protected readonly tool = 'oxlint';
  protected readonly label = 'oxlint --lsp';
  /** The server answers `[]` for a path it skips, and not all of its ignore rules are readable from here. */
  protected readonly silentIgnores = "oxlint's own ignore rules (.gitignore, .eslintignore or ignorePatterns)";
  #server: LspConnection | null = null;
  /** Errors the server showed (a config it could not parse); it then lints with defaults, so no answer of it is the workspace's. */
  #configErrors: string[] = [];
  readonly #waiting = new Map<string, Waiting>();
  #version = 0;

  readonly #diagnosticsMs: number;
  readonly #initializeMs: number;

  constructor(workspace: string, options: OxlintOptions = {}) {
    super(workspace, options);
    this.#diagnosticsMs = options.diagnosticsMs ?? DIAGNOSTICS_MS;
    this.#initializeMs = options.initializeMs ?? initializeMsFrom(process.env);
  }

  /** The running server's pid, for tests that check destroy(). */
  get pid(): number | undefined {
    return this.#server?.pid;
  }

  protected inputs(paths: readonly string[]): string[] {
    return oxlintInputs(this.workspace, paths);
  }

  protected get running(): boolean {
    return this.#server !== null;
  }

  protected async start(): Promise<string> {
    const { bin, version } = resolveOxlint(this.workspace);
    this.#configErrors = [];
    const server = new LspConnection(process.execPath, [bin, '--lsp'], this.workspace);
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
    const root = pathToFileURL(this.workspace).href;
    try {
      await server.request('initialize', { processId: process.pid, rootUri: root, capabilities: {}, workspaceFolders: [{ uri: root, name: basename(this.workspace) }] }, this.#initializeMs);
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
    return version;
  }

  protected async stop(): Promise<void> {
    const server = this.#server;
    this.#server = null;
    if (server) await server.close(SHUTDOWN_MS);
  }

  protected async halt(): Promise<void> {
    const server = this.#server;
    this.#server = null;
    if (server) await server.kill();
  }

  protected async ignores(paths: readonly string[]): Promise<IgnoredBy> {
    const ignored = await oxlintIgnored(this.workspace, paths);
    return async (path) => ignored.get(path) ?? null;
  }

  protected async lint(path: string, text: string): Promise<Finding[]> {
    return (await this.#diagnostics(path, text)).map(finding);
  }

  /** A server that missed an answer (or died) is not trusted again: the next inspection starts a new one. */
  protected async failed(path: string, error: Error): Promise<LintFailure> {
    await this.halt();
    return { message: `oxlint gave no diagnostics for ${path}: ${error.message}`, survived: false };
  }

  /** A config oxlint cannot read is shown, not refused: the server lints on with its defaults. */
  protected override configErrors(): string | null {
    return this.#configErrors.length > 0 ? this.#configErrors.join('\n') : null;
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
  async #diagnostics(path: string, text: string): Promise<Diagnostic[]> {
    const server = this.#server;
    if (server === null) throw new Error('the language server is gone');
    const uri = pathToFileURL(join(this.workspace, path)).href;
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
