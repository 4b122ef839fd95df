import { join, relative } from 'node:path';
import type Database from 'better-sqlite3';
import { currentDigests, decideObserved, decideWithEarlier, decideWithEarlierTraced, earlierInputsDigest, type CheckStatus, type EarlierTracedLook } from '../core/decide.js';
import type { CheckDefinition } from '../core/definition.js';
import type { Observation, ObservedContext } from '../core/observation.js';
import { manifestLines } from '../core/manifest.js';
import type { Receipt } from '../core/receipt.js';
import type { MemoryStatCache } from '../core/statCache.js';
import type { StartedScans } from '../fs/startedScans.js';
import { isVouchError, VouchError } from '../core/errors.js';
import { DISK_FULL_EXIT, diskFull, isDiskFull } from '../store/diskFull.js';
import { ensureStateDir, notWritable } from '../store/stateDir.js';
import { planCheck } from './checkPlan.js';
import { acquireRunLock, runLockHeld, type LockHolder } from './runLock.js';
import { newRunId } from './runId.js';
import { emptyRunLog, LOG_KEPT_BYTES, openRunLog, type RunLog } from './runLog.js';
import type { Output } from '../core/output.js';
import type { CommandSplitter } from '../core/scriptContext.js';
import type { EvidenceEntry } from '../core/evidence.js';
import type { ObservedBefore, RunRecord, TracedRecord } from '../core/receiptBuilder.js';
import type { TracePlan } from './traceRun.js';
import type { CheckSpawner } from './spawnCheck.js';

export interface RunRequest {
  root: string;
  stateDir: string;
  excluded: string[];
  definition: CheckDefinition;
  scripts: Record<string, string> | null;
  splitScript: CommandSplitter;
  env: NodeJS.ProcessEnv;
  /** The store, opened on first need: a check the observer finds current is skipped without it. */
  /** `writable` is false when a full disk let the store open only to read (src/store/openStore.ts). */
  session(): Promise<{ db: Database.Database; statCache: MemoryStatCache; envKey: string; writable: boolean }>;
  ifDue: boolean;
  stdout: Output;
  stderr: Output;
  onWait(holder: LockHolder): void;
  onStart(runId: string, argv: string[]): void;
  /**
   * The observer's view of the inputs and the latest receipt, with the context
   * planned against its env key; null to look directly.
   */
  askObserver?(since?: number): Promise<ObserverLook | null>;
  /** Starts the check's process; default spawnCheck, in this process. */
  spawn?: CheckSpawner;
}

/** The observer's answer for the check; after a run (`since`), with what replaces the scan after it. */
export interface ObserverLook {
  inputs: Observation;
  receipt: Receipt | null;
  earlier: Receipt | null;
  earlierTraced: EarlierTracedLook[];
  observed: ObservedContext;
  /** The sources written since `since` (observer/writtenSince.ts). */
  written?: string[];
}

/** A failure of vouch's own after the check ran; it never replaces the check's exit code. */
export interface RunError {
  code: string;
  message: string;
}

export type RunOutcome =
  | { action: 'skipped'; status: CheckStatus; exitCode: 0 }
  | { action: 'ran'; receipt: Receipt; exitCode: number; interrupted: boolean; error: RunError | null };

/**
 * Runs one check and records its receipt: lock, snapshot, spawn, snapshot
 * again, and one transaction. A receipt is reusable only if nothing it is
 * bound to moved while the check ran.
 */
