import type { Explanation } from '../api/explain.js';
import { reportGroups, type InputsReport } from '../api/explainInputs.js';
import type { RunReport } from '../api/run.js';
import type { StatusReport } from '../api/status.js';
import { summariseChanges } from '../core/changeSummary.js';
import { evidenceChangeLines, installedSummaryLines, plural } from '../core/changeText.js';
import { describeContextChange, type InputChange } from '../core/diff.js';
import type { InputGroupKind } from '../core/inputGroups.js';
import type { CheckStatus } from '../core/decide.js';
import type { Receipt } from '../core/receipt.js';
import { formatDuration } from '../core/humanTime.js';
import { replayHeader } from '../core/replay.js';

/** How many input changes explain's text lists before it summarises them; structuredContent has them all. */
const LISTED_CHANGES = 20;

// The text block beside each tool's structuredContent: a few lines a person or a model can read at a glance.

function statusLine(check: CheckStatus): string {
  const head = `${check.name}: ${check.freshness} ${check.result ?? '-'}`;
  if (check.reuseEligible) return `${head}, reusable (receipt ${check.receipt?.runId ?? '-'})`;
  return `${head}; ${check.reasons.map((r) => r.message).join('; ')}`;
}

export function statusSummary(report: StatusReport): string {
  const lines = report.checks.map(statusLine);
  if (lines.length === 0) lines.push('no checks configured; add one to vouch.config.json');
  return [...lines, ...notes(report.notices)].join('\n');
}

export function explainSummary(result: Explanation): string {
  const lines = [statusLine(result.status)];
  for (const c of result.definitionChanges) lines.push(`definition ${c.field} changed`);
  for (const c of result.contextChanges) lines.push(`context ${describeContextChange(c)}`);
  lines.push(...inputLines(result));
  const evidence = result.evidence;
  if (evidence) {
    for (const note of evidence.notes) lines.push(`note on the receipt: ${note.code}: ${note.message}`);
    lines.push(...evidenceChangeLines(evidence.changes, evidence.entriesPerPackage, false, ''));
  }
  if (result.status.freshness === 'CURRENT' && result.inputChanges.length === 0 && (evidence?.changes.length ?? 0) === 0) lines.push('nothing changed since the receipt');
  return [...lines, ...notes(result.notices)].join('\n');
}

/** Few changes one per line; many as the CLI summarises them: source changes up to the limit, installed ones per package. */
function inputLines(result: Explanation): string[] {
  const changes = result.inputChanges;
  if (changes.length <= LISTED_CHANGES) return changes.map((c) => `${inputVerb(c)} ${c.path}`);
  const summary = summariseChanges(changes, result.installedCounts, LISTED_CHANGES);
  const lines = summary.source.map((c) => `${inputVerb(c)} ${c.path}`);
  if (summary.moreSource > 0) lines.push(`and ${plural(summary.moreSource, 'more source change')}`);
  if (summary.installed.kind === 'listed') lines.push(...summary.installed.changes.map((c) => `${inputVerb(c)} ${c.path}`));
  else lines.push(...installedSummaryLines(summary.installed, ''));
  return lines;
}

function inputVerb(change: InputChange): string {
  switch (change.change) {
    case 'added':
      return 'added';
    case 'removed':
      return 'removed';
    case 'modified':
      return 'modified';
    case 'mode':
      return 'mode changed:';
    case 'identity':
      return 'installed file changed:';
    case 'type':
      return 'type changed:';
  }
}

function receiptLine(receipt: Receipt): string {
  const how = receipt.signal ? `killed by ${receipt.signal}` : `exit ${receipt.exitCode}`;
  return `${receipt.check} ${receipt.result} (${how}) in ${formatDuration(receipt.durationMs)}, receipt ${receipt.runId}`;
}

export function logSummary(receipts: readonly Receipt[]): string {
  if (receipts.length === 0) return 'no receipts yet; the run tool records one';
  return receipts.map(receiptLine).join('\n');
}

