import { contextDigest } from './context.js';
import { definitionDigest, type CheckDefinition } from './definition.js';
import type { ObservedContext, Observation } from './observation.js';
import { reason, type Reason } from './reason.js';
import { changedScripts } from './scriptContext.js';
import type { CheckResult, Receipt } from './receipt.js';

export type Freshness = 'CURRENT' | 'STALE' | 'UNVERIFIED';

export interface CheckStatus {
  name: string;
  kind: CheckDefinition['kind'];
  freshness: Freshness;
  result: CheckResult | null;
  reuseEligible: boolean;
  reasons: Reason[];
  receipt: Receipt | null;
}

/**
 * The one freshness decision. CURRENT only when a complete, healthy
 * observation equals the latest receipt on definition, context and inputs;
 * any doubt is UNVERIFIED. Result stays separate: a CURRENT FAIL is a failure.
 */
export function decide(
  definition: CheckDefinition,
  observed: ObservedContext,
  observation: Observation,
  latest: Receipt | null,
): CheckStatus {
  const base = { name: definition.name, kind: definition.kind, result: latest?.result ?? null, receipt: latest };
  const doubts = [...observation.problems, ...observed.problems];
  if (!observation.healthy) {
    doubts.unshift(reason('observation-unhealthy', 'the input observation is incomplete; run "vouch status" again'));
  }
  if (latest === null) {
    doubts.push(reason('never-run', `no receipt yet; run "vouch run ${definition.name}"`));
  }
  if (doubts.length > 0 || latest === null) {
    return { ...base, freshness: 'UNVERIFIED', reuseEligible: false, reasons: doubts };
  }

  const changes: Reason[] = [];
  if (definitionDigest(definition) !== latest.definitionDigest) {
    changes.push(reason('definition-changed', `the check's configuration changed since run ${latest.runId}`));
  }
  if (contextDigest(observed.context) !== latest.contextDigest) {
    const scripts = changedScripts(latest.context.scripts, observed.context.scripts).map((change) => change.name);
    const named = scripts.length === 0 ? '' : `; script${scripts.length === 1 ? '' : 's'} ${scripts.join(', ')} changed`;
    changes.push(reason('context-changed', `the command, tools or environment changed since run ${latest.runId}${named}`));
  }
  if (observation.manifest.digest !== latest.manifestDigest) {
    const named = observation.changedEvidence ?? [];
    const listed = named.slice(0, 3).join('; ');
    const more = named.length > 3 ? `; and ${named.length - 3} more` : '';
    changes.push(reason('inputs-changed', `inputs changed since run ${latest.runId}${listed === '' ? '' : `: ${listed}${more}`}`));
  }
  // A receipt whose inputs moved while it ran cannot say what it checked. It is not CURRENT to a
  // reader that looks at freshness alone, as agents are told to.
  const movedDuringRun = latest.reasons.filter((r) => r.code === 'inputs-changed-during-run');
  if (changes.length > 0 || movedDuringRun.length > 0) {
    return { ...base, freshness: 'STALE', reuseEligible: false, reasons: [...changes, ...movedDuringRun] };
  }

  const reasons = [...latest.reasons];
  if (latest.result === 'FAIL' && !reasons.some((r) => r.code === 'failed')) {
    reasons.push(reason('failed', `run ${latest.runId} failed`));
  }
  return {
    ...base,
    freshness: 'CURRENT',
    reuseEligible: latest.result === 'PASS' && latest.reuseEligible,
    reasons,
  };
}

/**
 * The inputs digest to look an earlier receipt up by, or null when none may answer. Only a
 * declared receipt's digest is the inputs' own: a traced one's is its evidence, looked at again
 * for that receipt alone, so an older traced receipt could answer only after its own evidence
 * was looked at again, one receipt after another. Traced receipts keep the latest-only rule.
 */
export function earlierInputsDigest(latest: Receipt | null, observation: Observation): string | null {
  if (latest === null || latest.evidence.mode === 'traced') return null;
  if (!observation.healthy || observation.problems.length > 0) return null;
  const digest = observation.manifest.digest;
  return digest !== '' && digest !== latest.manifestDigest ? digest : null;
}

/**
 * decide(), where an earlier receipt may answer for a state seen before: after an edit and its
 * revert, the newest receipt whose inputs digest is the observed one answers when it is CURRENT
 * on its own (same definition and context too, nothing moved while it ran), PASS or FAIL as it
 * recorded. Newest first, so a newer FAIL on the same inputs wins over an older PASS. `earlier`
 * is that receipt as the store gave it for earlierInputsDigest(); anything else is ignored.
 */
