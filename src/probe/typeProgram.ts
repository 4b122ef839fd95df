import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import type * as TS from 'typescript';
import type { Issue } from '../core/claim.js';
import { canonicalJson } from '../core/canonicalJson.js';
import { ClaimError } from '../core/claimError.js';
import { sha256 } from '../core/digest.js';
import { diagnosticIssue, diagnosticKey, sortIssues, workspacePath, type TypeScriptModule } from './typeBaseline.js';

/** A path as the compiler spells it: absolute, '/'-separated. */
export function compilerPath(path: string): string {
  return resolve(path).replace(/\\/g, '/');
}

/**
 * A file modified this close to the moment it was read may be written again
 * within the same mtime tick, leaving its stat unchanged; such a file is
 * re-read by content until it was read well after its last write.
 */
const GRANULARITY_MS = 2000;

interface DiskEntry {
  stat: string;
  hash: string;
  mtimeMs: number;
  readAt: number;
}

/** A disk file's content hash, and its text when it had to be read to know it. */
export interface DiskVersion {
  hash: string;
  text?: string;
}

/**
 * Content hashes of disk files, re-read only when their stat changed (or they
 * were read within the granularity window). The hash, not the stat, becomes the
 * source file's version, so a touch that restores the same bytes costs nothing.
 */
export class DiskFiles {
  readonly #entries = new Map<string, DiskEntry>();
  readonly #read: (path: string) => string | undefined;

  constructor(read: (path: string) => string | undefined) {
    this.#read = read;
  }

  current(path: string): DiskVersion | undefined {
    const stats = statSync(path, { throwIfNoEntry: false });
    if (stats === undefined || !stats.isFile()) {
      this.#entries.delete(path);
      return undefined;
    }
    const stat = `${stats.mtimeMs}:${stats.ctimeMs}:${stats.size}:${stats.ino}`;
    const entry = this.#entries.get(path);
    if (entry !== undefined && entry.stat === stat && entry.readAt - entry.mtimeMs > GRANULARITY_MS) return { hash: entry.hash };
    return this.#load(path, stat, stats.mtimeMs);
  }

  /** Reads the file now, whatever its stat says (the caller needs its text). */
  reread(path: string): DiskVersion | undefined {
    const stats = statSync(path, { throwIfNoEntry: false });
    if (stats === undefined || !stats.isFile()) return undefined;
    return this.#load(path, `${stats.mtimeMs}:${stats.ctimeMs}:${stats.size}:${stats.ino}`, stats.mtimeMs);
  }

  // Stat before read: a write in between leaves an old stat beside new text, which the next stat corrects.
  #load(path: string, stat: string, mtimeMs: number): DiskVersion | undefined {
    const readAt = Date.now();
    const text = this.#read(path);
    if (text === undefined) {
      this.#entries.delete(path);
      return undefined;
    }
    const hash = textHash(text);
    this.#entries.set(path, { stat, hash, mtimeMs, readAt });
    return { hash, text };
  }
}

function textHash(text: string): string {
  return sha256(text).slice(0, 32);
}

/** A tsconfig as parsed now, and the key that says whether a resident program built from it still applies. */
export interface ProjectConfig {
  tsconfig: string;
  parsed: TS.ParsedCommandLine;
  /** The tsconfig and every file it extends, as compiler paths. */
  chain: string[];
  /** Digest of the effective options, the chain's text and the workspace manifest: a change rebuilds the program. */
  configKey: string;
}

/**
 * Parses a project's tsconfig from disk, as `tsc -p` would. A tsconfig that is
 * not there is the claimant's to fix (the claim names it); one that does not
 * parse is the workspace's.
 */
