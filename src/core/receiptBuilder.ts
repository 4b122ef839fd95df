import { constants } from 'node:os';
import { contextDigest, type CheckContext } from './context.js';
import { definitionDigest, type CheckDefinition } from './definition.js';
import { diffManifest } from './diff.js';
import { changedSince } from './identity.js';
import { manifestSize } from './manifest.js';
import type { Observation, ObservedContext } from './observation.js';
import { reason, type Reason } from './reason.js';
import { DECLARED_EVIDENCE, type CheckResult, type Receipt, type ReceiptEvidence } from './receipt.js';

/** How the check's process ended, as the spawn reports it. */
export interface RunEnd {
  /** null when a signal ended it. */
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** A signal that reached vouch and was forwarded to the check. */
  interruptedBy: NodeJS.Signals | null;
  /** Why the log could not be written in full, or null. */
  logFailure: string | null;
}

/** Everything that happened in one run, as runCheck saw it: the receipt is made of nothing else. */
export interface RunRecord {
  runId: string;
  definition: CheckDefinition;
  /** The context planned just before the spawn. */
  contextBefore: CheckContext;
  /** The context planned again just after it, with what could not be established. */
  observedAfter: ObservedContext;
  inputsBefore: ScannedBefore | ObservedBefore;
  /** `writtenSince`: from the observer after the run, the sources written since `askedAt` (then no identities). */
  inputsAfter: Pick<Observation, 'manifest' | 'sourceIdentities' | 'problems'> & { writtenSince?: readonly string[] };
  end: RunEnd;
  startedAt: number;
  finishedAt: number;
  /** The log's path, relative to the state dir. */
  logPath: string;
  /** How much of a log that could not be written is kept. */
  logKeptBytes: number;
  /** A traced check's run: its evidence, or why the declared inputs stand in for it. Absent for a declared check. */
  traced?: TracedRecord;
}

/** The inputs as a scan saw them just before the spawn. */
export type ScannedBefore = Pick<Observation, 'manifest' | 'sourceIdentities'>;

/**
 * The inputs as the observer answered for them before the spawn: their manifest's digest, and
 * when vouch asked (epoch ms). Its answer came after a barrier, so it holds every write made
 * before `askedAt`; a source written since carries a later ctime.
 */
export interface ObservedBefore {
  digest: string;
  askedAt: number;
}

/**
 * What tracing gave. 'traced': the run's evidence entries, fingerprinted after it ended
 * (fs/runEvidence.ts), the paths that moved under it while it ran, and notes for the receipt.
 * 'fallback': the run could not be traced, or its trace was incomplete; the declared inputs
 * are its evidence, and the note says why.
 */
export type TracedRecord =
  | { kind: 'traced'; digest: string; count: number; changedDuringRun: string[]; notes: Reason[] }
  | { kind: 'fallback'; note: Reason };

export interface BuiltReceipt {
  receipt: Receipt;
  /** What vouch exits with for this check: the check's own code, or 128 + the signal's number. */
  exitCode: number;
}

/** At most this many changed paths are named in a reason; the rest are counted. */
export const MAX_LISTED_PATHS = 5;

/**
 * The exit code a run answers with. A signal, whether it ended the check or
 * interrupted vouch, gives 128 + its number, as shells report it
 * (https://www.gnu.org/software/bash/manual/html_node/Exit-Status.html): an
 * interrupted run never passes, even when the check caught the signal and exited 0.
 */
export function runExitCode(end: Pick<RunEnd, 'exitCode' | 'signal' | 'interruptedBy'>): number {
  const signal = end.signal ?? end.interruptedBy;
  return signal ? 128 + (constants.signals[signal] ?? 0) : (end.exitCode ?? 1);
}

/**
 * The paths whose entries differ between the two observations, or whose sources were written in
 * between. Against an observer's answer (no entries, no identities): every source whose ctime is
 * not before the moment vouch asked, and, when the digests differ with no such source (a file
 * only added or removed), UNNAMED_CHANGE.
 */
