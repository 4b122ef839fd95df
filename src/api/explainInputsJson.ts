import type { EvidenceEntry } from '../core/evidence.js';
// Types only: zod stays out of command paths; the document is defined once in core/json.
import type { ExplainInputsDocument } from '../core/json/explainInputs.js';
import { reportGroups, type InputsReport } from './explainInputs.js';
import { receiptJson } from './reportJson.js';

type ContextJson = NonNullable<ExplainInputsDocument['context']>;
type EvidenceEntryJson = NonNullable<ExplainInputsDocument['evidence']>[number];

export function evidenceEntryJson(entry: EvidenceEntry): EvidenceEntryJson {
  return { path: entry.path, use: entry.use, own: entry.own === true, type: entry.type, link: entry.link ?? null, digest: entry.digest ?? null, executable: entry.executable ?? null };
}

/**
 * The document of `vouch explain CHECK --inputs --json`: the receipt's own
 * evidence, grouped, with every path. Apart from reportJson.ts so that the
 * grouping stays off the status and run paths.
 */
export function explainInputsJson(report: InputsReport, stateDir: string): ExplainInputsDocument {
  const { receipt } = report;
  const context = receipt?.context;
  return {
    schema: 1 as const,
    check: report.definition.name,
    mode: report.mode,
    receipt: receipt ? receiptJson(receipt, stateDir) : null,
    declared: receipt ? { inputs: receipt.definition.inputs, installed: receipt.definition.installed } : null,
    context: context
      ? {
          argv: context.argv,
          executable: context.executable,
          node: context.node,
          platform: context.platform,
          arch: context.arch,
          // The context type keeps the name as a string; the schema states the names, and the e2e test checks real output.
          package_manager: context.packageManager as ContextJson['package_manager'],
          env: Object.keys(context.env)
            .sort()
            .map((name) => ({ name, set: context.env[name] !== null })),
          scripts: (context.scripts ?? []).map((script) => ({ name: script.name, body: script.body, digest: script.digest })),
        }
      : null,
    groups: reportGroups(report),
    evidence: receipt && report.evidence ? report.evidence.map(evidenceEntryJson) : null,
    notices: report.notices,
  };
}
