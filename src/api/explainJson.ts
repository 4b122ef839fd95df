import { describeEvidenceChange, type EvidenceChange, type EvidenceEntry } from '../core/evidence.js';
// Types only: zod stays out of command paths; the document is defined once in core/json.
import type { EvidenceJson } from '../core/json/explain.js';
import type { ExplainedEvidence } from './explain.js';

type EvidenceChangeJson = NonNullable<EvidenceJson>['changes'][number];

/** The `evidence` member of `vouch explain CHECK --json`: the receipt's mode, its notes and (traced) every changed entry. */
export function explainedEvidenceJson(evidence: ExplainedEvidence | null): EvidenceJson {
  if (evidence === null) return null;
  return { mode: evidence.mode, notes: evidence.notes, changes: evidence.changes.map(evidenceChangeJson) };
}

function side(entry: EvidenceEntry) {
  return { type: entry.type, link: entry.link ?? null, digest: entry.digest ?? null };
}

function evidenceChangeJson(change: EvidenceChange): EvidenceChangeJson {
  return { path: change.path, use: change.use, own: change.before.own === true, description: describeEvidenceChange(change), old: side(change.before), new: side(change.now) };
}
