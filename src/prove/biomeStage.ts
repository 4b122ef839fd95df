import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, extname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Draft } from '../core/claim.js';
import { ClaimError } from '../core/claimError.js';
import { BIOME_PACKAGE, resolveBiome } from './biomeInstall.js';
import { initializeMsFrom } from './deadline.js';
import { biomeInputs } from './lintIgnore.js';
import { ignoreProbe } from './lintProbe.js';
import { LspConnection, LspTimeout } from './lspConnection.js';
import { type Finding, type IgnoredBy, type LintFailure, type LinterOptions, ResidentLinter } from './residentLinter.js';

/**
 * Biome publishes a document's diagnostics 250 ms after it changed (its
 * server debounces them), so a warm answer takes about 255 ms; a missing
 * answer past this is the instrument's failure, not a pass.
 */
const DIAGNOSTICS_MS = 5000;
/**
 * Biome publishes nothing at all for a path its `files.includes` leaves out,
 * nor for a text over `files.maxSize`. A document still unanswered after this
 * long is asked about with a code action request, which Biome answers at
 * once, with null for such a document (measured on 2.6.9).
 */
const IGNORED_AFTER_MS = 1000;
const SHUTDOWN_MS = 2000;
/** Starts of a proxy that exits cleanly before it is initialized (see BiomeStage.start). */
const START_ATTEMPTS = 3;

/** The proxy ended with exit code 0 while starting: worth another start, not a report. */
class ProxyExited extends Error {
  override readonly cause: Error;

  constructor(cause: Error) {
    super(cause.message);
    this.cause = cause;
  }
}
/**
 * Bounds the wait, after `initialize` answered, for Biome to load its
 * settings and scan the project (its module graph), which grows with the
 * project: tens of milliseconds here, seconds on a large monorepo or a
 * loaded machine. `initialize` itself keeps the short bound oxlint's has.
 */
const SETTINGS_MS = 60_000;

interface Diagnostic {
  range: { start: { line: number; character: number } };
  severity?: number;
  code?: string | number;
  message: string;
}

/** A document's answer: its diagnostics, or that Biome does not look at it at all. */
type Answer = Diagnostic[] | 'ignored';
/** The same, as findings. */
type Judged = Finding[] | 'ignored';

interface Waiting {
  version: number;
  resolve: (answer: Answer) => void;
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
 * LSP severities: 1 is an error, 2 a warning (`biome lint` exits 0 on
 * warnings unless `--error-on-warnings`), 3 and 4 information and hints.
 * Lines and characters are 0-based. Biome's code for a text that does not
 * parse is `parse` (`syntax/...` codes are errors in a text that parsed).
 */
function finding(diagnostic: Diagnostic): Finding {
  const code = diagnostic.code === undefined || diagnostic.code === '' ? undefined : String(diagnostic.code);
  return {
    level: diagnostic.severity === 1 ? 'error' : diagnostic.severity === 2 ? 'warning' : 'other',
    message: diagnostic.message,
    line: diagnostic.range.start.line + 1,
    column: diagnostic.range.start.character + 1,
    ...(code === undefined ? {} : { code }),
    ...(code === 'parse' ? { fatal: true } : {}),
  };
}

/**
 * What `biome lint` reports. The server also publishes assist diagnostics
 * (`assist/source/organizeImports`), which only `biome check` enforces.
 */
function linted(diagnostic: Diagnostic): boolean {
  return !String(diagnostic.code ?? '').startsWith('assist/');
}

/**
 * A text Biome reports on at `path` whenever its linter runs there, whatever
 * its rules: a suppression comment that suppresses nothing is reported as
 * `suppressions/unused` (https://biomejs.dev/analyzer/suppressions/), even
 * with the named rule off. A path the linter skips (`linter.includes`, an
 * override with the linter off) answers `[]`, and so does one it lints only
 * for parse errors, which the generic probe (a syntax error) cannot tell apart.
 */
export function biomeProbe(path: string): string {
  const body = '// biome-ignore lint/suspicious/noDebugger: vouch probe\nexport {};\n';
  const ext = extname(path).toLowerCase();
  if (ext === '.vue' || ext === '.svelte') return `<script>\n${body}</script>\n`;
  if (ext === '.astro') return `---\n${body}---\n`;
  return body;
}

/**
 * The environment of a Biome server of vouch's own. `biome lsp-proxy` connects
 * to the per-user daemon whose socket is in the cache dir (`biome __print_socket`
 * shows it), starting one when none answers; an editor's Biome of the same
 * version shares that daemon and its open documents. Pointing the cache dir
 * at a private folder gives vouch a daemon nobody else talks to; it was
 * started by `lsp-proxy` to stop when its last client disconnects, so it ends
 * with the proxy. The cache dir is XDG_CACHE_HOME on Linux and
 * `$HOME/Library/Caches` on macOS (https://docs.rs/dirs/latest/dirs/fn.cache_dir.html).
 */
function privateEnv(dir: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    XDG_CACHE_HOME: dir,
    BIOME_LOG_PATH: join(dir, 'logs'),
    ...(process.platform === 'darwin' ? { HOME: dir } : {}),
  };
}

