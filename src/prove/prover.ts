import { existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { STAGES, type StageCheck, type Claim, type Issue, type Phase, type Stage, type Toolchain, type Verdict } from '../core/claim.js';
import { ClaimError, isClaimError } from '../core/claimError.js';
import { validateClaim } from '../core/claimDigest.js';
import { mintReceipt, type ClaimReceipt } from '../core/claimReceipt.js';
import { containClaimPaths, containClaimPathsOnDisk, sweepLeftovers } from './draftPaths.js';
import { DEFAULT_DEADLINES, deadlineError, expired, withDeadline, type Deadlines } from './deadline.js';
import { readJudgeConfig } from './judgeConfig.js';
import { createOverlay } from './overlay.js';
import type { Inspection, StageInstance, Tool } from './stage.js';
import { refuseUnsupportedTools } from './toolSupport.js';

const ORPHAN_WAIT_MS = 10_000;

/** The type stage also says how it reads a project: the options digest the receipt token binds. */
export interface TypeStageInstance extends StageInstance {
  /** With a project, warming also builds its program and baseline, so the first prove does not pay for the full check. */
  warm(project?: string): Promise<Tool>;
  optionsDigest(project: string): Promise<string>;
}

export interface StageFactories {
  type: (workspace: string) => TypeStageInstance;
  lint: (workspace: string) => StageInstance;
  runtime: (workspace: string) => StageInstance;
}

export interface StageTiming {
  stage: Stage;
  phase: Phase;
  ms: number;
}

export interface ProveResult {
  verdict: Verdict;
  receipt: ClaimReceipt;
  timings: StageTiming[];
  /** Wall time of the whole prove, warming included (from the call, when it waited for a warming under way). */
  ms: number;
  /** Whether any stage had to warm for this prove, or it waited for a warming under way. */
  cold: boolean;
}

export interface ProverOptions {
  factories: StageFactories;
  /**
   * Resident runtime stages. With two (the default), the case's test and the
   * control's run at the same time in two runner instances (Vitest, or Jest hosts); the runtime stage
   * is the slowest, so that halves a warm prove at the cost of a second
   * instance's memory. One runs them one after the other.
   */
  runtimeLanes?: 1 | 2;
  deadlines?: Partial<Deadlines>;
  onProgress?: (message: string) => void;
  /** Whether a process still runs: a leftover draft is swept only when the prover that wrote it is gone. */
  processAlive: (pid: number) => boolean;
  /** Called when close() has stopped the stages: the edge that opened the prover releases what it holds for it. */
  onClose?: () => void;
}

/** A stage and its warming, replaced together when a deadline destroys it. */
interface Slot {
  stage: Stage;
  instance: StageInstance;
  tool: Promise<Tool> | null;
  /** The warming resolved: the lane can take an inspection without paying for it. */
  ready: boolean;
  /** Projects whose program and baseline the type stage has built: building one is warming, under the warm deadline. */
  prepared: Set<string>;
  /** Baselines being built: a prove that needs one joins the build a warming started, rather than queueing another. */
  preparing: Map<string, Promise<void>>;
  /** Why the slot was given up, for whoever else was waiting on its warming: the deadline, not the destroy it caused. */
  ended?: ClaimError;
}

/**
 * The coordinator: keeps the three stages resident, has each judge the case and
 * then the control (the three stages concurrently), owns every deadline, and
 * assembles the verdict. One prove at a time: the stages are stateful.
 */
export class Prover {
  readonly workspace: string;
  private readonly factories: StageFactories;
  private readonly deadlines: Deadlines;
  private readonly onProgress: (message: string) => void;
  private readonly processAlive: (pid: number) => boolean;
  private readonly onClose: () => void;
  /** One slot per lane: `type`, `lint`, `runtime`, and `runtime#1` when the runtime stage has two lanes. */
  private readonly slots = new Map<string, Slot>();
  private readonly lanes: Record<Stage, string[]>;
  private queue: Promise<unknown> = Promise.resolve();
  /** warm() calls not yet settled. */
  private warming = 0;
  private closed = false;
  /**
   * Work a deadline walked away from: replaced stages being destroyed and the
   * inspections they were running. close() waits for them, so nothing a dead
   * stage does (Vitest restoring process.exitCode, say) lands after the caller
   * has moved on.
   */
  private readonly orphans = new Set<Promise<unknown>>();

  constructor(workspace: string, options: ProverOptions) {
    this.workspace = workspace;
    this.factories = options.factories;
    this.deadlines = { ...DEFAULT_DEADLINES, ...options.deadlines };
    this.onProgress = options.onProgress ?? (() => {});
    this.processAlive = options.processAlive;
    this.onClose = options.onClose ?? (() => {});
    const runtimeLanes = options.runtimeLanes ?? 2;
    this.lanes = { type: ['type'], lint: ['lint'], runtime: runtimeLanes === 2 ? ['runtime', 'runtime#1'] : ['runtime'] };
    for (const stage of STAGES) for (const lane of this.lanes[stage]) this.slots.set(lane, this.fresh(stage));
  }

  /**
   * Warms all three stages at once; resolves with the tools that will judge.
   * `project` (an absolute tsconfig path) also takes the type stage's baseline for it.
   * `lanes: 'first'` leaves the spare runtime lane to warm after the first prove, as a
   * prove does: a prove that arrives during warming then waits for one Vitest instance,
   * not two starting at once on the same cores.
   */
  warm(project?: string, lanes: 'all' | 'first' = 'all'): Promise<Toolchain> {
    // A tool too old to judge with is refused before any stage warms, as before any prove.
    try {
      refuseUnsupportedTools(this.workspace);
    } catch (error) {
      return Promise.reject(error);
    }
    this.warming += 1;
    const done = () => {
      this.warming -= 1;
    };
    // Not queued with the proves: each stage warms once, and a prove that arrives meanwhile awaits the same
    // warmings. The baseline is built once the compiler is loaded, apart from the lanes' warming, so such a
    // prove's lint and runtime lanes begin judging as soon as their tools are up while the type lane joins
    // the baseline's build, as they do in a prove that warms by itself.
    const tools = this.toolchain(lanes === 'all' ? [...this.slots.keys()] : this.firstLanes());
    const baseline = project === undefined ? undefined : this.warmStage('type').then(() => this.prepare(project));
    const work = baseline === undefined ? tools : Promise.all([tools, baseline]).then(([toolchain]) => toolchain);
    work.then(done, done);
    return work;
  }

  prove(claim: Claim): Promise<ProveResult> {
    // A prove that arrives during a warming waits for it: it is cold, and its time counts from the call.
    const behindWarm = this.warming > 0 ? performance.now() : undefined;
    return this.serial(() => this.judge(claim, behindWarm));
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.slots.values()].map((slot) => slot.instance.destroy()));
    let timer: NodeJS.Timeout | undefined;
    // A stage that ignores destroy() must not hold the caller forever.
    const cap = new Promise<void>((resolve) => (timer = setTimeout(resolve, ORPHAN_WAIT_MS)));
    await Promise.race([Promise.allSettled(this.orphans), cap]);
    clearTimeout(timer);
    this.onClose();
  }

  private orphan(work: Promise<unknown>): void {
    const settled = work.catch(() => {}).finally(() => this.orphans.delete(settled));
    this.orphans.add(settled);
  }

  private serial<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(work, work);
    this.queue = next.catch(() => {});
    return next;
  }

  private fresh(stage: Stage): Slot {
    return { stage, instance: this.factories[stage](this.workspace), tool: null, ready: false, prepared: new Set(), preparing: new Map() };
  }

  private slot(lane: string): Slot {
    if (this.closed) throw new ClaimError('instrument', 'destroyed', 'the prover was closed; start a new one');
    return this.slots.get(lane)!;
  }

  /** A stage that cannot be trusted any more is destroyed and a fresh one takes its place, cold. */
  private replace(lane: string): void {
    const old = this.slot(lane);
    this.orphan(old.instance.destroy());
    this.slots.set(lane, this.fresh(old.stage));
  }

  private async warmStage(lane: string): Promise<Tool> {
    const slot = this.slot(lane);
    const stage = slot.stage;
    if (slot.tool === null) {
      this.onProgress(`warming the ${stage} stage`);
      slot.tool = slot.instance.warm();
    }
    const before = slot.instance.progress();
    const outcome = await withDeadline(slot.tool, this.deadlines.warmMs).catch((error: unknown) => {
      // A stage that failed to warm is retried from scratch next time: the workspace may have been fixed.
      if (this.slots.get(lane) === slot) this.replace(lane);
      throw slot.ended ?? error;
    });
    if (expired(outcome)) {
      const progressed = slot.instance.progress() !== before;
      this.orphan(slot.tool);
      slot.ended ??= deadlineError(stage, 'warm', this.deadlines.warmMs, progressed);
      // A warming and a prove may both wait for this slot: only the first to give up replaces it.
      if (this.slots.get(lane) === slot) this.replace(lane);
      throw slot.ended;
    }
    slot.ready = true;
    return outcome;
  }

  /** The first lane of each stage is needed to judge at all; a second one only speeds up later proves. */
  private firstLanes(): string[] {
    return STAGES.map((stage) => this.lanes[stage][0]!);
  }

  private async toolchain(lanes: string[]): Promise<Toolchain> {
    const settled = await Promise.allSettled(lanes.map((lane) => this.warmStage(lane)));
    const failed = settled.find((outcome) => outcome.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;
    const tool = (stage: Stage) => (settled[lanes.indexOf(this.lanes[stage][0]!)] as PromiseFulfilledResult<Tool>).value;
    const [type, lint, runtime] = [tool('type'), tool('lint'), tool('runtime')];
    return { typescript: type.version, linter: { name: lint.name, version: lint.version }, [runtime.name === 'jest' ? 'jest' : 'vitest']: runtime.version };
  }

  /**
   * Builds the project's program and baseline in the type stage, once per
   * project: a full check that belongs to warming, so an inspection's deadline
   * measures the claim and not a cold compiler.
   */
  private prepare(project: string): Promise<void> {
    const slot = this.slot('type');
    if (slot.prepared.has(project)) return Promise.resolve();
    let building = slot.preparing.get(project);
    if (building === undefined) {
      building = this.buildBaseline(slot, project).finally(() => slot.preparing.delete(project));
      slot.preparing.set(project, building);
    }
    return building;
  }

  private async buildBaseline(slot: Slot, project: string): Promise<void> {
    this.onProgress(`building the type baseline of ${project}`);
    const before = slot.instance.progress();
    const work = (slot.instance as TypeStageInstance).warm(project);
    const outcome = await withDeadline(work, this.deadlines.warmMs);
    if (expired(outcome)) {
      const progressed = slot.instance.progress() !== before;
      this.orphan(work);
      if (this.slots.get('type') === slot) this.replace('type');
      throw deadlineError('type', 'warm', this.deadlines.warmMs, progressed);
    }
    slot.prepared.add(project);
  }

  private async inspect(lane: string, inspection: Inspection): Promise<{ check: StageCheck; ms: number }> {
    const slot = this.slot(lane);
    const stage = slot.stage;
    const before = slot.instance.progress();
    const started = performance.now();
    const work = slot.instance.inspect(inspection);
    const outcome = await withDeadline(work, this.deadlines.inspectMs);
    const ms = performance.now() - started;
    if (expired(outcome)) {
      this.orphan(work);
      const progressed = slot.instance.progress() !== before;
      this.replace(lane);
      throw deadlineError(stage, inspection.phase, this.deadlines.inspectMs, progressed);
    }
    const issues: Issue[] = outcome;
    // An instrument issue, or a draft the tool did not judge at all, leaves nothing to trust in the rest.
    const completed = !issues.some((issue) => issue.origin === 'instrument' || issue.unjudged === true);
    return { check: { stage, phase: inspection.phase, issues, completed }, ms };
  }

  private async judge(raw: Claim, calledDuringWarm?: number): Promise<ProveResult> {
    const started = calledDuringWarm ?? performance.now();
    const claim = containClaimPaths(raw);
    // Refusals that need no workspace come before any stage spends time.
    const digest = validateClaim(claim);
    // Then what the paths name on disk: a link that leads out of the workspace is refused before anything reads or sweeps through it.
    containClaimPathsOnDisk(this.workspace, claim);
    const project = join(this.workspace, claim.project);
    if (!existsSync(project) || !statSync(project).isFile()) {
      throw new ClaimError('claimant', 'missing', `project "${claim.project}" is not a file in the workspace ${this.workspace}; name the tsconfig the claim is judged under`);
    }
    this.sweep(claim);
    // A tool too old to judge with is one line now, not a verdict of instrument issues later.
    refuseUnsupportedTools(this.workspace);
    this.replaceStale();
    // Read as the prove begins, before the stages re-read their own config: an edit during the prove is not
    // told apart, and the next prove's token names it.
    const config = readJudgeConfig(this.workspace, claim);

    const cold = calledDuringWarm !== undefined || this.firstLanes().some((lane) => !this.slot(lane).ready) || !this.slot('type').prepared.has(project);
    // The type baseline is built inside the type lane, not before the others start: the lint and runtime
    // stages' first (cold) inspections overlap the full check, which is most of a cold prove.
    const toolchain = await this.toolchain(this.firstLanes());

    // Each lane judges its phases in order (a stage with one lane: the case, then the control). Lanes do not
    // wait for one another, so a prove takes as long as its slowest lane, not the sum of each phase's slowest.
    const inspections = (['case', 'control'] as const).map((phase): Inspection => {
      const drafts = phase === 'case' ? claim.case.drafts : claim.control.drafts;
      const test = claim.case.test;
      return { phase, drafts, test, overlay: createOverlay(this.workspace, [...drafts, test]), project };
    });
    this.onProgress('judging the case, then the control');
    // Asked before the inspections, not after them: the type worker answers in order, so this costs the type lane
    // a config read up front instead of adding a round trip (and any collection the worker does) after the slowest lane.
    const optionsDigest = (this.slot('type').instance as TypeStageInstance).optionsDigest(project);
    optionsDigest.catch(() => {});
    const work = new Map<string, Inspection[]>();
    for (const stage of STAGES) {
      // A lane still cold is not waited for: its stage's other lane takes both phases.
      const lanes = this.lanes[stage].filter((lane) => this.slot(lane).ready);
      inspections.forEach((inspection, index) => {
        const lane = lanes[index % lanes.length]!;
        work.set(lane, [...(work.get(lane) ?? []), inspection]);
      });
    }
    const settled = await Promise.allSettled(
      [...work].map(async ([lane, queue]) => {
        const done: { check: StageCheck; ms: number }[] = [];
        if (this.slot(lane).stage === 'type') await this.prepare(project);
        for (const inspection of queue) done.push(await this.inspect(lane, inspection));
        return done;
      }),
    );
    // All three run to the end, even when one fails, so no stage is left mid-inspection when the error is thrown.
    const failure = settled.find((outcome) => outcome.status === 'rejected') as PromiseRejectedResult | undefined;
    if (failure) throw asClaimError(failure.reason);
    const done = (settled as PromiseFulfilledResult<{ check: StageCheck; ms: number }[]>[]).flatMap((outcome) => outcome.value);
    const order = (check: StageCheck) => (check.phase === 'case' ? 0 : 3) + STAGES.indexOf(check.stage);
    done.sort((a, b) => order(a.check) - order(b.check));
    const checks = done.map((entry) => entry.check);
    const timings: StageTiming[] = done.map((entry) => ({ stage: entry.check.stage, phase: entry.check.phase, ms: Math.round(entry.ms) }));

    this.warmSpareLanes();

    const verdict: Verdict = {
      digest,
      controlStage: claim.control.stage,
      toolchain,
      config,
      project: { tsconfig: claim.project, optionsDigest: await optionsDigest },
      checks,
    };
    return { verdict, receipt: mintReceipt(verdict), timings, ms: Math.round(performance.now() - started), cold };
  }

  /** A lane whose tool was upgraded or switched since it warmed is replaced, cold, so the verdict names the tool that judged. */
  private replaceStale(): void {
    for (const [lane, slot] of this.slots) {
      if (!slot.ready || !slot.instance.stale()) continue;
      this.onProgress(`the workspace's ${slot.stage} tool changed; warming it again`);
      this.replace(lane);
    }
  }

  /** Warms, in the background and after a prove has its answer, the lanes that only make later proves faster. */
  private warmSpareLanes(): void {
    for (const [lane, slot] of this.slots) {
      if (slot.tool === null && !this.firstLanes().includes(lane)) this.orphan(this.warmStage(lane));
    }
  }

  /** What a dead prover left beside the claim's files (a generated test, a scratch file) is swept before this one writes there. */
  private sweep(claim: Claim): void {
    const dirs = new Set([claim.case.test, ...claim.case.drafts, ...claim.control.drafts].map((draft) => dirname(join(this.workspace, draft.path))));
    for (const dir of dirs) {
      try {
        // Contained above, and reached again from the workspace's real path without following a link: a link swapped in since is not swept through.
        sweepLeftovers(dir, this.workspace, this.processAlive);
      } catch {
        // An unreadable directory holds nothing vouch can sweep; the stage will say what is wrong with it.
      }
    }
  }
}

function asClaimError(error: unknown): Error {
  if (isClaimError(error)) return error;
  return new ClaimError('instrument', 'destroyed', `a stage failed: ${(error as Error)?.message ?? String(error)}`);
}
