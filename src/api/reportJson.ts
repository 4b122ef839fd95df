import type { Explanation } from './explain.js';
import type { Project } from './project.js';
import type { RunReport } from './run.js';
import type { StatusReport } from './status.js';
import type { CheckStatus } from '../core/decide.js';
import type { EntrySummary, InputChange, ValueChange } from '../core/diff.js';
import type { Receipt, ReceiptEvidence } from '../core/receipt.js';
// Types only: zod stays out of the status, run and hook paths; the documents are defined once in core/json.
import type { ExplainDocument, InputChangeJson } from '../core/json/explain.js';
import type { LogDocument } from '../core/json/log.js';
import type { RunDocument } from '../core/json/run.js';
import type { CheckStatusJson, EvidenceJson, ReceiptJson, ReceiptSummaryJson, StatusDocument } from '../core/json/status.js';
import { explainedEvidenceJson } from './explainJson.js';
import type { Replay } from '../core/replay.js';
import { savedMs, type ToolCount } from '../core/runSummary.js';

function toolCountJson(count: ToolCount) {
  return { tool: count.tool, line: count.line, errors: count.errors ?? null, warnings: count.warnings ?? null, passed: count.passed ?? null, failed: count.failed ?? null, total: count.total ?? null };
}

function replayJson(replay: Replay) {
  return { part: replay.part, text: replay.text, lines: replay.lines, omitted_lines: replay.omittedLines, notes: replay.notes };
}

/*
 * The documents of the --json contract (docs/json.md), built in one place so
 * that the CLI and the MCP server return exactly the same shapes. Their types
 * come from the one definition of each document in src/core/json/; the key
 * order of the objects here is the order the JSON prints.
 */

export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** The receipt summary that status, run and explain share in JSON. */
export function receiptSummaryJson(receipt: Receipt): ReceiptSummaryJson {
  return {
    run_id: receipt.runId,
    started_at: iso(receipt.startedAt),
    finished_at: iso(receipt.finishedAt),
    duration_ms: receipt.durationMs,
    exit_code: receipt.exitCode,
    signal: receipt.signal,
    evidence: evidenceJson(receipt.evidence),
  };
}

/** A whole receipt, as log and run report it. */
export function receiptJson(receipt: Receipt, stateDir: string): ReceiptJson {
  return {
    run_id: receipt.runId,
    started_at: iso(receipt.startedAt),
    finished_at: iso(receipt.finishedAt),
    duration_ms: receipt.durationMs,
    exit_code: receipt.exitCode,
    signal: receipt.signal,
    check: receipt.check,
    result: receipt.result,
    reuse_eligible: receipt.reuseEligible,
    reasons: receipt.reasons,
    input_count: receipt.inputCount,
    evidence: evidenceJson(receipt.evidence),
    log_path: `${stateDir}/${receipt.logPath}`,
  };
}

function evidenceJson(evidence: ReceiptEvidence | undefined): EvidenceJson {
  // An observer started by an older vouch answers with receipts that predate the field: theirs is declared.
  return evidence === undefined ? { mode: 'declared', notes: [] } : { mode: evidence.mode, notes: evidence.notes };
}

export function statusJson(status: CheckStatus): CheckStatusJson {
  return {
    name: status.name,
    kind: status.kind,
    freshness: status.freshness,
    result: status.result,
    reuse_eligible: status.reuseEligible,
    reasons: status.reasons,
    receipt: status.receipt ? receiptSummaryJson(status.receipt) : null,
  };
}

/** The --json document; the MCP server's status tool returns the same one. */
export function statusReportJson(project: Project, report: StatusReport): StatusDocument {
  return {
    schema: 1 as const,
    root: project.root,
    config_path: project.configPath,
    observation: {
      healthy: report.observation.healthy,
      source: report.observation.source,
      mode: report.observation.mode,
      observed_at: iso(report.observation.observedAt),
      duration_ms: report.observation.durationMs,
    },
    checks: report.checks.map(statusJson),
    notices: report.notices,
  };
}

/** The --json document; the MCP server's explain tool returns the same one. */
export function explanationJson(result: Explanation): ExplainDocument {
  return {
    schema: 1 as const,
    check: statusJson(result.status),
    // The diffs hold values of the config and context types, which ValueChange does not narrow per field:
    // the schema states each field's value, and test/e2e/jsonSchema.test.ts checks real output against it.
    definition_changes: result.definitionChanges.map(definitionChangeJson) as ExplainDocument['definition_changes'],
    context_changes: result.contextChanges as ExplainDocument['context_changes'],
    input_changes: result.inputChanges.map(inputChangeJson),
    evidence: explainedEvidenceJson(result.evidence),
    notices: result.notices,
  };
}

/**
 * A definition holds `mode` only when it is traced (core/definition.ts), so that declared checks
 * kept their digests: its absence is "declared", which JSON says, since it never leaves a field out.
 */
function definitionChangeJson(change: ValueChange): ValueChange {
  if (change.field !== 'mode') return change;
  return { field: 'mode', old: change.old ?? 'declared', new: change.new ?? 'declared' };
}

function inputChangeJson(change: InputChange): InputChangeJson {
  const side = (entry: EntrySummary | undefined) =>
    entry === undefined
      ? null
      : {
          type: entry.type,
          digest: entry.digest ?? null,
          executable: entry.executable ?? null,
          identity: entry.identity ?? null,
          target: entry.target ?? null,
        };
  return {
    change: change.change,
    path: change.path,
    origin: change.origin,
    old: side('old' in change ? change.old : undefined),
    new: side('new' in change ? change.new : undefined),
    identity_fields: change.change === 'identity' ? change.fields : [],
  };
}

/** The --json document; the MCP server's log tool returns the same one. */
export function logJson(receipts: readonly Receipt[], stateDir: string, notices: string[]): LogDocument {
  return { schema: 1 as const, receipts: receipts.map((receipt) => receiptJson(receipt, stateDir)), notices };
}

/** The --json document; the MCP server's run tool returns the same one. */
export function runReportJson(report: RunReport, stateDir: string): RunDocument {
  return {
    schema: 1 as const,
    exit_code: report.exitCode,
    runs: report.runs.map((entry) =>
      entry.action === 'skipped'
        ? {
            name: entry.name,
            action: 'skipped' as const,
            exit_code: 0,
            status: statusJson(entry.status),
            receipt: null,
            error: null,
            summary:
              entry.stored && entry.status.receipt
                ? { line: entry.stored.summary, counts: entry.stored.counts.map(toolCountJson), saved_ms: savedMs(entry.status.receipt.durationMs, entry.elapsedMs) }
                : null,
            output: entry.stored?.replay ? replayJson(entry.stored.replay) : null,
          }
        : {
            name: entry.name,
            action: 'ran' as const,
            exit_code: entry.exitCode,
            status: null,
            receipt: receiptJson(entry.receipt, stateDir),
            error: entry.error,
          },
    ),
    notices: report.notices,
  };
}