export function decideWithEarlier(
  definition: CheckDefinition,
  observed: ObservedContext,
  observation: Observation,
  latest: Receipt | null,
  earlier: Receipt | null,
): CheckStatus {
  const status = decide(definition, observed, observation, latest);
  if (status.freshness !== 'STALE' || earlier === null || latest === null) return status;
  const digest = earlierInputsDigest(latest, observation);
  if (digest === null || earlier.manifestDigest !== digest || earlier.check !== latest.check || earlier.evidence.mode === 'traced') return status;
  const answer = decide(definition, observed, observation, earlier);
  return answer.freshness === 'CURRENT' ? answer : status;
}

/** An earlier traced receipt, with a look at its own evidence now (taken only if needed: it re-reads every path its run touched). */
export interface EarlierTraced {
  receipt: Receipt;
  observe: () => Observation;
}

/** The definition and context digests a receipt must have been made on to be CURRENT now. */
export function currentDigests(definition: CheckDefinition, observed: ObservedContext): { definitionDigest: string; contextDigest: string } {
  return { definitionDigest: definitionDigest(definition), contextDigest: contextDigest(observed.context) };
}

/**
 * decideWithEarlier() for traced receipts. A traced receipt is bound to exactly what its run
 * touched, so after an edit and its revert the latest receipt is STALE while an earlier one,
 * whose evidence is all as its run left it, says what a rerun would do. Candidates come newest
 * first, one per evidence (store/receipts.ts earlierTracedReceipts); the first whose evidence is
 * unchanged decides: its answer if CURRENT, else the latest's STALE (a newer receipt on the same
 * evidence that moved while it ran is not passed over for an older one). Any doubt about the
 * latest (UNVERIFIED) stands.
 */
export function decideWithEarlierTraced(
  definition: CheckDefinition,
  observed: ObservedContext,
  status: CheckStatus,
  latest: Receipt | null,
  candidates: Iterable<EarlierTraced>,
): CheckStatus {
  if (status.freshness !== 'STALE' || latest === null || latest.evidence.mode !== 'traced') return status;
  const now = currentDigests(definition, observed);
  for (const candidate of candidates) {
    const receipt = candidate.receipt;
    if (receipt.check !== latest.check || receipt.evidence.mode !== 'traced' || receipt.definitionDigest !== now.definitionDigest || receipt.contextDigest !== now.contextDigest) continue;
    const observation = candidate.observe();
    if (!observation.healthy || observation.problems.length > 0) return status;
    if (observation.manifest.digest !== receipt.manifestDigest) continue;
    const answer = decide(definition, observed, observation, receipt);
    return answer.freshness === 'CURRENT' ? answer : status;
  }
  return status;
}

/** An earlier traced receipt, and how the observer found its evidence after its barrier. */
export interface EarlierTracedLook {
  receipt: Receipt;
  evidence: 'unchanged' | 'changed' | 'doubt';
}

/**
 * The decision on an observer's answer: `earlier` as decideWithEarlier takes it (a declared
 * receipt made on the observed inputs digest), and for a traced latest receipt the earlier
 * traced receipts the observer looked at (observer/observerService.ts), each look standing for
 * that receipt's observation, as a direct status makes it (api/scan.ts).
 */
export function decideObserved(
  definition: CheckDefinition,
  observed: ObservedContext,
  inputs: Observation,
  latest: Receipt | null,
  earlier: Receipt | null,
  looks: readonly EarlierTracedLook[] = [],
): CheckStatus {
  const status = decideWithEarlier(definition, observed, inputs, latest, earlier);
  return decideWithEarlierTraced(
    definition,
    observed,
    status,
    latest,
    looks.map((look) => ({ receipt: look.receipt, observe: () => lookedAt(look, inputs.source) })),
  );
}

function lookedAt(look: EarlierTracedLook, source: Observation['source']): Observation {
  const doubts = look.evidence === 'doubt' ? [reason('observation-unhealthy', `the evidence of run ${look.receipt.runId} could not be looked at`)] : [];
  // 'changed': any digest but the receipt's; a digest is never empty.
  return { manifest: { digest: look.evidence === 'unchanged' ? look.receipt.manifestDigest : '', entries: [] }, problems: doubts, healthy: true, source, sourceIdentities: new Map() };
}
