import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import type * as TS from 'typescript';
import type { Issue } from '../core/claim.js';
import { compilerPath } from './compilerPath.js';
import { DiskFiles, textHash, type DiskVersion } from './diskFiles.js';
import type { ProjectConfig } from './projectConfig.js';
import type { Baseline as DraftBaseline } from './draftBaseline.js';
import { attribute, diagnosticKey, fileBaselines, type TypeScriptModule } from './typeBaseline.js';

interface CachedSource {
  hash: string;
  format: string;
  file: TS.SourceFile;
}

interface Baseline {
  keys: Set<string>;
  /** Each file's diagnostics for a draft of it to be matched against (draftBaseline.ts), by compiler file name. */
  files: Map<string, DraftBaseline>;
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
      // As tsc parses (its defaultJSDocParsingMode, TypeScript 5.3+): JSDoc in .ts and .d.ts files only where it can
      // change a type error, so the diagnostics are tsc's and the d.ts of @types/node and the like parse faster
      // (https://devblogs.microsoft.com/typescript/announcing-typescript-5-3/#optimizations-by-skipping-jsdoc-parsing).
      jsDocParsingMode: ts.JSDocParsingMode?.ParseForTypeErrors,
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
    this.#baseline = {
      keys: new Set(diagnostics.map((diagnostic) => diagnosticKey(this.#ts, diagnostic))),
      files: fileBaselines(this.#ts, diagnostics),
      versions,
      roots: roots.join('\n'),
    };
    return this.#baseline;
  }

  /**
   * Checks the whole program with the overlay in place and attributes each
   * error against the baseline. `test` is the test's compiler path: new by
   * construction, so it has no disk text to be matched against. `started` is
   * called once the claimant's input is being checked (the baseline is not
   * the claimant's work).
   */
  inspect(files: ReadonlyMap<string, string>, declared: ReadonlyMap<string, string>, test: string, started: () => void): Issue[] {
    let baseline = this.baseline();
    // A drafted file on disk that the disk program does not hold (outside the tsconfig's files, imported by none) is a root
    // of the checked program: make it one of the baseline too, so its disk text's errors are known and stay the workspace's.
    let unread = false;
    for (const path of files.keys()) {
      if (path === test || !this.#checkable(path) || baseline.versions.has(path) || this.#disk.current(path) === undefined) continue;
      this.#extras.add(path);
      unread = true;
    }
    if (unread) baseline = this.baseline();
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
        const drafted = new Map<string, DraftBaseline>();
        for (const path of files.keys()) {
          const old = path === test ? undefined : baseline.files.get(path);
          if (old !== undefined) drafted.set(path, old);
        }
        return attribute(this.#ts, diagnostics, { workspace: this.#workspace, declared, baseline: baseline.keys, drafted });
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