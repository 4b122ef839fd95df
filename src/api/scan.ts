import { currentDigests, decideWithEarlier, decideWithEarlierTraced, earlierInputsDigest, type CheckStatus } from '../core/decide.js';
import type { CheckDefinition } from '../core/definition.js';
import type { ObservedContext, Observation } from '../core/observation.js';
import type { Receipt } from '../core/receipt.js';
import { planCheck } from '../exec/checkPlan.js';
import { AnswerLooks } from '../fs/answerLooks.js';
import { earlierTracedCandidates, lookingAtAll, observationFor } from '../fs/verifyEvidence.js';
import { InputScanner } from '../fs/inputScanner.js';
import { startScans, type StartedScans } from '../fs/startedScans.js';
import { diskFullNotice, noteOnce } from '../store/diskFull.js';
import { readConsistently } from '../store/openStore.js';
import { earlierTracedReceipts, latestReceipt, latestReceiptForInputs, loadEvidence } from '../store/receipts.js';
import { saveStatCache } from '../store/statCacheTable.js';
import { scriptsFor, type Project } from './project.js';
import { withSession, type Session } from './session.js';

export interface CheckObservation {
  definition: CheckDefinition;
  observed: ObservedContext;
  inputs: Observation;
}

/**
 * Observes each check's context and inputs now, sharing one scan between them. With the
 * checks' latest receipts, a traced receipt is compared with its evidence looked at again,
 * and the declared inputs are scanned only for the checks that need them.
 */
export function observeChecks(
  project: Project,
  session: Session,
  definitions: CheckDefinition[],
  env: NodeJS.ProcessEnv,
  scans: StartedScans = startScans(project, definitions),
  receipts: readonly (Receipt | null)[] = [],
  looks: AnswerLooks = new AnswerLooks(),
): CheckObservation[] {
  const verify = looks.remembering(lookingAtAll(project.root, session.statCache));
  let made: InputScanner | undefined;
  const scanner = () => (made ??= new InputScanner(project.root, project.excluded, session.statCache, scans.installed, scans.sources));
  const declared = (definition: CheckDefinition) => () => scanner().observe(definition);
  const observations = definitions.map((definition, index) => ({
    definition,
    observed: planCheck({ root: project.root, definition, scripts: scriptsFor(project, definition), splitScript: project.splitScript, env, envKey: session.envKey }).observed,
    inputs: observationFor(project.root, (digest) => loadEvidence(session.db, digest), session.statCache, receipts[index] ?? null, declared(definition), () => scanner().trustProblems(), 'scan', verify),
  }));
  if (!saveStatCache(session.db, session.statCache)) noteOnce(session.notices, diskFullNotice(session.stateDir));
  return observations;
}

/** Status by looking at the inputs directly: the store, the stat cache and a scan, all in this process. */
export async function scanStatus(
  project: Project,
  definitions: CheckDefinition[],
  env: NodeJS.ProcessEnv,
  scans: StartedScans = startScans(project, definitions),
): Promise<{ checks: CheckStatus[]; observedAt: number; durationMs: number; notices: string[] }> {
  const started = Date.now();
  return withSession(project, async (session) => {
    // All from one file: a damaged page found at the third check must not leave the first two
    // answered from the damaged store.
    const receipts = readConsistently(session.db, () => definitions.map((definition) => latestReceipt(session.db, definition.name)));
    const looks = new AnswerLooks();
    const observations = observeChecks(project, session, definitions, env, scans, receipts, looks);
    // Inputs seen before: the newest receipt made on them may answer (core/decide.ts).
    const earlier = readConsistently(session.db, () =>
      observations.map(({ definition, inputs }, index) => {
        const digest = earlierInputsDigest(receipts[index] ?? null, inputs);
        return digest === null ? null : latestReceiptForInputs(session.db, definition.name, digest);
      }),
    );
    const checks = observations.map(({ definition, observed, inputs }, index) => {
      const latest = receipts[index] ?? null;
      const status = decideWithEarlier(definition, observed, inputs, latest, earlier[index] ?? null);
      // A traced receipt's earlier ones are each looked at against their own evidence, only when the latest is STALE.
      const candidates = earlierTracedCandidates(project.root, (digest) => loadEvidence(session.db, digest), session.statCache, () =>
        latest === null ? [] : readConsistently(session.db, () => earlierTracedReceipts(session.db, latest, currentDigests(definition, observed))),
        'scan',
        looks,
      );
      return decideWithEarlierTraced(definition, observed, status, latest, candidates);
    });
    return { checks, observedAt: started, durationMs: Date.now() - started, notices: session.notices };
  }, env);
}