/**
 * `biome stop` for vouch's private daemon (https://biomejs.dev/reference/cli/#biome-stop):
 * "The Biome server was not running" when it already ended, and never starts one.
 */
function stopDaemon(bin: string, home: string): Promise<void> {
  return new Promise((resolve) => {
    const child = spawn(bin, ['stop'], { env: privateEnv(home), stdio: 'ignore' });
    const timer = setTimeout(() => child.kill('SIGKILL'), SHUTDOWN_MS);
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    child.once('error', done);
    child.once('exit', done);
  });
}

export interface BiomeOptions extends LinterOptions {
  /** Bounds the wait for one document's answer; tests shorten it to see a silent server quickly. */
  diagnosticsMs?: number;
  /** Bounds the server's answer to `initialize`; by default VOUCH_PROVE_INITIALIZE_MS, else 5000. */
  initializeMs?: number;
  /** Bounds its settings load and project scan after that; 60 s by default. */
  settingsMs?: number;
}

/**
 * Lints drafts with one resident `biome lsp-proxy`, as in-memory documents at
 * their declared paths, so `overrides` and nested configs apply and nothing
 * is written. `biome lint --stdin-file-path` is no alternative: Biome 2.6
 * prints the text back and exits 1 ("The contents aren't fixed") with no
 * diagnostic and no location, whatever the text.
 *
 * Each document's answer comes 250 ms after it is opened, so every document
 * of an inspection is opened at once (prepare), and a path's ignore probe is
 * asked once per server (the answer depends on the path and the config, and
 * a config change restarts the server).
 */
export class BiomeStage extends ResidentLinter {
  protected readonly tool = 'biome';
  protected readonly label = 'biome lsp-proxy';
  /**
   * Biome answers `[]` for a path its linter skips (`linter.includes`, an
   * override) and nothing for one `files.includes` leaves out; an empty answer
   * is trusted only after biomeProbe draws a finding at the same path.
   */
  protected readonly silentIgnores = "Biome's own rules for what it checks (files.includes, files.maxSize, linter.includes or an override that turns the linter off, or the VCS ignore file it reads)";
  #server: LspConnection | null = null;
  #home: string | null = null;
  /** The binary the running server was started from, to stop its daemon with. */
  #bin: string | null = null;
  /** The server's own process id (the daemon behind the proxy), from its log, for tests. */
  #daemonPid: number | null = null;
  /** Errors Biome showed about its config; it then reports parse errors only, or nothing, so no answer of it is the workspace's. */
  #configErrors: string[] = [];
  #ready: (() => void) | null = null;
  readonly #waiting = new Map<string, Waiting>();
  /** The last operation on each URI: one document per URI is open at a time. */
  readonly #queues = new Map<string, Promise<unknown>>();
  /** This inspection's documents, already opened by prepare(). */
  #ahead = new Map<string, { text: string; answer: Promise<Judged> }>();
  /** The ignore probe's answer per path, for the running server. */
  #probes = new Map<string, Promise<Finding[]>>();
  /**
   * Paths whose draft Biome did not look at in this inspection. Its probe must
   * then answer `[]` whatever the path's cached probe says: Biome also skips a
   * text over `files.maxSize`, which a small probe at the same path is not.
   */
  #skipped = new Set<string>();
  #version = 0;