export function runSummary(report: RunReport, stateDir: string, outputOf: (check: string) => string): string {
  const lines: string[] = [];
  for (const entry of report.runs) {
    if (entry.action === 'skipped') {
      lines.push(`${entry.name} skipped: CURRENT PASS, receipt ${entry.status.receipt?.runId ?? '-'}`);
      const stored = entry.stored;
      if (stored) lines.push(`  ${stored.summary}`);
      if (stored?.replay) {
        // The stored lines as they are: only indented, like a failure's output below.
        lines.push(`  ${replayHeader(stored.replay)}`, ...stored.replay.notes.map((note) => `  (note: ${note})`));
        const text = stored.replay.text.endsWith('\n') ? stored.replay.text.slice(0, -1) : stored.replay.text;
        if (text !== '') lines.push(...text.split('\n').map((line) => `  | ${line}`));
      }
      continue;
    }
    const { receipt } = entry;
    lines.push(receiptLine(receipt));
    if (entry.error) lines.push(`  ${entry.error.message}`);
    if (!receipt.reuseEligible && receipt.result === 'PASS') lines.push(`  not reusable: ${receipt.reasons.map((r) => r.message).join('; ')}`);
    if (receipt.result === 'FAIL') {
      // The end of the output is where a failure is explained; the log has all of it.
      lines.push(`  log: ${stateDir}/${receipt.logPath}`);
      const tail = outputOf(receipt.check).trimEnd();
      if (tail) lines.push('  output (end):', ...tail.split('\n').map((line) => `  | ${line}`));
    }
  }
  lines.push(...notes(report.notices), `exit code ${report.exitCode}`);
  return lines.join('\n');
}

function notes(notices: readonly string[]): string[] {
  return notices.map((notice) => `note: ${notice}`);
}

/** How many directories or packages the inputs summary names per group. */
const LISTED_BUCKETS = 5;

/** What a check's latest receipt depends on, counted; the structured content has every path. */
export function inputsSummary(report: InputsReport): string {
  const name = report.definition.name;
  const { receipt } = report;
  if (receipt === null) return `${name}: no receipt yet, so nothing is known about what it depends on; the run tool makes one`;
  const lines = [`${name}: receipt ${receipt.runId} (${receipt.result}), inputs as ${report.mode}`];
  const groups = reportGroups(report);
  if (groups === null) lines.push(`its ${report.mode === 'traced' ? 'evidence' : 'input manifest'} could not be read: what it depends on is not known`);
  else {
    for (const group of groups) {
      if (report.mode === 'traced' && group.count === 0) continue;
      const buckets = group.buckets.slice(0, LISTED_BUCKETS).map((bucket) => `${bucket.name} ${bucket.count}`);
      const more = group.buckets.length > LISTED_BUCKETS ? `, and ${plural(group.buckets.length - LISTED_BUCKETS, group.by === 'package' ? 'more package' : 'more directory')}` : '';
      const noun = GROUP_NOUNS[group.kind];
      const installed = group.kind === 'installed' && report.mode === 'declared' ? INSTALLED_FILES : noun;
      lines.push(`${plural(group.count, installed[0], installed[1])} (${buckets.join(', ')}${more})`);
    }
  }
  for (const note of receipt.evidence.notes) lines.push(`${note.code}: ${note.message}`);
  const scripts = receipt.context.scripts ?? [];
  if (scripts.length > 0) lines.push(`scripts run: ${scripts.map((script) => script.name).join(', ')}`);
  return [...lines, ...notes(report.notices)].join('\n');
}

/** What a group's paths are called in the summary. */
const GROUP_NOUNS: Record<InputGroupKind, [string, string]> = {
  source: ['source file', 'source files'],
  // A traced receipt's installed paths are files read, directories listed and lookups alike.
  installed: ['installed path', 'installed paths'],
  read: ['file read', 'files read'],
  listed: ['directory listed', 'directories listed'],
  found: ['path looked up and found', 'paths looked up and found'],
  absent: ['path looked up and absent', 'paths looked up and absent'],
  outside: ['path outside the root', 'paths outside the root'],
  own: ['path of its own (written by the run)', 'paths of its own (written by the run)'],
};
const INSTALLED_FILES: [string, string] = ['installed file', 'installed files'];
