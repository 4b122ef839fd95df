import { isAbsolute, relative, sep } from 'node:path';
import type * as TS from 'typescript';
import type { Issue, Origin } from '../core/claim.js';
import { type Baseline, type LineText, splitByBaseline, takeBaseline } from './draftBaseline.js';

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
  /**
   * Compiler file name of each draft (never the test) whose disk text the
   * baseline program checked → that text's diagnostics, matched as
   * draftBaseline.ts says.
   */
  drafted: ReadonlyMap<string, Baseline>;
}

/**
 * One compiler diagnostic as an issue. A diagnostic in a draft or the test is
 * the claimant's (attribute() then excuses a draft's old ones). Anywhere
 * else, one the baseline already had is the workspace's, and a new one is the
 * claimant's too: the program differs from the baseline only by the overlay,
 * so the drafts caused it. That is how a draft that breaks its importers is
 * caught, and it covers global and options diagnostics as well (baseline
 * ones stay the workspace's).
 */
export function diagnosticIssue(ts: TypeScriptModule, diagnostic: TS.Diagnostic, attribution: Attribution): Issue {
  const file = diagnostic.file;
  const declared = file === undefined ? undefined : attribution.declared.get(file.fileName);
  let origin: Origin;
  if (declared !== undefined) origin = 'claimant';
  else origin = attribution.baseline.has(diagnosticKey(ts, diagnostic)) ? 'workspace' : 'claimant';
  const issue: Issue = { origin, stage: 'type', ...located(ts, diagnostic) };
  if (file !== undefined) issue.path = declared ?? workspacePath(attribution.workspace, file.fileName);
  return issue;
}

/**
 * An inspection's diagnostics as issues, claimant's first. A diagnostic in a
 * draft that the draft's disk text already had (same code, message and line
 * text, each old one excusing at most one) is the workspace's: an edit
 * elsewhere in a file with an old type error does not make it the claimant's.
 */
export function attribute(ts: TypeScriptModule, diagnostics: readonly TS.Diagnostic[], attribution: Attribution): Issue[] {
  const issues: Issue[] = [];
  const inDrafts = new Map<TS.SourceFile, Issue[]>();
  for (const diagnostic of diagnostics) {
    const issue = diagnosticIssue(ts, diagnostic, attribution);
    const file = diagnostic.file;
    if (file === undefined || !attribution.drafted.has(file.fileName)) {
      issues.push(issue);
      continue;
    }
    let found = inDrafts.get(file);
    if (found === undefined) inDrafts.set(file, (found = []));
    found.push(issue);
  }
  for (const [file, found] of inDrafts) {
    // In the draft's order, so the first of equal keys are the old ones.
    const { old, added } = splitByBaseline(sortIssues(found), sourceLines(file), attribution.drafted.get(file.fileName) as Baseline);
    issues.push(...added, ...old.map((issue): Issue => ({ ...issue, origin: 'workspace' })));
  }
  return sortIssues(issues);
}

/**
 * Each file's diagnostics as a draft baseline, by compiler file name: what a
 * draft of that file is matched against. Global and options diagnostics
 * belong to no file and stay with the keyed baseline.
 */
export function fileBaselines(ts: TypeScriptModule, diagnostics: readonly TS.Diagnostic[]): Map<string, Baseline> {
  const byFile = new Map<TS.SourceFile, TS.Diagnostic[]>();
  for (const diagnostic of diagnostics) {
    if (diagnostic.file === undefined) continue;
    let found = byFile.get(diagnostic.file);
    if (found === undefined) byFile.set(diagnostic.file, (found = []));
    found.push(diagnostic);
  }
  const baselines = new Map<string, Baseline>();
  for (const [file, found] of byFile) {
    baselines.set(
      file.fileName,
      takeBaseline(
        found.map((diagnostic) => located(ts, diagnostic)),
        sourceLines(file),
      ),
    );
  }
  return baselines;
}

/** A diagnostic's code, message and 1-based place in its file, as an issue says them. */
function located(ts: TypeScriptModule, diagnostic: TS.Diagnostic): Pick<Issue, 'message' | 'code' | 'line' | 'column'> {
  const at: Pick<Issue, 'message' | 'code' | 'line' | 'column'> = { message: ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'), code: `TS${diagnostic.code}` };
  if (diagnostic.file !== undefined && diagnostic.start !== undefined) {
    const { line, character } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
    at.line = line + 1;
    at.column = character + 1;
  }
  return at;
}

/** A source file's lines as the compiler numbers them (it also breaks at U+2028 and U+2029). */
function sourceLines(file: TS.SourceFile): LineText {
  const starts = file.getLineStarts();
  return (line) => {
    const start = starts[line - 1];
    return start === undefined ? '' : file.text.slice(start, starts[line] ?? file.text.length);
  };
}

/** A compiler file name as a workspace-relative, '/'-separated path (kept absolute when it lies outside). */
export function workspacePath(workspace: string, fileName: string): string {
  const path = relative(workspace, fileName);
  if (path === '') return '.';
  if (path === '..' || path.startsWith(`..${sep}`) || isAbsolute(path)) return fileName;
  return path.split(sep).join('/');
}

/** The order issues are listed in: who must act first. */
const ORIGIN_RANK: Readonly<Record<Origin, number>> = { claimant: 0, instrument: 1, workspace: 2 };

/** Issues in a stable order, the workspace's last, so equal inspections give equal answers. */
export function sortIssues(issues: Issue[]): Issue[] {
  return issues.sort(
    (a, b) =>
      ORIGIN_RANK[a.origin] - ORIGIN_RANK[b.origin] ||
      (a.path ?? '').localeCompare(b.path ?? '') ||
      (a.line ?? 0) - (b.line ?? 0) ||
      (a.column ?? 0) - (b.column ?? 0) ||
      a.message.localeCompare(b.message),
  );
}
