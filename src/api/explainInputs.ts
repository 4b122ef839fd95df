import type { CheckDefinition } from '../core/definition.js';
import type { InputEntry } from '../core/manifest.js';
import type { Receipt } from '../core/receipt.js';
import { readConsistently } from '../store/openStore.js';
import { loadManifest, latestReceipt } from '../store/receipts.js';
import { selectChecks, type Project } from './project.js';
import { withSession } from './session.js';

export interface InputsReport {
  /** The check as configured now. */
  definition: CheckDefinition;
  /** The latest receipt, whose inputs these are; null when the check has none yet. */
  receipt: Receipt | null;
  /** The receipt's input manifest, sorted by path; null without a receipt or when it cannot be read. */
  entries: InputEntry[] | null;
  notices: string[];
}

/**
 * What CHECK's latest receipt depends on, as the receipt recorded it. Nothing
 * is observed: this is the receipt's own evidence, not what is on disk now.
 */
export async function explainInputs(project: Project, name: string, env: NodeJS.ProcessEnv): Promise<InputsReport> {
  const [definition] = await selectChecks(project, [name]);
  if (!definition) throw new Error('unreachable: selectChecks returns the named check');
  return withSession(project, async (session) => {
    const { receipt, entries } = readConsistently(session.db, () => {
      const latest = latestReceipt(session.db, definition.name);
      return { receipt: latest, entries: latest === null ? null : loadManifest(session.db, latest.manifestDigest) };
    });
    if (receipt !== null && entries === null) {
      session.notices.push(`the input manifest of run ${receipt.runId} could not be read: what it depends on is not known`);
    }
    return { definition, receipt, entries, notices: session.notices };
  }, env);
}
