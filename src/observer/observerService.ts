import type { Store } from '../store/openStore.js';
import { readConsistently, reopenIfReplaced, storeGeneration } from '../store/openStore.js';
import { earlierTracedReceipts, latestReceipt, latestReceiptForInputs, loadEvidence, storeManifest } from '../store/receipts.js';
import type { EvidenceEntry } from '../core/evidence.js';
import type { StatCache } from '../core/statCache.js';
import { earlierInputsDigest } from '../core/decide.js';
import { AnswerLooks } from '../fs/answerLooks.js';
import { observationFor } from '../fs/verifyEvidence.js';
import type { Receipt } from '../core/receipt.js';
import { manifestLines, manifestSize } from '../core/manifest.js';
import type { Observation } from '../core/observation.js';
import type { EarlierTracedLook } from '../core/decide.js';
import type { FaultKind, GapCode, GapReason, ObserveParams, ObserveResult, ObservedInputs, ObserverInfo, PingResult } from './protocol.js';
import { PROTOCOL } from './protocol.js';
import { InvalidParams } from './rpcServer.js';
import { keyOf, ObserverBusy, type WarmIndex } from './warmIndex.js';
import { writtenSince } from './writtenSince.js';
import { KeptEvidence } from './keptEvidence.js';
import type { WatchSession } from './watchSession.js';

export interface ObserverServiceOptions {
  root: string;
  version: string;
  build: string;
  socket: string;
  /** When the observer began (ms since the epoch), for its uptime. */
  started: number;
  /** How long the first index took; null until it is ready. */
  readyMs(): number | null;
  /** The environment key every answer carries, the one the CLI computes. */
  envKey: string;
  index: WarmIndex;
  session: WatchSession;
  store: Store;
  /** Shared with the index: a traced receipt's files are hashed once across both. */
  statCache: StatCache;
  log(message: string): void;
}

const ANSWER_DEADLINE_MS = 30_000;

/**
 * What the observer answers over its socket (observe, info, ping and, for
 * tests, fault), from the warm index, the watch session that keeps it honest,
 * and the receipts store. The socket and the process belong to the daemon.
 */
/** Traced receipts whose evidence is kept parsed between answers: one per check is the usual need. */
const KEPT_EVIDENCE = 32;

export class ObserverService {
  /** Evidence entries by digest: a receipt's evidence never changes, and parsing it is most of reading it. */
  private readonly kept = new Map<string, EvidenceEntry[]>();
  /** Each traced receipt's evidence as last looked at: an answer looks again at what events say may have changed. */
  private readonly looks: KeptEvidence;

  constructor(private readonly options: ObserverServiceOptions) {
    this.looks = new KeptEvidence(options.root, options.statCache, options.session.changes, KEPT_EVIDENCE);
  }

  private readonly verify = (recorded: readonly EvidenceEntry[], expectedDigest: string) => this.looks.verify(recorded, expectedDigest);

  private evidence(digest: string): EvidenceEntry[] | null {
    const kept = this.kept.get(digest);
    if (kept) return kept;
    const entries = loadEvidence(this.options.store.db, digest);
    if (entries === null) return null;
    if (this.kept.size >= KEPT_EVIDENCE) this.kept.delete(this.kept.keys().next().value!);
    this.kept.set(digest, entries);
    return entries;
  }

  async ping(): Promise<PingResult> {
    return { protocol: PROTOCOL, version: this.options.version, build: this.options.build, pid: process.pid, ready: this.options.index.ready };
  }

  async info(): Promise<ObserverInfo> {
    const { index, session } = this.options;
    return {
      ...(await this.ping()),
      uptimeMs: Date.now() - this.options.started,
      healthy: index.healthy,
      reasons: index.reasons(),
      watchedPaths: session.watchedPaths(),
      indexFiles: index.files,
      memoryRssBytes: process.memoryUsage.rss(),
      events: session.events,
      overflows: session.overflows,
      rescans: index.rescans,
      rescansBy: { ...index.rescansBy },
      lastRescan: index.lastRescan,
      patches: index.patches,
      lastPatch: index.lastPatch,
      evidenceLooks: { full: this.looks.counts.full, partial: this.looks.counts.partial, entries: this.looks.counts.looked },
      readyMs: this.options.readyMs(),
      socket: this.options.socket,
      root: this.options.root,
    };
  }

