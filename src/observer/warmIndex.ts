import { lstatSync } from 'node:fs';
import { setImmediate as yieldToEvents } from 'node:timers/promises';
import type { CheckDefinition } from '../core/definition.js';
import { identityOf, linkCountOf, nowNs } from '../core/identity.js';
import type { Observation } from '../core/observation.js';
import { unsliced, type StatCache } from '../core/statCache.js';
import { forgetPatchBytes, plainEntryAt, plainLineCount, type ManifestBasis } from '../core/manifest.js';
import { InputScanner } from '../fs/inputScanner.js';
import { patchIndex, type IndexedCheck } from './indexPatch.js';
import { isCalm, isStalled, type QueueWindows } from './queueWatch.js';
import { ruleStamp } from './ruleFiles.js';
import type { GapCode, GapReason, ObservedInputs, RescanReason } from './protocol.js';

/** One observation of every tracked check (a full scan, or one patched from events), and the event generation it began at. */
export interface Snapshot {
  generation: number;
  observedAt: number;
  observations: Map<string, Observation>;
  /** Each check as indexed, with what its manifest was made of, for the next patch. */
  indexed: Map<string, IndexedCheck>;
  /** Hard-linked inputs: a write through another link raises no event here, so each question re-stats them. */
  linked: Array<[path: string, identity: string]>;
  files: number;
  /** The directories that hold inputs, root-relative ('' is the root): each must be watched. */
  directories: Set<string>;
  /** The git rule files outside the root as they were when the scan began (see ruleFiles.ts). */
  rules: string;
  /**
   * Whether every window of the kernel's queue since the refresh before the scan was calm; null
   * without a queue watch. When not, an event may have been lost, a directory's creation among
   * them, so the watcher's coverage is checked in full (watchSession.ts).
   */
  calm: boolean | null;
}

/** Raised when the index cannot be trusted; answers are unhealthy until it is cleared. */
export interface Gap {
  reason: GapReason;
  /** A lasting gap (no watcher, no root) clears only when its cause is fixed; a passing one, by a rescan that began after it. */
  lasting: boolean;
  generation: number;
  at: number;
}

export class ObserverBusy extends Error {}

export interface WarmIndexOptions {
  /** Runs after each full scan, while no question waits on it in the usual loop. */
  onSnapshot?: (snapshot: Snapshot) => void;
  /** Files outside the root that decide what git tracks or ignores in it; no event reports them. */
  ruleFiles?: readonly string[];
  /**
   * The kernel's event queues, sampled (queueWatch.ts). A window is taken at the start and the end
   * of every refresh and before every answer. Only calm windows since the last refresh began let
   * events patch the index; a stalled window between refreshes makes a full scan before the next
   * answer. Without it (the default), nothing is patched and the index is trusted as long as no
   * event came.
   */
  queue?: QueueWindows;
  /**
   * The watcher reports every event it loses (native/treeWatch.c reads IN_Q_OVERFLOW, and counts
   * what it could not hand over), and the session raises each as a gap: no queue need be sampled,
   * every window counts as calm and none as stalled. A loss is read before any cookie written
   * after it (the kernel's queue is in order), so no answer can rest on a patch that missed it.
   */
  lossesReported?: boolean;
  /** How long after a full scan a patched index is scanned in full again. */
  safetyRescanMs?: number;
  /**
   * Whether events may patch the index at all (default off here; the observer turns it on unless
   * VOUCH_OBSERVER_PATCH=0). A patch trusts that every change raised an event: the watch session
   * checks, before every answer, that every directory holding an input is watched, and a watcher
   * that loses events says so (or the queue watch finds out).
   */
  patch?: boolean;
}

const RESCAN_DEBOUNCE_MS = 15;
const NO_IDENTITIES: ReadonlyMap<string, string> = new Map();
/** More changed paths than this in one refresh, and a full scan is as cheap as looking at each. */
const PATCH_PATHS = 256;
/**
 * A full scan this long after the last one, when the index was patched since:
 * a patch trusts that events named every changed path, and this bounds how
 * long a flaw in that trust could last. Questions never wait for it.
 */
const SAFETY_RESCAN_MS = 10 * 60_000;