export async function runCheck(request: RunRequest): Promise<RunOutcome> {
  const { definition } = request;
  const plan = (envKey: string) => planCheck({ root: request.root, definition, scripts: request.scripts, splitScript: request.splitScript, env: request.env, envKey });
  // The observer's latest answer, when usable as the inputs before the spawn (usableBefore).
  let answered: ObservedBefore | null = null;
  // Whether the observer's latest answer decided the skip: then nothing decides it again directly.
  let decided = false;
  const ask = async (): Promise<RunOutcome | null> => {
    const askedAt = Date.now();
    const asked = await request.askObserver?.();
    answered = asked ? usableBefore(definition, asked, askedAt) : null;
    decided = asked !== null && asked !== undefined;
    if (!asked || !request.ifDue) return null;
    const status = decideObserved(definition, asked.observed, asked.inputs, asked.receipt, asked.earlier, asked.earlierTraced);
    return status.reuseEligible ? { action: 'skipped', status, exitCode: 0 } : null;
  };
  // Asked before the lock when nobody holds it: taking the lock is a write, and the watcher
  // batches a write's successors, which would hold the observer's barrier up to 50 ms.
  const askedFirst = request.askObserver !== undefined && !runLockHeld(request.stateDir, definition.name);
  if (askedFirst) {
    const skipped = await ask();
    if (skipped) return skipped;
  }
  // Loaded only now: a check the observer finds current is skipped without the scan's code.
  const [
    { InputScanner },
    { startScans },
    { earlierTracedReceipts, insertReceipt, latestReceipt, latestReceiptForInputs, loadEvidence },
    { saveStatCache },
    { buildReceipt },
    { spawnCheck },
    { earlierTracedCandidates, lookingAtAll, observationFor },
    { AnswerLooks },
  ] = await Promise.all([
    import('../fs/inputScanner.js'),
    import('../fs/startedScans.js'),
    import('../store/receipts.js'),
    import('../store/statCacheTable.js'),
    import('../core/receiptBuilder.js'),
    import('./spawnCheck.js'),
    import('../fs/verifyEvidence.js'),
    import('../fs/answerLooks.js'),
  ]);
  // Only a traced check loads the tracer.
  const tracing = definition.mode === 'traced' ? await import('./traceRun.js') : null;
  // Its strace runs while the lock is taken, the store opened and the inputs scanned.
  const probed = tracing?.probeTracingSoon();
  const runId = newRunId();
  let waited = false;
  const lock = await acquireRunLock(request.stateDir, { runId, check: definition.name, startedAt: Date.now() }, (holder) => {
    waited = true;
    request.onWait(holder);
  });
  try {
    // Again under the lock when another run held it: that run may have made this one unnecessary.
    if (request.askObserver !== undefined && (!askedFirst || waited)) {
      const skipped = await ask();
      if (skipped) return skipped;
    }
    // With the observer's answer, the inputs before are its digest, and no scan is made before the spawn.
    const observedBefore = answered as ObservedBefore | null;
    // git and the install walks start before the store opens, and run on other threads meanwhile.
    const startedFirst = observedBefore ? null : startScans(request, [definition]);
    const session = await request.session().catch((error: unknown) => {
      throw isDiskFull(error) ? diskFull(request.stateDir, error) : error;
    });
    const { db, envKey, writable } = session;
    // Loaded on first need: a run the observer follows before and after scans nothing, and needs none.
    let loadedCache: MemoryStatCache | null = null;
    const statCache = () => (loadedCache ??= session.statCache);
    const scanner = (scans: StartedScans = startScans(request, [definition])) => new InputScanner(request.root, request.excluded, statCache(), scans.installed, scans.sources);
    const observe = (scans?: StartedScans) => scanner(scans).observe(definition);
    const before = plan(envKey);
    const first = startedFirst ? scanner(startedFirst) : null;
    // Observed only when needed: a traced receipt found current is skipped on its evidence alone.
    let scannedBefore: Observation | undefined;
    const declaredBefore = () => (scannedBefore ??= (first ?? scanner()).observe(definition));
    // Decided here only without the observer's answer, which decided already (ask), even where
    // its inputs cannot stand for the scan before the run (a traced check): a second look could
    // only find the same, or a change since, which runs the check anyway.
    if (request.ifDue && !decided) {
      // Decided under the lock: a run that just finished may have made this one unnecessary.
      const latest = latestReceipt(db, definition.name);
      const looks = new AnswerLooks();
      const verify = looks.remembering(lookingAtAll(request.root, statCache()));
      const inputs = observationFor(request.root, (digest) => loadEvidence(db, digest), statCache(), latest, declaredBefore, () => (first ?? scanner()).trustProblems(), 'scan', verify);
      const digest = earlierInputsDigest(latest, inputs);
      const declared = decideWithEarlier(definition, before.observed, inputs, latest, digest === null ? null : latestReceiptForInputs(db, definition.name, digest));
      const candidates = earlierTracedCandidates(request.root, (found) => loadEvidence(db, found), statCache(), () =>
        latest === null ? [] : earlierTracedReceipts(db, latest, currentDigests(definition, before.observed)),
        'scan',
        looks,
      );
      const status = decideWithEarlierTraced(definition, before.observed, declared, latest, candidates);
      if (status.reuseEligible) {
        saveStatCache(db, statCache());
        return { action: 'skipped', status, exitCode: 0 };
      }
    }

    const inputsBefore = observedBefore ?? declaredBefore();
    // A check run now could leave no receipt: vouch's own error is the answer, before it starts.
    if (!writable) {
      throw new VouchError('disk-full', `the disk holding the state dir ${request.stateDir} is full, so the receipt of a run could not be saved and the check was not started; free space on it, or keep state elsewhere with --state-dir DIR`, DISK_FULL_EXIT);
    }
    // The store may exist without logs/ (restored from elsewhere, or logs removed by hand).
    ensureStateDir(request.stateDir);
    const logPath = join(request.stateDir, 'logs', `${runId}.log`);
    let log: RunLog;
    try {
      log = openRunLog(logPath, request.stateDir);
    } catch (error) {
      // Before the check starts: a link at the log's path, or no room for it, is vouch's own answer.
      throw notWritable(request.stateDir, error);
    }
    let trace: TracePlan | null = null;
    await probed;
    if (tracing && before.executable) {
      try {
        trace = tracing.planTrace(request.stateDir, definition.name, runId, before.executable, before.argv);
      } catch (error) {
        log.close();
        throw notWritable(request.stateDir, error);
      }
    }
    const spawned = trace?.traced ? { executable: trace.argv[0]!, argv: trace.argv } : { executable: before.executable, argv: before.argv };
    if (tracing && trace?.traced) await tracing.settleRoot(request.root);
    request.onStart(runId, before.argv);
    const leftovers: { watch: { stop(): void } | null } = { watch: null };
    const startedAt = Date.now();
    const outcome = spawned.executable
      ? await (request.spawn ?? spawnCheck)({
          executable: spawned.executable,
          argv: spawned.argv,
          cwd: before.cwd,
          env: before.env,
          log,
          logPath,
          stdout: request.stdout,
          stderr: request.stderr,
          onGroup: (pgid) => {
            lock.recordGroup(pgid);
            // The tracer leads the group: its leftovers are ended once the check's own process has.
            if (tracing && trace?.traced) leftovers.watch = tracing.endLeftovers(pgid, trace.logPath, LEFTOVER_GRACE_MS, (count) => log.write(`vouch: ended ${count} process${count === 1 ? '' : 'es'} the check left running: a traced process cannot outlive its trace\n`));
          },
        })
      : missingExecutable(log, before.argv[0] ?? '');
    leftovers.watch?.stop();
    const finishedAt = Date.now();

    const after = plan(envKey);
    // With the observer's answer before, its answer after too, if it gives one as usable: no scan then.
    const followed = observedBefore ? await followRun(request, definition, observedBefore) : null;
    const inputsAfter = followed?.inputs ?? observe();
    let traced: { record: TracedRecord; entries: EvidenceEntry[] | null } | null = null;
    if (trace !== null) {
      traced = trace.traced
        ? await tracing!.finishTrace(trace, { root: request.root, stateDir: request.stateDir, statCache: statCache(), startedAt, env: before.env, declared: inputsAfter.manifest.entries })
        : { record: trace.record, entries: null };
    }
    const { receipt, exitCode } = buildReceipt({
      runId,
      definition,
      contextBefore: before.observed.context,
      observedAfter: after.observed,
      inputsBefore,
      inputsAfter,
      end: outcome,
      startedAt,
      finishedAt,
      logPath: relative(request.stateDir, logPath),
      logKeptBytes: LOG_KEPT_BYTES,
      ...(traced ? { traced: traced.record } : {}),
    });
    // The check has run: from here on its exit code stands, and the report says what vouch could not do.
    let error: RunError | null = null;
    const save = () =>
      insertReceipt(db, receipt, () => {
        if (traced?.entries) return { entries: traced.entries };
        if (!followed) return { lines: manifestLines(inputsAfter.manifest) };
        // The observer stored the manifest, and this store does not hold it (the observer could not
        // write, or the store was kept aside and started afresh meanwhile): a scan now gives the
        // lines, if the inputs still have that digest.
        const scanned = observe();
        if (scanned.manifest.digest !== receipt.manifestDigest) {
          throw new VouchError('manifest-unavailable', 'the store was started afresh while the check ran, and the inputs changed after it, so its manifest could not be made again; run the check again');
        }
        return { lines: manifestLines(scanned.manifest) };
      });
    try {
      save();
    } catch (failure) {
      error = receiptNotSaved(request.stateDir, runId, failure);
      // The receipt is the evidence; a log already cut short gives its last bytes up for it.
      if (isDiskFull(failure) && outcome.logFailure && emptyRunLog(logPath)) {
        try {
          save();
          error = null;
        } catch (again) {
          error = receiptNotSaved(request.stateDir, runId, again);
        }
      }
    }
    try {
      if (loadedCache) saveStatCache(db, loadedCache);
    } catch (failure) {
      // A cache: without it the next scan hashes again. Only a failure that is not a full disk is news.
      if (!isDiskFull(failure)) error ??= vouchFailure(request.stateDir, 'the stat cache was not saved', failure);
    }
    return { action: 'ran', receipt, exitCode, interrupted: outcome.interruptedBy !== null, error };
  } finally {
    lock.release();
  }
}