  readonly #diagnosticsMs: number;
  readonly #initializeMs: number;
  readonly #settingsMs: number;

  constructor(workspace: string, options: BiomeOptions = {}) {
    super(workspace, options);
    this.#diagnosticsMs = options.diagnosticsMs ?? DIAGNOSTICS_MS;
    this.#initializeMs = options.initializeMs ?? initializeMsFrom(process.env);
    this.#settingsMs = options.settingsMs ?? SETTINGS_MS;
  }

  /** The proxy's pid, for tests that check destroy(). */
  get pid(): number | undefined {
    return this.#server?.pid;
  }

  /** The daemon's pid, for tests that check it ends with the proxy. */
  get daemonPid(): number | null {
    return this.#daemonPid;
  }

  /** The private folder the daemon's socket and logs are in, for tests that check it is removed. */
  get home(): string | null {
    return this.#home;
  }

  protected inputs(paths: readonly string[]): string[] {
    return biomeInputs(this.workspace, paths);
  }

  protected get running(): boolean {
    return this.#server !== null;
  }

  /**
   * A proxy that exits cleanly before its server is initialized served
   * nothing: Biome's proxy probes the daemon's socket, drops that connection
   * and connects again, and a daemon that stops on a client's disconnect can
   * stop in between (https://github.com/biomejs/biome/pull/11000). Seen once
   * under heavy load; a fresh start does not repeat it.
   */
  protected async start(): Promise<string> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#startOnce();
      } catch (error) {
        if (!(error instanceof ProxyExited) || attempt === START_ATTEMPTS) throw error instanceof ProxyExited ? error.cause : error;
      }
    }
  }

  async #startOnce(): Promise<string> {
    const { bin, version } = resolveBiome(this.workspace);
    this.#bin = bin;
    this.#configErrors = [];
    this.#probes = new Map();
    this.#ahead = new Map();
    this.#skipped = new Set();
    this.#daemonPid = null;
    const home = mkdtempSync(join(tmpdir(), 'vouch-biome-'));
    this.#home = home;
    // Biome's log appender lists its directory before it makes it, and prints "Error reading the
    // log directory/files" when it is not there yet (tracing-appender's RollingFileAppender), which
    // would stand in for the reason a proxy that exits early gives.
    mkdirSync(join(home, 'logs'));
    const server = new LspConnection(bin, ['lsp-proxy'], this.workspace, privateEnv(home));
    this.#server = server;
    const ready = new Promise<void>((resolve) => (this.#ready = resolve));
    // A replaced server's late messages are not about the current config or documents.
    server.onNotification((method, params) => {
      if (this.#server === server) this.#notified(method, params);
    });
    let died: (error: Error) => void = () => {};
    const death = new Promise<never>((_, reject) => (died = reject));
    death.catch(() => {});
    server.onDeath((error) => {
      if (this.#server === server) this.#server = null;
      for (const waiting of this.#waiting.values()) waiting.reject(error);
      this.#waiting.clear();
      died(error);
    });
    const root = pathToFileURL(this.workspace).href;
    let timer: NodeJS.Timeout | undefined;
    try {
      const answer = (await server.request(
        'initialize',
        { processId: process.pid, rootUri: root, capabilities: {}, workspaceFolders: [{ uri: root, name: basename(this.workspace) }] },
        this.#initializeMs,
      )) as { serverInfo?: { version?: string } } | null;
      const served = answer?.serverInfo?.version;
      if (served !== undefined && served !== version) {
        throw new ClaimError('workspace', 'malformed', `${BIOME_PACKAGE} in ${this.workspace} is ${version}, but the binary it runs (${bin}) is Biome ${served}; reinstall ${BIOME_PACKAGE}`);
      }
      server.notify('initialized', {});
      // A document opened before Biome has loaded its settings is linted with none (parse errors only): an empty answer that is not the workspace's.
      await Promise.race([
        ready,
        death,
        new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new LspTimeout('initialized (its settings loaded, the project scanned)', this.#settingsMs)), this.#settingsMs))),
      ]);
    } catch (error) {
      await this.halt();
      if (!(error instanceof ClaimError) && server.exitCode === 0 && server.death !== null) throw new ProxyExited(server.death);
      // Slow is not broken: a server that starts late on a loaded machine is worth another try, not a bug report.
      if (error instanceof LspTimeout) {
        throw new ClaimError(
          'instrument',
          'stage-timeout',
          error.method === 'initialize'
            ? `the lint stage's biome lsp-proxy did not answer initialize within ${error.ms} ms; the machine may be overloaded. Try again, or allow it longer with VOUCH_PROVE_INITIALIZE_MS (milliseconds)`
            : `the lint stage's biome lsp-proxy did not finish ${error.method} within ${error.ms} ms; the machine may be overloaded, or the project too large to scan in that time. Try again`,
        );
      }
      throw error;
    } finally {
      clearTimeout(timer);
      this.#ready = null;
    }
    if (this.#configErrors.length > 0) {
      const errors = this.#configErrors.join('\n');
      await this.halt();
      throw new ClaimError('workspace', 'malformed', `Biome cannot use the config in ${this.workspace}: ${errors}`);
    }
    return version;
  }

  protected async stop(): Promise<void> {
    const server = this.#server;
    this.#server = null;
    if (server) await server.close(SHUTDOWN_MS);
    await this.#forget();
  }

  protected async halt(): Promise<void> {
    const server = this.#server;
    this.#server = null;
    if (server) await server.kill();
    await this.#forget();
  }

  /** Biome's ignore rules are its own (includes, overrides, VCS files): its answer and the probe say what it skips. */
  protected async ignores(): Promise<IgnoredBy> {
    return async () => null;
  }

  /** Opens every document of the inspection at once, each followed by its path's ignore probe when it answers empty. */
  protected override prepare(documents: readonly Draft[]): void {
    this.#ahead = new Map();
    this.#skipped = new Set();
    for (const draft of documents) {
      const answer = this.#judge(draft.path, draft.text).then(async (judged) => {
        if (judged !== 'ignored' && judged.length === 0) await this.#probe(draft.path);
        return judged;
      });
      // Consumed by lint(), or dropped when the inspection ends early; never an unhandled rejection.
      answer.catch(() => {});
      this.#ahead.set(draft.path, { text: draft.text, answer });
    }
  }

  protected async lint(path: string, text: string): Promise<Finding[]> {
    const ahead = this.#ahead.get(path);
    if (ahead !== undefined && ahead.text === text) {
      this.#ahead.delete(path);
      return this.#settle(path, await ahead.answer);
    }
    if (text === ignoreProbe(path)) return this.#skipped.delete(path) ? [] : this.#probe(path);
    return this.#settle(path, await this.#judge(path, text));
  }

  /** An unlooked-at draft lints as `[]`, and the probe that follows it for this path answers `[]` too. */
  #settle(path: string, judged: Judged): Finding[] {
    if (judged !== 'ignored') return judged;
    this.#skipped.add(path);
    return [];
  }

  /** A server that missed an answer (or died) is not trusted again: the next inspection starts a new one. */
  protected async failed(path: string, error: Error): Promise<LintFailure> {
    await this.halt();
    // Biome refused to lint under a config it cannot read: the workspace's to fix, not an instrument failure.
    const configErrors = this.configErrors();
    if (configErrors !== null) throw new ClaimError('workspace', 'malformed', `Biome cannot use the config in ${this.workspace}: ${configErrors}`);
    return { message: `Biome gave no diagnostics for ${path}: ${error.message}`, survived: false };
  }

  protected override configErrors(): string | null {
    return this.#configErrors.length > 0 ? this.#configErrors.join('\n') : null;
  }

  async #forget(): Promise<void> {
    this.#ahead = new Map();
    this.#probes = new Map();
    this.#skipped = new Set();
    const home = this.#home;
    const bin = this.#bin;
    this.#home = null;
    if (home === null) return;
    // The daemon ends with its proxy when it can; one stuck in a read (a FIFO its config extends)
    // does not see the proxy go, and answers `biome stop` all the same (measured, 20 ms).
    if (bin !== null) await stopDaemon(bin, home);
    // What is left of it is a socket file and logs.
    rmSync(home, { recursive: true, force: true });
  }

  #notified(method: string, params: unknown): void {
    if (method === 'window/logMessage') {
      const { type, message } = params as { type: number; message: string };
      // Biome logs what it cannot read in its config while it loads it, then that it is initialized (its settings loaded).
      if (this.#ready !== null && type === 1) this.#configErrors.push(message);
      const pid = /^Server initialized with PID: (\d+)/.exec(message);
      if (pid !== null) {
        this.#daemonPid = Number(pid[1]);
        this.#ready?.();
      }
      return;
    }
    if (method === 'window/showMessage') {
      // "The configuration file has errors. Biome won't process files until the configuration is fixed."
      // (earlier versions: "will report only parsing errors"): no answer after it is the workspace's.
      const { type, message } = params as { type: number; message: string };
      if (type === 1 || type === 2) {
        this.#configErrors.push(message);
        const error = new Error(message);
        for (const waiting of this.#waiting.values()) waiting.reject(error);
        this.#waiting.clear();
      }
      return;
    }
    if (method !== 'textDocument/publishDiagnostics') return;
    const { uri, version, diagnostics } = params as { uri: string; version?: number; diagnostics: Diagnostic[] };
    const waiting = this.#waiting.get(uri);
    // The versionless list after a didClose clears the editor; only the answer to our own open counts.
    if (waiting !== undefined && version === waiting.version) waiting.resolve(diagnostics);
  }

  /** The ignore probe's answer at `path` (biomeProbe's text, asked for the generic one), asked once per server. */
  #probe(path: string): Promise<Finding[]> {
    let answer = this.#probes.get(path);
    if (answer === undefined) {
      answer = this.#judge(path, biomeProbe(path)).then((judged) => (judged === 'ignored' ? [] : judged));
      this.#probes.set(path, answer);
      // A failed probe is asked again next time.
      answer.catch(() => {
        if (this.#probes.get(path) === answer) this.#probes.delete(path);
      });
    }
    return answer;
  }

  /** The findings for `text` at `path`, or that Biome did not look at it. */
  async #judge(path: string, text: string): Promise<Judged> {
    const answer = await this.#serial(path, () => this.#diagnostics(path, text));
    return answer === 'ignored' ? answer : answer.filter(linted).map(finding);
  }

  /** Runs `step` after every earlier operation on `path`'s URI has settled. */
  #serial<T>(path: string, step: () => Promise<T>): Promise<T> {
    const before = this.#queues.get(path) ?? Promise.resolve();
    const run = before.then(step, step);
    const settled = run.then(
      () => undefined,
      () => undefined,
    );
    this.#queues.set(path, settled);
    void settled.then(() => {
      if (this.#queues.get(path) === settled) this.#queues.delete(path);
    });
    return run;
  }

  /** Opens `text` at `path`'s URI, waits for its diagnostics (bounded), then closes it. */
  async #diagnostics(path: string, text: string): Promise<Answer> {
    const server = this.#server;
    if (server === null) throw new Error('the language server is gone');
    const configErrors = this.configErrors();
    if (configErrors !== null) throw new Error(configErrors);
    const uri = pathToFileURL(join(this.workspace, path)).href;
    // A version unique for the server's life: a late answer to an earlier open of the same URI cannot pass for this one.
    const version = ++this.#version;
    const timers: NodeJS.Timeout[] = [];
    const answer = new Promise<Answer>((resolve, reject) => {
      timers.push(setTimeout(() => reject(new Error(`no publishDiagnostics within ${this.#diagnosticsMs} ms`)), this.#diagnosticsMs));
      timers.push(
        setTimeout(() => {
          const point = { line: 0, character: 0 };
          server.request('textDocument/codeAction', { textDocument: { uri }, range: { start: point, end: point }, context: { diagnostics: [] } }, this.#diagnosticsMs).then(
            (result) => {
              if (result === null) resolve('ignored');
            },
            () => {},
          );
        }, IGNORED_AFTER_MS),
      );
      this.#waiting.set(uri, { version, resolve, reject });
    });
    try {
      server.notify('textDocument/didOpen', { textDocument: { uri, languageId: LANGUAGE[extname(path).toLowerCase()] ?? 'javascript', version, text } });
      return await answer;
    } finally {
      for (const timer of timers) clearTimeout(timer);
      if (this.#waiting.get(uri)?.version === version) this.#waiting.delete(uri);
      if (server.death === null) server.notify('textDocument/didClose', { textDocument: { uri } });
    }
  }
}