  async observe(params: ObserveParams): Promise<ObserveResult> {
    const { index, session, store } = this.options;
    const checks = validChecks(params);
    const deadline = Date.now() + ANSWER_DEADLINE_MS;
    await session.synchronize(params.mode);
    const unhealthy = (reasons: GapReason[]): ObserveResult => ({ healthy: false, reasons, envKey: this.options.envKey, observedAt: Date.now(), checks: [] });
    if (index.reasons().length > 0 && !index.reasons().every((reason) => transient(reason.code))) return unhealthy(index.reasons());
    let answer;
    for (let attempt = 1; ; attempt++) {
      try {
        answer = await index.current(checks, deadline);
      } catch (error) {
        if (error instanceof ObserverBusy) return unhealthy([{ code: 'observer-busy', message: error.message }]);
        throw error;
      }
      const unwatched = session.uncovered(answer.snapshot);
      if (unwatched.length === 0) break;
      const what = `${unwatched.length} ${unwatched.length === 1 ? 'directory' : 'directories'} holding inputs ${unwatched.length === 1 ? 'is' : 'are'} not watched (${unwatched[0] || '.'})`;
      if (attempt > 1) return unhealthy([{ code: 'observer-watcher-error', message: `${what}, even after watching again` }]);
      await session.watchAgain(what);
    }
    if (!index.healthy) return unhealthy(index.reasons());
    // Another process may have found the file damaged and kept it aside: this connection
    // would still read the old file's receipts, which are no longer evidence.
    reopenIfReplaced(store.db);
    const generation = storeGeneration(store.db);
    const receipts = readConsistently(store.db, () => checks.map((check) => latestReceipt(store.db, check.name)));
    if (storeGeneration(store.db) !== generation) {
      // A damaged page, found here: the file was kept aside and a fresh store started. This one
      // answer says so, and the command that asked scans directly; later questions are answered.
      const notices = store.notices.splice(0);
      for (const notice of notices) this.options.log(notice);
      return unhealthy([{ code: 'observer-store-recovered', message: notices.join(' ') || 'the receipts database was replaced' }]);
    }
    // One answer's looks: an earlier traced receipt they show changed is not looked at again (fs/answerLooks.ts).
    const looks = new AnswerLooks();
    const verify = looks.remembering(this.verify);
    const observations = checks.map((_check, position) => {
      const indexed = answer.observations[position];
      if (!indexed) throw new Error('unreachable: one observation per check');
      // A traced receipt's evidence (ignored files, paths outside the root) is looked at
      // again here, after the barrier, as a direct status would: the index covers only the
      // declared inputs.
      const observation = observationFor(this.options.root, (digest) => this.evidence(digest), this.options.statCache, receipts[position] ?? null, () => indexed, () => indexed.problems.filter((problem) => problem.code === 'state-dir-in-git'), 'observer', verify);
      return { indexed, observation };
    });
    // Inputs seen before: the newest receipt made on them may answer, as a direct status finds it (api/scan.ts).
    const earlier = readConsistently(store.db, () =>
      checks.map((check, position) => {
        const digest = earlierInputsDigest(receipts[position] ?? null, observations[position]!.observation);
        return digest === null ? null : latestReceiptForInputs(store.db, check.name, digest);
      }),
    );
    const earlierTraced = readConsistently(store.db, () => checks.map((check, position) => this.earlierTraced(check, receipts[position] ?? null, observations[position]!.observation, looks, verify)));
    if (storeGeneration(store.db) !== generation) {
      const notices = store.notices.splice(0);
      for (const notice of notices) this.options.log(notice);
      return unhealthy([{ code: 'observer-store-recovered', message: notices.join(' ') || 'the receipts database was replaced' }]);
    }
    // After a run: what its client needs instead of a scan of its own (exec/runCheck.ts).
    const followUps = checks.map((check, position) => {
      const { indexed, observation } = observations[position]!;
      const basis = answer.snapshot.indexed.get(keyOf(check))?.basis;
      if (params.since === undefined || observation !== indexed || !basis) return {};
      // Stored here, where the lines are at hand, so the client neither receives nor stores them.
      const stored = storeManifest(store.db, observation.manifest.digest, () => manifestLines(observation.manifest));
      if (!stored) this.options.log('a manifest was not stored after a run: the disk is full or the store is busy; the client scans for it');
      return { written: writtenSince(this.options.root, basis, params.since), stored };
    });
    // Before a run: the same store, done once the answer is on its way, while the checks run
    // (on the observer's thread, beside a check that is mostly on one core), rather than after
    // them, where the run's client waits for it. A question that comes meanwhile waits its turn.
    if (params.beforeRun && params.since === undefined) {
      const manifests = observations.filter(({ indexed, observation }) => observation === indexed).map(({ observation }) => observation.manifest);
      if (manifests.length > 0) setImmediate(() => this.storeManifests(manifests));
    }
    this.tellStoreNotices();
    return {
      healthy: true,
      reasons: [],
      envKey: this.options.envKey,
      observedAt: answer.snapshot.observedAt,
      checks: checks.map((check, position) => {
        const { indexed, observation } = observations[position]!;
        const receipt = receipts[position] ?? null;
        return {
          name: check.name,
          manifestDigest: observation.manifest.digest,
          inputCount: observation === indexed ? manifestSize(observation.manifest) : (receipt?.inputCount ?? 0),
          problems: observation.problems,
          ...(params.entries && observation === indexed ? { entries: observation.manifest.entries } : {}),
          ...(observation.changedEvidence ? { changedEvidence: observation.changedEvidence } : {}),
          receipt,
          earlier: earlier[position] ?? null,
          ...(earlierTraced[position]!.length > 0 ? { earlierTraced: earlierTraced[position] } : {}),
          ...followUps[position],
        };
      }),
    };
  }