/**
 * The observer's index: the latest observation of every check asked about,
 * kept warm by file-system events. An answer comes from an index that began
 * after the last event delivered. Events that name only content changes of
 * source files already in the index, or paths that are no input, patch it
 * (indexPatch.ts); any other event, a gap, an overflow or a watcher renewal
 * makes a full scan. A lost event (an inotify overflow drops events but
 * always delivers the thousands queued before it) still cannot leave the
 * index quietly wrong: the overflow guard renews the watcher and rescans.
 */
export class WarmIndex {
  /** Bumped by every delivered event that is not the observer's own. */
  private generation = 0;
  private snapshot: Snapshot | null = null;
  private readonly tracked = new Map<string, ObservedInputs>();
  private readonly gaps = new Map<string, Gap>();
  private timer: NodeJS.Timeout | null = null;
  /** Paths events named since the index began, root-relative; null when only a full scan can tell what changed. */
  private changed: Set<string> | null = null;
  private readonly safety: NodeJS.Timeout;
  rescans = 0;
  /** Full scans by what started them. */
  readonly rescansBy: Partial<Record<RescanReason, number>> = {};
  patches = 0;
  /** When the last full scan began, and whether the index was patched since. */
  private lastFull = 0;
  private patchedSinceFull = false;
  lastRescan: { at: number; durationMs: number; reason: RescanReason } | null = null;
  lastGap: Gap | null = null;
  private pendingReason: RescanReason = 'first-index';

  private readonly onSnapshot: (snapshot: Snapshot) => void;
  private readonly ruleFiles: readonly string[];
  private readonly queue: QueueWindows | null;
  private readonly lossesReported: boolean;
  private readonly patching: boolean;
  /** Every window since the last refresh began was calm: a patch now misses no lost event. */
  private calmSinceRefresh = false;

  constructor(
    private readonly root: string,
    private readonly excluded: readonly string[],
    private readonly statCache: StatCache,
    private readonly onScanError: (error: Error) => void,
    options: WarmIndexOptions = {},
  ) {
    this.onSnapshot = options.onSnapshot ?? (() => undefined);
    this.ruleFiles = options.ruleFiles ?? [];
    this.queue = options.queue ?? null;
    this.lossesReported = options.lossesReported ?? false;
    this.patching = options.patch ?? false;
    const safetyRescanMs = options.safetyRescanMs ?? SAFETY_RESCAN_MS;
    this.safety = setInterval(() => {
      if (this.patchedSinceFull && Date.now() - this.lastFull >= safetyRescanMs) this.touched('safety');
    }, safetyRescanMs / 4);
    this.safety.unref();
  }

  /**
   * Files changed, or the watcher was renewed: the index may be out of date.
   * `paths` (root-relative) are the changed paths when the caller knows them
   * all; without them, only a full scan can bring the index up to date.
   */
  touched(reason: RescanReason = 'file-events', paths?: readonly string[]): void {
    this.generation++;
    if (paths === undefined || this.changed === null || this.changed.size + paths.length > PATCH_PATHS) this.changed = null;
    else for (const path of paths) this.changed.add(path);
    this.schedule(reason);
  }

  raise(reason: GapReason, lasting: boolean): void {
    this.changed = null;
    const gap: Gap = { reason, lasting, generation: ++this.generation, at: Date.now() };
    this.gaps.set(reason.code, gap);
    this.lastGap = gap;
    if (!lasting) this.schedule(reason.code);
  }

  /** A lasting gap's cause is gone (the watcher is back): a rescan that begins now clears it. */
  settle(code: GapCode): void {
    const gap = this.gaps.get(code);
    if (!gap) return;
    this.changed = null;
    this.gaps.set(code, { ...gap, lasting: false, generation: ++this.generation });
    this.schedule(code);
  }

  reasons(): GapReason[] {
    return [...this.gaps.values()].map((gap) => gap.reason);
  }

  get healthy(): boolean {
    return this.gaps.size === 0;
  }

  get files(): number {
    return this.snapshot?.files ?? 0;
  }

  get ready(): boolean {
    return this.snapshot !== null;
  }

  /** Every check asked about so far: what each scan covers. */
  checks(): ObservedInputs[] {
    return [...this.tracked.values()];
  }

  track(checks: readonly ObservedInputs[]): void {
    for (const check of checks) {
      const key = keyOf(check);
      if (!this.tracked.has(key)) this.tracked.set(key, check);
    }
  }

