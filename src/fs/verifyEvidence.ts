import { realpathSync } from 'node:fs';
import { describeEvidenceChange, diffEvidence, evidenceOf, type EvidenceChange, type EvidenceEntry } from '../core/evidence.js';
import { nowNs } from '../core/identity.js';
import type { Observation } from '../core/observation.js';
import type { EarlierTraced } from '../core/decide.js';
import type { Receipt } from '../core/receipt.js';
import { reason, type Reason } from '../core/reason.js';
import type { StatCache } from '../core/statCache.js';
import { CHANGING, EvidenceLooker } from './evidenceLook.js';
import { startPathStats } from './nativeTreeScan.js';
import { AnswerLooks, statDigest } from './answerLooks.js';

export interface VerifiedEvidence {
  /** The receipt's entries as they are now, in its order. */
  entries: EvidenceEntry[];
  digest: string;
  /** Entries that differ from the receipt's. */
  changes: EvidenceChange[];
  problems: Reason[];
}

/**
 * Looks again at every path a traced receipt's run touched, as the run used it: the answer to
 * "is what it read still what it read?". Nothing else about the tree matters to the receipt.
 */
export function verifyEvidence(root: string, recorded: readonly EvidenceEntry[], statCache: StatCache, expectedDigest?: string): VerifiedEvidence {
  const realRoot = realpathSync.native(root);
  const looker = new EvidenceLooker(realRoot, statCache, nowNs());
  const known = knownFiles(realRoot, recorded, statCache);
  const entries = recorded.map((entry, index) => known.get(index) ?? lookAgain(looker, entry));
  return verifiedOf(recorded, entries, expectedDigest);
}

/** verifyEvidence as a look that observationFor takes: every entry looked at again. */
export function lookingAtAll(root: string, statCache: StatCache): (recorded: readonly EvidenceEntry[], expectedDigest: string) => VerifiedEvidence {
  return (recorded, expectedDigest) => verifyEvidence(root, recorded, statCache, expectedDigest);
}

/** One recorded entry looked at again, as its run used the path. */
export function lookAgain(looker: EvidenceLooker, entry: EvidenceEntry): EvidenceEntry {
  return looker.look(entry.path, entry.use, entry.own === true, statDigest(entry), entry.executable !== undefined, entry.names).entry;
}

/** The recorded entries' looks (`entries`, in the same order) as a verdict: their digest, what changed, and files still being written. */
export function verifiedOf(recorded: readonly EvidenceEntry[], entries: EvidenceEntry[], expectedDigest?: string, digest = evidenceOf(entries).digest): VerifiedEvidence {
  const problems: Reason[] = [];
  const changing = entries.filter((entry) => entry.type === 'error' && entry.digest === CHANGING);
  if (changing.length > 0) {
    problems.push(reason('input-changing', `${changing[0]!.path}${changing.length > 1 ? ` and ${changing.length - 1} more` : ''} kept changing while vouch read it; run again once writes have finished`));
  }
  // The same digest is the same entries: nothing to name.
  return { entries, digest, changes: digest === expectedDigest ? [] : diffEvidence(recorded, entries), problems };
}

/**
 * The files read that are still regular files with the identity the stat cache holds them by,
 * found in bulk: lstat'ed on the native addon's threads and matched against the cache in one
 * merge. The rest (links, directories, lookups, a changed file, or no addon) are looked at one by
 * one. Each found entry is what look() would make.
 * `among`: only these indexes (all by default); `identities`, when given, gets each found file's
 * identity (core/identity.ts identityOf).
 */
export function knownFiles(realRoot: string, recorded: readonly EvidenceEntry[], statCache: StatCache, among?: Iterable<number>, identities?: Map<number, string>): Map<number, EvidenceEntry> {
  const known = new Map<number, EvidenceEntry>();
  // Inside the root, relative to it; outside it (a tool's own files), relative to '/'.
  const inside: number[] = [];
  const outside: number[] = [];
  for (const index of among ?? recorded.keys()) {
    const entry = recorded[index]!;
    if (entry.use === 'read' && entry.type === 'file' && entry.link === undefined && entry.executable === undefined && !entry.path.includes('\0')) (entry.path.startsWith('/') ? outside : inside).push(index);
  }
  const started = [
    { indexes: inside, stats: inside.length > 0 ? startPathStats(realRoot, inside.map((index) => recorded[index]!.path)) : null },
    { indexes: outside, stats: outside.length > 0 ? startPathStats('/', outside.map((index) => recorded[index]!.path.slice(1))) : null },
  ];
  for (const { indexes, stats: pending } of started) {
    const stats = pending?.finish();
    if (!stats) continue;
    const digests = statCache.digestsFor(
      indexes.map((index) => recorded[index]!.path),
      stats.identities,
    );
    for (let at = 0; at < indexes.length; at++) {
      const digest = digests[at];
      if (digest === undefined) continue;
      const entry = recorded[indexes[at]!]!;
      identities?.set(indexes[at]!, stats.identities[at]!);
      known.set(indexes[at]!, entry.own ? { path: entry.path, use: 'read', own: true, type: 'file', digest } : { path: entry.path, use: 'read', type: 'file', digest });
    }
  }
  return known;
}