export function readProjectConfig(ts: TypeScriptModule, workspace: string, tsconfig: string): ProjectConfig {
  const shown = workspacePath(workspace, tsconfig);
  if (!statSync(tsconfig, { throwIfNoEntry: false })?.isFile()) {
    throw new ClaimError('claimant', 'missing', `project ${shown} does not exist; name a tsconfig file in the workspace`);
  }
  let unrecoverable: TS.Diagnostic | undefined;
  const host: TS.ParseConfigFileHost = {
    useCaseSensitiveFileNames: ts.sys.useCaseSensitiveFileNames,
    readDirectory: ts.sys.readDirectory,
    fileExists: ts.sys.fileExists,
    readFile: ts.sys.readFile,
    getCurrentDirectory: () => workspace,
    onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
      unrecoverable = diagnostic;
    },
  };
  const parsed = ts.getParsedCommandLineOfConfigFile(tsconfig, undefined, host);
  if (parsed === undefined || unrecoverable !== undefined) {
    const why = unrecoverable === undefined ? 'unknown error' : ts.flattenDiagnosticMessageText(unrecoverable.messageText, ' ');
    throw new ClaimError('workspace', 'malformed', `project ${shown} cannot be read: ${why}`);
  }
  // "No inputs were found" is not malformed: the claim's drafts may be the inputs.
  const errors = parsed.errors.filter((diagnostic) => diagnostic.category === ts.DiagnosticCategory.Error && diagnostic.code !== 18003);
  if (errors.length > 0) {
    const shownErrors = errors.slice(0, 3).map((diagnostic) => {
      const where = diagnostic.file === undefined ? '' : `${workspacePath(workspace, diagnostic.file.fileName)}: `;
      return `${where}TS${diagnostic.code} ${ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ')}`;
    });
    throw new ClaimError('workspace', 'malformed', `project ${shown} does not parse: ${shownErrors.join('; ')}`);
  }
  const chain = [compilerPath(tsconfig), ...((parsed.options.configFile as TS.TsConfigSourceFile | undefined)?.extendedSourceFiles ?? []).map(compilerPath)];
  const manifest = join(workspace, 'package.json');
  // The manifest's "type" decides each file's module format under NodeNext, so it is part of the key too.
  const configKey = sha256(
    canonicalJson({
      options: plainOptions(parsed.options),
      references: parsed.projectReferences ?? [],
      chain: chain.map((path) => [path, readText(path)]),
      manifest: readText(manifest),
    }),
  );
  return { tsconfig: compilerPath(tsconfig), parsed, chain, configKey };
}

function readText(path: string): string | null {
  return existsSync(path) ? readFileSync(path, 'utf8') : null;
}

/** The options without the parsed config source file (a whole AST) and its path, which say where, not how. */
function plainOptions(options: TS.CompilerOptions): Record<string, unknown> {
  const { configFile: _configFile, configFilePath: _configFilePath, ...rest } = options;
  return rest;
}

/**
 * Digest of a project's effective compiler options with every absolute path
 * made workspace-relative, so two checkouts of one commit digest the same.
 */
export function optionsDigest(workspace: string, options: TS.CompilerOptions): string {
  const relativePaths = (value: unknown): unknown => {
    if (typeof value === 'string') return isAbsolute(value) ? workspacePath(workspace, value) : value;
    if (Array.isArray(value)) return value.map(relativePaths);
    if (value !== null && typeof value === 'object') {
      return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, relativePaths(item)]));
    }
    return value;
  };
  return sha256(canonicalJson(relativePaths(plainOptions(options)))).slice(0, 32);
}

interface CachedSource {
  hash: string;
  format: string;
  file: TS.SourceFile;
}

interface Baseline {
  keys: Set<string>;
  /** Content hash of every file in the baseline program: a change on disk means it must be retaken. */
  versions: Map<string, string>;
  roots: string;
}

/**
 * One tsconfig's resident builder program. The compiler host consults the
 * overlay first; source files are cached by content hash and carry it as
 * their version, so the builder re-checks exactly the files that changed and
 * the files affected by them (importers included).
 */