export function changedDuringRun(before: RunRecord['inputsBefore'], after: RunRecord['inputsAfter']): string[] {
  if ('askedAt' in before) {
    const sinceNs = BigInt(before.askedAt) * 1_000_000n;
    const written: string[] = after.writtenSince ? [...after.writtenSince] : [];
    if (!after.writtenSince) for (const [path, identity] of after.sourceIdentities) if (changedSince(identity, sinceNs)) written.push(path);
    return written.length === 0 && before.digest !== after.manifest.digest ? [UNNAMED_CHANGE] : written.sort();
  }
  // A manifest's digest binds every entry, each line length-prefixed (core/manifest.ts): the same
  // digest is the same entries, and none of them is made or compared. That is the usual run, and
  // at tens of thousands of inputs the entries cost more than the rest of the receipt.
  const same = before.manifest.digest !== '' && before.manifest.digest === after.manifest.digest;
  return [
    ...new Set([
      ...(same ? [] : diffManifest(before.manifest.entries, after.manifest.entries).map((change) => change.path)),
      ...rewrittenSources(before.sourceIdentities, after.sourceIdentities),
    ]),
  ];
}

/** Stands for inputs added or removed during a run that an observer's digest, not a scan, saw before. */
export const UNNAMED_CHANGE = 'an input added or removed';

/**
 * Turns what happened in a run into its receipt. A receipt is reusable only if
 * nothing it is bound to moved while the check ran, and nothing was left
 * unobserved or unwritten; the reasons say which.
 */
export function buildReceipt(run: RunRecord): BuiltReceipt {
  const { definition, end, observedAfter, inputsAfter } = run;
  const traced = run.traced?.kind === 'traced' ? run.traced : null;
  // A traced receipt is bound to what the run touched: the declared inputs' problems and moves are not its own.
  const reasons: Reason[] = traced ? [...observedAfter.problems] : [...inputsAfter.problems, ...observedAfter.problems];
  const changed = traced ? traced.changedDuringRun : changedDuringRun(run.inputsBefore, inputsAfter);
  if (changed.length > 0) {
    const listed = changed.slice(0, MAX_LISTED_PATHS).join(', ');
    const more = changed.length > MAX_LISTED_PATHS ? ` and ${changed.length - MAX_LISTED_PATHS} more` : '';
    reasons.push(reason('inputs-changed-during-run', `inputs changed while the check ran: ${listed}${more}`));
  }
  if (contextDigest(run.contextBefore) !== contextDigest(observedAfter.context)) {
    reasons.push(reason('inputs-changed-during-run', 'the tools or environment changed while the check ran'));
  }
  if (end.interruptedBy) reasons.push(reason('interrupted', `interrupted by ${end.interruptedBy}`));
  if (end.logFailure) {
    reasons.push(
      reason(
        'log-not-written',
        `the log could not be written (${end.logFailure}) and keeps at most its first ${run.logKeptBytes / 1024} KiB; free space where the state dir is, and run the check again`,
      ),
    );
  }

  const signal = end.signal ?? end.interruptedBy;
  const exitCode = runExitCode(end);
  const result: CheckResult = exitCode === 0 ? 'PASS' : 'FAIL';
  if (result === 'FAIL') {
    reasons.unshift(reason('failed', signal ? `stopped by ${signal}` : `exited with code ${exitCode}`));
  }
  const receipt: Receipt = {
    runId: run.runId,
    check: definition.name,
    definition,
    definitionDigest: definitionDigest(definition),
    context: observedAfter.context,
    contextDigest: contextDigest(observedAfter.context),
    manifestDigest: traced ? traced.digest : inputsAfter.manifest.digest,
    inputCount: traced ? traced.count : manifestSize(inputsAfter.manifest),
    result,
    exitCode: end.signal ? null : (end.exitCode ?? exitCode),
    signal: end.signal,
    startedAt: run.startedAt,
    finishedAt: run.finishedAt,
    durationMs: run.finishedAt - run.startedAt,
    logPath: run.logPath,
    reuseEligible: reasons.length === 0,
    reasons,
    evidence: evidenceOf(run.traced),
  };
  return { receipt, exitCode };
}

function evidenceOf(traced: TracedRecord | undefined): ReceiptEvidence {
  if (traced === undefined) return DECLARED_EVIDENCE;
  return traced.kind === 'traced' ? { mode: 'traced', notes: traced.notes } : { mode: 'declared', notes: [traced.note] };
}

/** Sources whose bytes match before and after, but that were written in between: the check may have read anything. */
function rewrittenSources(before: ReadonlyMap<string, string>, after: ReadonlyMap<string, string>): string[] {
  const paths: string[] = [];
  for (const [path, identity] of after) {
    const old = before.get(path);
    if (old !== undefined && old !== identity) paths.push(path);
  }
  return paths;
}
