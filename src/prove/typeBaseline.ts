import { isAbsolute, relative, sep } from 'node:path';
import type * as TS from 'typescript';
import type { Issue, Origin } from '../core/claim.js';

/** The workspace's own compiler module; only its type comes from vouch's dependencies. */
export type TypeScriptModule = typeof TS;

/**
 * A diagnostic as the baseline remembers it. File, code, start and message
 * together tell "already there before the claim" from "new": a file the claim
 * did not draft keeps its disk text, so an old diagnostic keeps its start.
 */
export function diagnosticKey(ts: TypeScriptModule, diagnostic: TS.Diagnostic): string {
  const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
  return [diagnostic.file?.fileName ?? '', diagnostic.code, diagnostic.start ?? -1, message].join('\0');
}

/** What attributing one inspection's diagnostics needs to know. */
export interface Attribution {
  workspace: string;
  /** Compiler file name of each draft and of the test → its declared workspace-relative path. */
  declared: ReadonlyMap<string, string>;
  /** Keys of the diagnostics of the disk as it is, with no overlay. */
  baseline: ReadonlySet<string>;
}

/**
 * One compiler diagnostic as an issue. A diagnostic in a draft or the test is
 * the claimant's. Anywhere else, one the baseline already had is the
 * workspace's, and a new one is the claimant's too: the program differs from
 * the baseline only by the overlay, so the drafts caused it. That is how a
 * draft that breaks its importers is caught, and it covers global and
 * options diagnostics as well (baseline ones stay the workspace's).
 */
export function diagnosticIssue(ts: TypeScriptModule, diagnostic: TS.Diagnostic, attribution: Attribution): Issue {
  const file = diagnostic.file;
  const declared = file === undefined ? undefined : attribution.declared.get(file.fileName);
  let origin: Origin;
  if (declared !== undefined) origin = 'claimant';
  else origin = attribution.baseline.has(diagnosticKey(ts, diagnostic)) ? 'workspace' : 'claimant';
  const issue: Issue = {
    origin,
    stage: 'type',
    message: ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'),
    code: `TS${diagnostic.code}`,
  };
  if (file !== undefined) {
    issue.path = declared ?? workspacePath(attribution.workspace, file.fileName);
    if (diagnostic.start !== undefined) {
      const at = file.getLineAndCharacterOfPosition(diagnostic.start);
      issue.line = at.line + 1;
      issue.column = at.character + 1;
    }
  }
  return issue;
}

/** A compiler file name as a workspace-relative, '/'-separated path (kept absolute when it lies outside). */
export function workspacePath(workspace: string, fileName: string): string {
  const path = relative(workspace, fileName);
  if (path === '') return '.';
  if (path === '..' || path.startsWith(`..${sep}`) || isAbsolute(path)) return fileName;
  return path.split(sep).join('/');
}

/** Issues in a stable order, so equal inspections give equal answers. */
export function sortIssues(issues: Issue[]): Issue[] {
  return issues.sort((a, b) => (a.path ?? '').localeCompare(b.path ?? '') || (a.line ?? 0) - (b.line ?? 0) || a.message.localeCompare(b.message));
}