  /**
   * The snapshot that answers a question asked now: one that began after
   * every event delivered so far, covers the checks asked, and whose
   * hard-linked inputs still have their identities. Rescans until there is one.
   */
  async current(checks: readonly ObservedInputs[], deadline: number): Promise<{ snapshot: Snapshot; observations: Observation[] }> {
    this.track(checks);
    // Events lost since the index began make a full scan before this answer. An index made during
    // this question (a scan, or a patch from a calm window) is trusted as any scan is, until an
    // event comes, so a loaded machine cannot keep one question rescanning.
    let lossScanned = false;
    for (;;) {
      const snapshot = this.snapshot;
      if (snapshot && this.answers(snapshot, checks, !lossScanned)) {
        return { snapshot, observations: checks.map((check) => snapshot.observations.get(keyOf(check)) as Observation) };
      }
      if (Date.now() > deadline) throw new ObserverBusy('files keep changing faster than the observer can rescan them');
      // Events already queued are counted before a scan claims to be newer than them.
      await yieldToEvents();
      if (this.snapshot !== snapshot) continue;
      this.refresh(snapshot ? this.pendingReason : 'first-index');
      lossScanned = true;
    }
  }

  private answers(snapshot: Snapshot, checks: readonly ObservedInputs[], checkLoss: boolean): boolean {
    if (snapshot.generation !== this.generation) return false;
    if (this.lookAtQueue(checkLoss)) {
      // Events may have been dropped since this index began, quiet paths' included: only a full scan can tell.
      this.generation++;
      this.changed = null;
      this.pendingReason = 'lost-events';
      return false;
    }
    for (const gap of this.gaps.values()) if (gap.lasting || gap.generation > snapshot.generation) return false;
    if (!checks.every((check) => snapshot.observations.has(keyOf(check)))) return false;
    if (this.ruleFiles.length > 0 && ruleStamp(this.ruleFiles) !== snapshot.rules) {
      this.generation++;
      this.changed = null;
      this.pendingReason = 'git-rules';
      return false;
    }
    for (const [path, identity] of snapshot.linked) {
      const stats = lstatSync(`${this.root}/${path}`, { bigint: true, throwIfNoEntry: false });
      if (!stats || identityOf(stats) !== identity) {
        this.generation++;
        this.changed = null;
        this.pendingReason = 'hard-linked-input';
        return false;
      }
    }
    return true;
  }

