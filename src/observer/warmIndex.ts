import { lstatSync } from 'node:fs';
import { setImmediate as yieldToEvents } from 'node:timers/promises';
import type { CheckDefinition } from '../core/definition.js';
import { identityOf } from '../core/identity.js';
import type { Observation } from '../core/observation.js';
import type { StatCache } from '../core/statCache.js';
import { InputScanner } from '../fs/inputScanner.js';
import { ruleStamp } from './ruleFiles.js';
import type { GapCode, GapReason, ObservedInputs, RescanReason } from './protocol.js';

/** One full scan of every tracked check, and the event generation it began at. */
export interface Snapshot {
  generation: number;
  observedAt: number;
  observations: Map<string, Observation>;
  /** Hard-linked inputs: a write through another link raises no event here, so each question re-stats them. */
  linked: Array<[path: string, identity: string]>;
  files: number;
  /** The directories that hold inputs, root-relative ('' is the root): each must be watched. */
  directories: Set<string>;
  /** The git rule files outside the root as they were when the scan began (see ruleFiles.ts). */
  rules: string;
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

const RESCAN_DEBOUNCE_MS = 15;

/**
 * The observer's index: the latest full observation of every check asked
 * about, kept warm by file-system events. Events never patch the index; they
 * only say it may be out of date. An answer comes from a scan that began
 * after the last event delivered, so a lost event (an inotify overflow drops
 * events but always delivers the thousands queued before it) can never leave
 * the index quietly wrong: the events that were delivered force a rescan.
 */
export class WarmIndex {
  /** Bumped by every delivered event that is not the observer's own. */
  private generation = 0;
  private snapshot: Snapshot | null = null;
  private readonly tracked = new Map<string, ObservedInputs>();
  private readonly gaps = new Map<string, Gap>();
  private timer: NodeJS.Timeout | null = null;
  rescans = 0;
  lastRescan: { at: number; durationMs: number; reason: RescanReason } | null = null;
  lastGap: Gap | null = null;
  private pendingReason: RescanReason = 'first-index';

  constructor(
    private readonly root: string,
    private readonly excluded: readonly string[],
    private readonly statCache: StatCache,
    private readonly onScanError: (error: Error) => void,
    /** Runs after each scan, while no question waits on it in the usual loop. */
    private readonly onSnapshot: (snapshot: Snapshot) => void = () => undefined,
    /** Files outside the root that decide what git tracks or ignores in it; no event reports them. */
    private readonly ruleFiles: readonly string[] = [],
  ) {}

  /** Files changed, or the watcher was renewed: the index may be out of date. */
  touched(reason: RescanReason = 'file-events'): void {
    this.generation++;
    this.schedule(reason);
  }

  raise(reason: GapReason, lasting: boolean): void {
    const gap: Gap = { reason, lasting, generation: ++this.generation, at: Date.now() };
    this.gaps.set(reason.code, gap);
    this.lastGap = gap;
    if (!lasting) this.schedule(reason.code);
  }

  /** A lasting gap's cause is gone (the watcher is back): a rescan that begins now clears it. */
  settle(code: GapCode): void {
    const gap = this.gaps.get(code);
    if (!gap) return;
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
    for (;;) {
      const snapshot = this.snapshot;
      if (snapshot && this.answers(snapshot, checks)) {
        return { snapshot, observations: checks.map((check) => snapshot.observations.get(keyOf(check)) as Observation) };
      }
      if (Date.now() > deadline) throw new ObserverBusy('files keep changing faster than the observer can rescan them');
      // Events already queued are counted before a scan claims to be newer than them.
      await yieldToEvents();
      if (this.snapshot !== snapshot) continue;
      this.rescan(snapshot ? this.pendingReason : 'first-index');
    }
  }

  private answers(snapshot: Snapshot, checks: readonly ObservedInputs[]): boolean {
    if (snapshot.generation !== this.generation) return false;
    for (const gap of this.gaps.values()) if (gap.lasting || gap.generation > snapshot.generation) return false;
    if (!checks.every((check) => snapshot.observations.has(keyOf(check)))) return false;
    if (this.ruleFiles.length > 0 && ruleStamp(this.ruleFiles) !== snapshot.rules) {
      this.generation++;
      this.pendingReason = 'git-rules';
      return false;
    }
    for (const [path, identity] of snapshot.linked) {
      const stats = lstatSync(`${this.root}/${path}`, { bigint: true, throwIfNoEntry: false });
      if (!stats || identityOf(stats) !== identity) {
        this.generation++;
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
        this.rescan(this.pendingReason);
      } catch (error) {
        // The index stays out of date, so no answer rests on it; the next question rescans again.
        this.onScanError(error as Error);
      }
    }, RESCAN_DEBOUNCE_MS);
  }

  /** A full, synchronous scan of every tracked check: the same scanner a direct status uses. */
  private rescan(reason: RescanReason): void {
    const generation = this.generation;
    const started = Date.now();
    const rules = ruleStamp(this.ruleFiles);
    const scanner = new InputScanner(this.root, this.excluded, this.statCache);
    const observations = new Map<string, Observation>();
    const linked = new Map<string, string>();
    const paths = new Set<string>();
    const directories = new Set<string>();
    for (const [key, check] of this.tracked) {
      const observation = scanner.observe(check as unknown as CheckDefinition);
      observations.set(key, observation);
      for (const entry of observation.manifest.entries) {
        if (paths.has(entry.path)) continue;
        paths.add(entry.path);
        const slash = entry.path.lastIndexOf('/');
        directories.add(slash < 0 ? '' : entry.path.slice(0, slash));
        if (entry.type === 'file' && entry.origin === 'installed' && linkCount(entry.identity) > 1) linked.set(entry.path, entry.identity);
      }
      for (const [path, identity] of observation.sourceIdentities) if (linkCount(identity) > 1) linked.set(path, identity);
    }
    this.snapshot = { generation, observedAt: started, observations, linked: [...linked], files: paths.size, directories, rules };
    for (const [code, gap] of this.gaps) if (!gap.lasting && gap.generation <= generation) this.gaps.delete(code);
    this.rescans++;
    this.lastRescan = { at: started, durationMs: Date.now() - started, reason };
    this.onSnapshot(this.snapshot);
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
  }
}

function keyOf(check: ObservedInputs): string {
  return JSON.stringify([check.inputs, check.installed]);
}

/** The nlink field of an identity (dev:ino:size:mode:nlink:mtime:ctime). */
function linkCount(identity: string): number {
  return Number(identity.split(':')[4] ?? 1);
}
