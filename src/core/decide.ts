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