  private schedule(reason: RescanReason): void {
    this.pendingReason = reason;
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      const snapshot = this.snapshot;
      if (snapshot && snapshot.generation === this.generation) return;
      // A lasting gap (no root, no watcher) makes a scan pointless until it ends.
      if ([...this.gaps.values()].some((gap) => gap.lasting)) return;
      try {
        this.refresh(this.pendingReason);
      } catch (error) {
        // The index stays out of date, so no answer rests on it; the next question rescans again.
        this.onScanError(error as Error);
      }
    }, RESCAN_DEBOUNCE_MS);
  }

  /** Patches the index when the changes allow it, and scans it whole otherwise. */
  private refresh(reason: RescanReason): void {
    const snapshot = this.snapshot;
    const changed = this.changed;
    this.lookAtQueue(false);
    const calm = this.calmSinceRefresh;
    this.calmSinceRefresh = true;
    try {
      this.refreshWith(reason, snapshot, changed, calm);
    } finally {
      // The refresh's own window: a lost event while it ran is the next refresh's to see.
      this.lookAtQueue(false);
    }
  }

  /** Takes the queue's window; true when it stalled and the caller asked (only then is it a reason to scan). */
  private lookAtQueue(stallMatters: boolean): boolean {
    if (this.lossesReported) return false;
    const window = this.queue?.window() ?? null;
    if (window === null || !isCalm(window)) this.calmSinceRefresh = false;
    return stallMatters && window !== null && isStalled(window);
  }

  private refreshWith(reason: RescanReason, snapshot: Snapshot | null, changed: Set<string> | null, calm: boolean): void {
    if (this.patching && calm && snapshot !== null && changed !== null && [...this.tracked.keys()].every((key) => snapshot.indexed.has(key))) {
      if (this.patch(snapshot, changed)) return;
    }
    this.rescan(reason, calm);
  }

  /** One synchronous patch of the snapshot from the changed paths; false when only a full scan will do. */
  private patch(snapshot: Snapshot, changed: Set<string>): boolean {
    const generation = this.generation;
    const started = Date.now();
    this.changed = new Set();
    const patched = patchIndex(this.root, snapshot.indexed, changed, this.statCache, nowNs());
    if ('full' in patched) {
      this.changed = null;
      return false;
    }
    const observations = new Map<string, Observation>();
    for (const [key, indexed] of patched.checks) observations.set(key, indexed.observation);
    const linked = snapshot.linked.filter(([path]) => !patched.identities.has(path));
    for (const [path, identity] of patched.identities) if (linkCountOf(identity) > 1) linked.push([path, identity]);
    this.snapshot = { ...snapshot, generation, observedAt: started, observations, indexed: patched.checks, linked };
    this.patches++;
    this.patchedSinceFull = true;
    this.lastPatch = { at: started, durationMs: Date.now() - started, paths: changed.size };
    return true;
  }

  lastPatch: { at: number; durationMs: number; paths: number } | null = null;

  /** A full, synchronous scan of every tracked check: the same scanner a direct status uses. */
  private rescan(reason: RescanReason, calm: boolean): void {
    const generation = this.generation;
    const started = Date.now();
    this.changed = new Set();
    // What patches kept of the old index's lines is only a cache: a scan holds the old index and the new one at once.
    if (this.snapshot) for (const { observation } of this.snapshot.indexed.values()) forgetPatchBytes(observation.manifest);
    const rules = ruleStamp(this.ruleFiles);
    const scanner = new InputScanner(this.root, this.excluded, this.statCache);
    const observations = new Map<string, Observation>();
    const indexed = new Map<string, IndexedCheck>();
    const linked = new Map<string, string>();
    // One check (the usual case) counts its files without a set of every path.
    const paths = this.tracked.size > 1 ? new Set<string>() : null;
    let files = 0;
    const directories = new Set<string>();
    for (const [key, check] of this.tracked) {
      const { observation: scanned, basis, eachSourceIdentity } = scanner.observeWithBasis(check as unknown as CheckDefinition);
      // Not scanned.sourceIdentities: a map of every source, where only the hard-linked ones are kept.
      eachSourceIdentity((path, identity) => {
        if (linkCountOf(identity) > 1) linked.set(path, identity);
      });
      // Kept without the scanner behind its source identities: only the hard-linked ones matter here, in `linked`.
      const observation: Observation = { manifest: scanned.manifest, problems: scanned.problems, healthy: scanned.healthy, source: scanned.source, sourceIdentities: NO_IDENTITIES };
      observations.set(key, observation);
      indexed.set(key, { check, observation, basis });
      // From the basis, not manifest.entries: that would make an entry of every installed line and
      // keep them with the snapshot (11 MB at 50k installed files).
      eachBasisFile(basis, (path, identity) => {
        if (paths !== null) {
          if (paths.has(path)) return;
          paths.add(path);
        }
        files++;
        const slash = path.lastIndexOf('/');
        if (slash < 0) directories.add('');
        else {
          const directory = path.slice(0, slash);
          // A copy: a slice would keep this scan's whole git listing alive for as long as the
          // watch session keeps the directories (3 MB at 100k sources).
          if (!directories.has(directory)) directories.add(unsliced(directory));
        }
        if (identity !== null && linkCountOf(identity) > 1) linked.set(path, identity);
      });
    }
    this.snapshot = { generation, observedAt: started, observations, indexed, linked: [...linked], files, directories, rules, calm: this.queue === null ? null : calm };
    this.lastFull = started;
    this.patchedSinceFull = false;
    for (const [code, gap] of this.gaps) if (!gap.lasting && gap.generation <= generation) this.gaps.delete(code);
    this.rescans++;
    this.rescansBy[reason] = (this.rescansBy[reason] ?? 0) + 1;
    this.lastRescan = { at: started, durationMs: Date.now() - started, reason };
    this.onSnapshot(this.snapshot);
  }

  dispose(): void {
    clearInterval(this.safety);
    if (this.timer) clearTimeout(this.timer);
  }
}

/** Every path of a manifest's basis, with its identity when it is an installed file (null otherwise). */
function eachBasisFile(basis: ManifestBasis, visit: (path: string, identity: string | null) => void): void {
  for (const entry of basis.entries) visit(entry.path, entry.type === 'file' && entry.origin === 'installed' ? entry.identity : null);
  if (basis.plain === null) return;
  const count = plainLineCount(basis.plain);
  for (let index = 0; index < count; index++) {
    const entry = plainEntryAt(basis.plain, index);
    visit(entry.path, entry.identity);
  }
}

export function keyOf(check: ObservedInputs): string {
  return JSON.stringify([check.inputs, check.installed]);
}
