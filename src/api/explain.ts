import type { InstalledCounts } from '../core/changeSummary.js';
import { evidencePerPackage } from '../core/changeSummary.js';
import { currentDigests, decide, decideWithEarlier, decideWithEarlierTraced, earlierInputsDigest, type CheckStatus } from '../core/decide.js';
import type { CheckDefinition } from '../core/definition.js';
import { diffContext, diffDefinition, diffManifest, type InputChange, type ValueChange } from '../core/diff.js';
import type { EvidenceChange } from '../core/evidence.js';
import { countBy, installedBucketOf } from '../core/inputGroups.js';
import type { InputEntry } from '../core/manifest.js';
import type { Reason } from '../core/reason.js';
import type { Receipt } from '../core/receipt.js';
import { planCheck } from '../exec/checkPlan.js';
import { InputScanner } from '../fs/inputScanner.js';
import { earlierTracedCandidates, evidenceObservation, observationFor, verifyEvidence } from '../fs/verifyEvidence.js';
import { diskFullNotice, noteOnce } from '../store/diskFull.js';
import { readConsistently } from '../store/openStore.js';
import { earlierTracedReceipts, loadEvidence, loadManifest, latestReceipt, latestReceiptForInputs } from '../store/receipts.js';
import { saveStatCache } from '../store/statCacheTable.js';
import { askObserver, type ObserverUse } from './askObserver.js';
import { scriptsFor, selectCheck, type Project } from './project.js';
import { withSession, type Session } from './session.js';
import { observeChecks } from './scan.js';

/** How the receipt's inputs were found, its notes, and (traced) which of its evidence entries differ now. */
export interface ExplainedEvidence {
  mode: Receipt['evidence']['mode'];
  /** trace-unavailable, trace-incomplete, read-outside-inputs: how the receipt was made. */
  notes: Reason[];
  /** A traced receipt's entries that differ now, in path order; empty for a declared receipt (inputChanges has its changes). */
  changes: EvidenceChange[];
  /** The receipt's evidence entries per installed package, for summarising many changes; counted on the first call. */
  entriesPerPackage: () => ReadonlyMap<string, number>;
}

export interface Explanation {
  status: CheckStatus;
  definitionChanges: ValueChange[];
  contextChanges: ValueChange[];
  inputChanges: InputChange[];
  /** Installed files per package in the receipt and now, for summarising installed changes; counted on the first call; empty without a receipt. */
  installedCounts: () => InstalledCounts;
  /** Null without a receipt. */
  evidence: ExplainedEvidence | null;
  notices: string[];
}

function installedCounts(entries: readonly InputEntry[]): Map<string, number> {
  return countBy(
    entries.flatMap((entry) => (entry.origin === 'installed' ? [entry.path] : [])),
    installedBucketOf,
  );
}

const NO_COUNTS = (): InstalledCounts => ({ before: new Map(), after: new Map() });

/** What changed since the latest receipt: inputs, context and definition, each in detail. */
export async function explain(project: Project, name: string, env: NodeJS.ProcessEnv, observer: ObserverUse = 'auto'): Promise<Explanation> {
  const definition = await selectCheck(project, name);
  return withSession(project, async (session) => {
    // A traced receipt is checked against what its run touched, not against the declared globs:
    // neither the observer nor a scan of the globs says anything about it.
    const latest = readConsistently(session.db, () => latestReceipt(session.db, definition.name));
    const traced = latest?.evidence.mode === 'traced' ? explainTraced(project, session, definition, env) : null;
    if (traced) return traced;
    const notices: string[] = [];
    const asked = observer === 'auto' ? await askObserver(project, [definition], env, 'sync', notices, { entries: true }) : null;
    session.notices.push(...notices);
    const [now] = asked ? asked.checks : observeChecks(project, session, [definition], env);
    if (!now) throw new Error('unreachable: one observation per check');
    // The receipt and its manifest from one file: a damaged manifest page found after the
    // receipt was read must not leave that receipt deciding the answer.
    // Inputs seen before are explained against the receipt that answers for them, as status finds it.
    const { latest: found, status, recorded } = readConsistently(session.db, () => {
      const last = latestReceipt(session.db, definition.name);
      const declared = last?.evidence.mode === 'traced' ? null : last;
      const digest = earlierInputsDigest(declared, now.inputs);
      const decided = decideWithEarlier(definition, now.observed, now.inputs, declared, digest === null ? null : latestReceiptForInputs(session.db, definition.name, digest));
      const answering = decided.receipt;
      return { latest: last, status: decided, recorded: answering === null ? null : loadManifest(session.db, answering.manifestDigest) };
    });
    // A traced receipt recorded since the first look: explained as traced (unless a damaged store
    // was set aside meanwhile, and then there is no receipt).
    const since = found?.evidence.mode === 'traced' ? explainTraced(project, session, definition, env) : null;
    if (since) return since;
    const receipt = found?.evidence.mode === 'traced' ? found : status.receipt;
    if (receipt === null || receipt.evidence.mode === 'traced') {
      return { status, definitionChanges: [], contextChanges: [], inputChanges: [], installedCounts: NO_COUNTS, evidence: null, notices: session.notices };
    }
    const current = now.inputs.manifest.entries;
    // Without the receipt's own list, every input now would read as added: say it is not known instead.
    if (recorded === null) session.notices.push(`the input manifest of run ${receipt.runId} could not be read: which inputs changed since is not known`);
    const before = recorded ?? [];
    let counts: InstalledCounts | undefined;
    return {
      status,
      definitionChanges: diffDefinition(receipt.definition, definition),
      contextChanges: diffContext(receipt.context, now.observed.context),
      inputChanges: recorded === null ? [] : diffManifest(before, current),
      installedCounts: () => (counts ??= { before: installedCounts(before), after: installedCounts(current) }),
      evidence: { mode: receipt.evidence.mode, notes: receipt.evidence.notes, changes: [], entriesPerPackage: () => new Map() },
      notices: session.notices,
    };
  }, env);
}