  /**
   * For a traced latest receipt whose evidence changed: the earlier traced receipts on the
   * client's definition, newest first, each with its own evidence looked at now (after the
   * barrier, as the latest's was), up to the first that is not changed. The client decides
   * (core/decide.ts decideObserved), with the context it alone can digest.
   */
  private earlierTraced(check: ObservedInputs, latest: Receipt | null, observation: Observation, answered: AnswerLooks, verify: typeof this.verify): EarlierTracedLook[] {
    if (check.definitionDigest === undefined || latest?.evidence.mode !== 'traced') return [];
    if (!observation.healthy || observation.problems.length > 0 || observation.manifest.digest === latest.manifestDigest) return [];
    const looks: EarlierTracedLook[] = [];
    for (const receipt of earlierTracedReceipts(this.options.store.db, latest, { definitionDigest: check.definitionDigest, contextDigest: null })) {
      const recorded = this.evidence(receipt.manifestDigest);
      if (recorded !== null && answered.changed(recorded)) {
        looks.push({ receipt, evidence: 'changed' });
        continue;
      }
      const seen = observationFor(this.options.root, () => recorded, this.options.statCache, receipt, notDeclared, () => [], 'observer', verify);
      const evidence = !seen.healthy || seen.problems.length > 0 ? 'doubt' : seen.manifest.digest === receipt.manifestDigest ? 'unchanged' : 'changed';
      looks.push({ receipt, evidence });
      if (evidence !== 'changed') break;
    }
    return looks;
  }

  private storeManifests(manifests: Observation['manifest'][]): void {
    for (const manifest of manifests) {
      if (!storeManifest(this.options.store.db, manifest.digest, () => manifestLines(manifest))) {
        this.options.log('a manifest was not stored before a run: the disk is full or the store is busy; it is stored after the run, or the client scans for it');
        return;
      }
    }
    this.tellStoreNotices();
  }

  async fault(params: unknown): Promise<{ injected: FaultKind }> {
    const kind = (params as { kind?: unknown }).kind;
    if (kind !== 'overflow' && kind !== 'watcher-error' && kind !== 'watch-limit' && kind !== 'blind-creates') {
      throw new InvalidParams('kind must be overflow, watcher-error, watch-limit or blind-creates');
    }
    this.options.session.inject(kind);
    return { injected: kind };
  }

  /** What the store has to say (a database kept aside, a full disk) goes to the observer's log. */
  tellStoreNotices(): void {
    for (const notice of this.options.store.notices.splice(0)) this.options.log(notice);
  }
}

/** Gaps a rescan clears by itself; the index waits for that rescan rather than answer unhealthy. */
function transient(code: GapCode): boolean {
  return code === 'observer-overflow' || code === 'observer-barrier-timeout';
}

function validChecks(params: ObserveParams): ObservedInputs[] {
  const strings = (value: unknown) => Array.isArray(value) && value.every((item) => typeof item === 'string');
  if (!params || !Array.isArray(params.checks) || (params.mode !== 'sync' && params.mode !== 'cached')) {
    throw new InvalidParams('expected {"checks": [{"name", "inputs", "installed"}], "mode": "sync" | "cached"}');
  }
  for (const check of params.checks) {
    if (!check || typeof check.name !== 'string' || !strings(check.inputs) || !strings(check.installed)) {
      throw new InvalidParams('each check needs "name" (string), "inputs" and "installed" (arrays of globs)');
    }
  }
  if (params.since !== undefined && (typeof params.since !== 'number' || !Number.isFinite(params.since))) {
    throw new InvalidParams('"since" must be a time in ms since the epoch');
  }
  if (params.beforeRun !== undefined && typeof params.beforeRun !== 'boolean') {
    throw new InvalidParams('"beforeRun" must be true or false');
  }
  return params.checks.map((check) => ({
    name: check.name,
    inputs: check.inputs,
    installed: check.installed,
    ...(typeof check.definitionDigest === 'string' ? { definitionDigest: check.definitionDigest } : {}),
  }));
}

function notDeclared(): Observation {
  throw new Error('unreachable: a traced receipt is never compared with the declared inputs');
}