/**
 * The observer's answer after the run, in place of a scan: the inputs as it sees them after its
 * barrier, with the sources written since vouch asked before the run; the observer stores the
 * manifest. Null, and vouch scans, when it gives no answer usable as one before the run
 * would be, or none about what was written.
 */
async function followRun(request: RunRequest, definition: CheckDefinition, before: ObservedBefore): Promise<{ inputs: RunRecord['inputsAfter'] } | null> {
  const asked = await request.askObserver?.(before.askedAt);
  if (!asked || asked.written === undefined || usableBefore(definition, asked, before.askedAt) === null) return null;
  const { digest, count } = asked.inputs.manifest;
  return {
    inputs: {
      manifest: {
        digest,
        ...(count !== undefined ? { count } : {}),
        get entries(): never {
          throw new Error('unreachable: a run followed by the observer makes no entries of its manifest');
        },
      },
      sourceIdentities: new Map(),
      problems: asked.inputs.problems,
      writtenSince: asked.written,
    },
  };
}

/**
 * The observer's answer as the inputs before the spawn, or null to scan: only for a declared
 * check whose latest receipt is declared too (for a traced one, the observer answers with that
 * receipt's evidence, not the declared inputs), with a digest and no input it could not observe.
 */
function usableBefore(definition: CheckDefinition, asked: { inputs: Observation; receipt: Receipt | null }, askedAt: number): ObservedBefore | null {
  if (definition.mode === 'traced' || asked.receipt?.evidence.mode === 'traced') return null;
  const { inputs } = asked;
  if (inputs.source !== 'observer' || !inputs.healthy || inputs.problems.length > 0 || inputs.manifest.digest === '') return null;
  return { digest: inputs.manifest.digest, askedAt };
}

/** How long a traced check's background processes may outlive its own before they are ended. */
const LEFTOVER_GRACE_MS = 2_000;

function receiptNotSaved(stateDir: string, runId: string, failure: unknown): RunError {
  return vouchFailure(stateDir, `the receipt of run ${runId} was not saved`, failure);
}

function vouchFailure(stateDir: string, what: string, failure: unknown): RunError {
  const known = isDiskFull(failure) ? diskFull(stateDir, failure) : isVouchError(failure) ? failure : null;
  const code = known?.code ?? 'internal';
  const why = known?.message ?? `internal error: ${(failure as Error).message ?? String(failure)}`;
  return { code, message: `${what}: ${why}` };
}

function missingExecutable(log: RunLog, name: string) {
  const message = `"${name}" is not on PATH or in node_modules/.bin; install it, or fix the check's command`;
  log.write(`vouch: ${message}\n`);
  return { exitCode: 127, signal: null, interruptedBy: null, spawnError: message, logFailure: log.close() };
}