/**
 * A traced receipt: its evidence entries looked at again (fs/verifyEvidence.ts), through the
 * session's stat cache, so that an unchanged file is not read again. Null when the latest
 * receipt is no longer a traced one: a damaged store set aside since it was read.
 */
function explainTraced(project: Project, session: Session, definition: CheckDefinition, env: NodeJS.ProcessEnv): Explanation | null {
  const { receipt, recorded } = readConsistently(session.db, () => {
    const found = latestReceipt(session.db, definition.name);
    return { receipt: found, recorded: found === null ? null : loadEvidence(session.db, found.manifestDigest) };
  });
  if (receipt?.evidence.mode !== 'traced') return null;
  const { observed } = planCheck({ root: project.root, definition, scripts: scriptsFor(project, definition), splitScript: project.splitScript, env, envKey: session.envKey });
  const base = {
    definitionChanges: diffDefinition(receipt.definition, definition),
    contextChanges: diffContext(receipt.context, observed.context),
    inputChanges: [],
    installedCounts: NO_COUNTS,
    notices: session.notices,
  };
  const notes = receipt.evidence.notes;
  // A state dir git lists may hold a forged receipt whose evidence names any path: it is not
  // looked at, exactly as status does not (fs/verifyEvidence.ts's observationFor).
  const distrust = new InputScanner(project.root, project.excluded, session.statCache).trustProblems();
  if (recorded === null && distrust.length === 0) session.notices.push(`the evidence of run ${receipt.runId} could not be read: which inputs changed since is not known`);
  if (recorded === null || distrust.length > 0) {
    // Nothing to look at: the answer status gives (UNVERIFIED), never a CURRENT on no evidence.
    const unlooked = observationFor(
      project.root,
      () => recorded,
      session.statCache,
      receipt,
      () => {
        throw new Error('unreachable: a traced receipt is never compared with the declared inputs');
      },
      () => distrust,
    );
    const status = decide(definition, observed, unlooked, receipt);
    return { ...base, status, evidence: { mode: 'traced', notes, changes: [], entriesPerPackage: () => new Map() } };
  }
  const verified = verifyEvidence(project.root, recorded, session.statCache);
  const latestStatus = decide(definition, observed, evidenceObservation(verified), receipt);
  // After an edit and its revert an earlier receipt may answer, as status finds it (api/scan.ts): it is then the one explained.
  const candidates = earlierTracedCandidates(project.root, (digest) => loadEvidence(session.db, digest), session.statCache, () =>
    readConsistently(session.db, () => earlierTracedReceipts(session.db, receipt, currentDigests(definition, observed))),
  );
  const status = decideWithEarlierTraced(definition, observed, latestStatus, receipt, candidates);
  if (!saveStatCache(session.db, session.statCache)) noteOnce(session.notices, diskFullNotice(session.stateDir));
  const answering = status.receipt;
  if (answering !== null && answering !== receipt) {
    let earlierPerPackage: Map<string, number> | undefined;
    const evidence = () => (earlierPerPackage ??= evidencePerPackage(readConsistently(session.db, () => loadEvidence(session.db, answering.manifestDigest)) ?? []));
    return { ...base, definitionChanges: [], contextChanges: [], status, evidence: { mode: 'traced', notes: answering.evidence.notes, changes: [], entriesPerPackage: evidence } };
  }
  let perPackage: Map<string, number> | undefined;
  return { ...base, status, evidence: { mode: 'traced', notes, changes: verified.changes, entriesPerPackage: () => (perPackage ??= evidencePerPackage(recorded)) } };
}
