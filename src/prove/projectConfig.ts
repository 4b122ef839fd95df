import { existsSync, readFileSync, statSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import type * as TS from 'typescript';
import { canonicalJson } from '../core/canonicalJson.js';
import { ClaimError } from '../core/claimError.js';
import { sha256 } from '../core/digest.js';
import { compilerPath } from './compilerPath.js';
import { workspacePath, type TypeScriptModule } from './typeBaseline.js';

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
