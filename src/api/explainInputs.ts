import type { CheckDefinition } from '../core/definition.js';
import type { EvidenceEntry } from '../core/evidence.js';
import { groupEvidence, groupInputs, type InputGroup } from '../core/inputGroups.js';
import type { InputEntry } from '../core/manifest.js';
import type { Receipt } from '../core/receipt.js';
import { readConsistently } from '../store/openStore.js';
import { loadEvidence, loadManifest, latestReceipt } from '../store/receipts.js';
import { selectCheck, type Project } from './project.js';
import { withSession } from './session.js';

export interface InputsReport {
  /** The check as configured now. */
  definition: CheckDefinition;
  /** The latest receipt, whose inputs these are; null when the check has none yet. */
  receipt: Receipt | null;
  /** How the receipt's inputs were found; without a receipt, the mode the check is configured with. */
  mode: 'declared' | 'traced';
  /** A declared receipt's input manifest, sorted by path; null otherwise, or when it cannot be read. */
  entries: InputEntry[] | null;
  /** A traced receipt's evidence entries, sorted by path; null otherwise, or when they cannot be read. */
  evidence: EvidenceEntry[] | null;
  notices: string[];
}

/**
 * What CHECK's latest receipt depends on, as the receipt recorded it. Nothing
 * is observed: this is the receipt's own evidence, not what is on disk now.
 */
export async function explainInputs(project: Project, name: string, env: NodeJS.ProcessEnv): Promise<InputsReport> {
  const definition = await selectCheck(project, name);
  return withSession(project, async (session) => {
    const report = readConsistently(session.db, () => {
      const receipt = latestReceipt(session.db, definition.name);
      if (receipt === null) return { receipt, mode: definition.mode ?? ('declared' as const), entries: null, evidence: null };
      if (receipt.evidence.mode === 'traced') return { receipt, mode: 'traced' as const, entries: null, evidence: loadEvidence(session.db, receipt.manifestDigest) };
      return { receipt, mode: 'declared' as const, entries: loadManifest(session.db, receipt.manifestDigest), evidence: null };
    });
    const { receipt } = report;
    if (receipt !== null && report.entries === null && report.evidence === null) {
      const what = report.mode === 'traced' ? 'evidence' : 'input manifest';
      session.notices.push(`the ${what} of run ${receipt.runId} could not be read: what it depends on is not known`);
    }
    return { definition, ...report, notices: session.notices };
  }, env);
}

/** The groups of a report: a traced receipt's evidence, or a declared receipt's manifest; null when neither is known. */
export function reportGroups(report: InputsReport): InputGroup[] | null {
  if (report.receipt === null) return null;
  if (report.evidence !== null) return groupEvidence(report.evidence);
  if (report.entries !== null) return groupInputs(report.entries);
  return null;
}