/** A traced receipt's evidence, looked at again, as an observation decide() compares with the receipt. */
export function evidenceObservation(verified: VerifiedEvidence, source: Observation['source'] = 'scan'): Observation {
  return {
    // The entries are the evidence's, not input entries: nothing reads them as a manifest.
    manifest: { digest: verified.digest, entries: [] },
    problems: verified.problems,
    healthy: true,
    source,
    sourceIdentities: new Map(),
    changedEvidence: verified.changes.map(describeEvidenceChange),
  };
}

/**
 * What a receipt is compared with. A traced receipt is bound to what its run touched, so the
 * observation is its evidence looked at again, whatever the declared inputs match; a declared
 * receipt (or none) is compared with the declared inputs, observed by the caller only if needed.
 */
export function observationFor(
  root: string,
  loadEvidence: (digest: string) => EvidenceEntry[] | null,
  statCache: StatCache,
  receipt: Receipt | null,
  declared: () => Observation,
  /** Why no receipt can be trusted here (a state dir git lists): its evidence, which may be forged and name any path, is then not looked at. */
  trustProblems: () => Reason[],
  source: Observation['source'] = 'scan',
  /** How the evidence is looked at again: all of it, unless the caller knows what changed since its last look (observer/keptEvidence.ts). */
  verify: (recorded: readonly EvidenceEntry[], expectedDigest: string) => VerifiedEvidence = lookingAtAll(root, statCache),
): Observation {
  if (receipt?.evidence.mode !== 'traced') return declared();
  const distrust = trustProblems();
  if (distrust.length > 0) return { manifest: { digest: '', entries: [] }, problems: distrust, healthy: true, source, sourceIdentities: new Map() };
  const entries = loadEvidence(receipt.manifestDigest);
  if (entries === null) {
    return {
      manifest: { digest: '', entries: [] },
      problems: [reason('observation-unhealthy', `the evidence of run ${receipt.runId} is missing from the store; run "vouch run ${receipt.check}" again`)],
      healthy: true,
      source,
      sourceIdentities: new Map(),
    };
  }
  return evidenceObservation(verify(entries, receipt.manifestDigest), source);
}

/**
 * Earlier traced receipts as core/decide.ts decideWithEarlierTraced takes them, lazily: `find`
 * is asked only when a candidate is wanted, and each one's evidence is looked at again only
 * when decide gets to it. Trust was settled by the latest receipt's look (a state dir git lists
 * makes it UNVERIFIED, and no earlier receipt is then asked for).
 */
export function* earlierTracedCandidates(
  root: string,
  loadEvidence: (digest: string) => EvidenceEntry[] | null,
  statCache: StatCache,
  find: () => Receipt[],
  source: Observation['source'] = 'scan',
  /** The looks this answer made already (the latest receipt's among them): a receipt they show changed is not looked at. */
  looks: AnswerLooks = new AnswerLooks(),
): Generator<EarlierTraced> {
  const verify = looks.remembering(lookingAtAll(root, statCache));
  for (const receipt of find()) {
    yield {
      receipt,
      observe: () => {
        const recorded = loadEvidence(receipt.manifestDigest);
        if (recorded !== null && looks.changed(recorded)) return changedEvidence(source);
        return observationFor(root, () => recorded, statCache, receipt, notDeclared, () => [], source, verify);
      },
    };
  }
}

/** A traced receipt's evidence found changed without a look at all of it: any digest but the receipt's, which is never empty. */
export function changedEvidence(source: Observation['source']): Observation {
  return { manifest: { digest: '', entries: [] }, problems: [], healthy: true, source, sourceIdentities: new Map() };
}

function notDeclared(): Observation {
  throw new Error('unreachable: a traced receipt is never compared with the declared inputs');
}