export class TypeProject {
  readonly configKey: string;
  readonly chain: readonly string[];
  readonly #ts: TypeScriptModule;
  readonly #workspace: string;
  readonly #disk: DiskFiles;
  readonly #host: TS.CompilerHost;
  readonly #sources = new Map<string, CachedSource>();
  #parsed: TS.ParsedCommandLine;
  #overlay = new Map<string, string>();
  #overlayDirectories = new Set<string>();
  #builder: TS.SemanticDiagnosticsBuilderProgram | undefined;
  #baseline: Baseline | undefined;
  /** Disk files outside the tsconfig's list that drafts pulled in; the baseline judges them as roots. */
  readonly #extras = new Set<string>();

  constructor(ts: TypeScriptModule, workspace: string, disk: DiskFiles, config: ProjectConfig) {
    this.#ts = ts;
    this.#workspace = workspace;
    this.#disk = disk;
    this.#parsed = config.parsed;
    this.configKey = config.configKey;
    this.chain = config.chain;
    const base = ts.createCompilerHost(config.parsed.options);
    this.#host = {
      ...base,
      // Bypassing getSourceFile would bypass the overlay and the versions.
      getSourceFileByPath: undefined,
      getCurrentDirectory: () => compilerPath(workspace),
      getSourceFile: (fileName, format) => this.#sourceFile(fileName, format),
      fileExists: (fileName) => this.#overlay.has(fileName) || base.fileExists(fileName),
      readFile: (fileName) => this.#overlay.get(fileName) ?? base.readFile(fileName),
      directoryExists: (directory) => this.#overlayDirectories.has(directory) || (base.directoryExists?.(directory) ?? true),
    };
  }

  /** Takes the config parsed for this inspection: same key, but its file list may have changed on disk. */
  refresh(config: ProjectConfig): void {
    this.#parsed = config.parsed;
  }

  /** The baseline for the disk as it is now, retaken (incrementally) when any of its files changed. */
  baseline(): Baseline {
    // A file pulled in once and gone from disk since would be a "file not found" in every later baseline.
    for (const path of this.#extras) if (!existsSync(path)) this.#extras.delete(path);
    const roots = [...new Set([...this.#parsed.fileNames, ...this.#extras])];
    const current = this.#baseline;
    if (current !== undefined && current.roots === roots.join('\n') && this.#unchangedOnDisk(current.versions)) return current;
    this.#setOverlay(new Map());
    const diagnostics = this.#check(roots);
    const versions = new Map<string, string>();
    for (const file of this.#builder?.getSourceFiles() ?? []) versions.set(file.fileName, (file as VersionedSourceFile).version);
    this.#baseline = { keys: new Set(diagnostics.map((diagnostic) => diagnosticKey(this.#ts, diagnostic))), versions, roots: roots.join('\n') };
    return this.#baseline;
  }

  /**
   * Checks the whole program with the overlay in place and attributes each
   * error against the baseline. `started` is called once the claimant's input
   * is being checked (the baseline is not the claimant's work).
   */
  inspect(files: ReadonlyMap<string, string>, declared: ReadonlyMap<string, string>, started: () => void): Issue[] {
    let baseline = this.baseline();
    started();
    for (let attempt = 1; ; attempt++) {
      const diagnostics = this.#checkOverlay(files);
      // A disk file that only the drafts pull into the program (one outside the tsconfig's files) has no baseline yet:
      // judge it as a root of the baseline, so its old errors stay the workspace's and only new ones are the claimant's.
      const unjudged = new Set<string>();
      for (const diagnostic of diagnostics) {
        const fileName = diagnostic.file?.fileName;
        if (fileName !== undefined && !files.has(fileName) && !baseline.versions.has(fileName)) unjudged.add(fileName);
      }
      // A disk write between the baseline and this check would otherwise be blamed on the claimant.
      const drifted = this.#driftedFrom(baseline, files);
      if (unjudged.size === 0 && !drifted) {
        const attribution = { workspace: this.#workspace, declared, baseline: baseline.keys };
        return sortIssues(diagnostics.map((diagnostic) => diagnosticIssue(this.#ts, diagnostic, attribution)));
      }
      if (attempt === 3) {
        return [{ origin: 'instrument', stage: 'type', message: 'files kept changing on disk while the type stage checked the claim; judge it again once the workspace is still' }];
      }
      for (const fileName of unjudged) this.#extras.add(fileName);
      baseline = this.baseline();
    }
  }

  /** Whether the program just checked read any disk file at another version than the baseline did. */
  #driftedFrom(baseline: Baseline, files: ReadonlyMap<string, string>): boolean {
    for (const file of this.#builder?.getSourceFiles() ?? []) {
      if (files.has(file.fileName)) continue;
      const version = baseline.versions.get(file.fileName);
      if (version !== undefined && version !== (file as VersionedSourceFile).version) return true;
    }
    return false;
  }

  #checkOverlay(files: ReadonlyMap<string, string>): TS.Diagnostic[] {
    this.#setOverlay(files);
    try {
      const roots = new Set(this.#parsed.fileNames);
      for (const path of [...files.keys()].sort()) if (this.#checkable(path)) roots.add(path);
      return this.#check([...roots]);
    } finally {
      this.#setOverlay(new Map());
    }
  }

  #check(roots: readonly string[]): TS.Diagnostic[] {
    const ts = this.#ts;
    const { options, projectReferences } = this.#parsed;
    const builder = ts.createSemanticDiagnosticsBuilderProgram(roots, options, this.#host, this.#builder, undefined, projectReferences);
    this.#builder = builder;
    const all = [...builder.getOptionsDiagnostics(), ...builder.getGlobalDiagnostics(), ...builder.getSyntacticDiagnostics(), ...builder.getSemanticDiagnostics()];
    return all.filter((diagnostic) => diagnostic.category === ts.DiagnosticCategory.Error);
  }

  /** Only TypeScript (and, under allowJs, JavaScript) drafts become roots; a README draft is not the compiler's. */
  #checkable(path: string): boolean {
    if (/\.[cm]?tsx?$/.test(path)) return true;
    return this.#parsed.options.allowJs === true && /\.[cm]?jsx?$/.test(path);
  }

  #unchangedOnDisk(versions: ReadonlyMap<string, string>): boolean {
    for (const [path, hash] of versions) if (this.#disk.current(path)?.hash !== hash) return false;
    return true;
  }

  #setOverlay(files: ReadonlyMap<string, string>): void {
    this.#overlay = new Map(files);
    this.#overlayDirectories = new Set();
    for (const path of files.keys()) {
      for (let directory = dirname(path); !this.#overlayDirectories.has(directory); directory = dirname(directory)) {
        this.#overlayDirectories.add(directory);
        if (dirname(directory) === directory) break;
      }
    }
  }

  #sourceFile(fileName: string, format: TS.ScriptTarget | TS.CreateSourceFileOptions): TS.SourceFile | undefined {
    const formatKey = typeof format === 'number' ? String(format) : `${format.languageVersion}:${format.impliedNodeFormat}:${format.jsDocParsingMode}`;
    const overlaid = this.#overlay.get(fileName);
    let version: DiskVersion | undefined = overlaid === undefined ? this.#disk.current(fileName) : { hash: textHash(overlaid), text: overlaid };
    if (version === undefined) {
      this.#sources.delete(fileName);
      return undefined;
    }
    const cached = this.#sources.get(fileName);
    if (cached !== undefined && cached.hash === version.hash && cached.format === formatKey) return cached.file;
    if (version.text === undefined) version = this.#disk.reread(fileName);
    if (version?.text === undefined) return undefined;
    const file = this.#ts.createSourceFile(fileName, version.text, format) as VersionedSourceFile;
    file.version = version.hash;
    this.#sources.set(fileName, { hash: version.hash, format: formatKey, file });
    return file;
  }
}

/** The builder reads a source file's `version` to tell which files changed; the public typings leave it out. */
type VersionedSourceFile = TS.SourceFile & { version: string };
