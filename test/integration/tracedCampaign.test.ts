import { afterAll, describe, expect, it } from 'vitest';
import { loadProject, type Project } from '../../src/api/project.js';
import { status } from '../../src/api/status.js';
import { traceAvailability } from '../../src/exec/trace/tracer.js';
import { inProcess } from '../helpers/inProcess.js';
import { cleanEnv } from '../helpers/project.js';
import { ObserverTracker, PATIENT } from '../helpers/observer.js';
import { mulberry32, testSeed, withSeed, type Seed } from '../helpers/seed.js';
import { campaignReport, failureLines, runCampaign, VARIANT_SEPARATOR, type Answer } from '../helpers/tracedCampaign.js';
import { CHECK_NAME, tracedFixture, type TracedFixture } from '../helpers/tracedFixture.js';
import { CATEGORIES, Draw } from '../helpers/tracedMutations.js';
import { positiveInteger } from '../helpers/envNumber.js';

/*
 * The mutation campaign on traced receipts (issue 17, "Correctness"): one traced run, through the
 * built CLI, of a check that reads, lists, probes and follows its inputs in every way
 * test/helpers/tracedFixture.ts describes; then seeded mutations from the categories of
 * test/helpers/tracedMutations.ts, each followed by a status in this process (the api, no
 * observer), a revert and another status; then the same against a running observer (the
 * api asking it, after its barrier), which looks at a traced receipt's evidence again itself, on
 * the same fixture and receipt once the first campaign has reverted all it did (run alone, it
 * makes its own). The loop and its ground truth are test/helpers/tracedCampaign.ts's. The
 * questions that only make the state dir and read the observer's counts are asked in process.
 *
 * Zero false CURRENT is the assertion. Precision misses (an irrelevant mutation answered STALE)
 * are counted and printed, with the first reason of each, but do not fail the test.
 *
 * VOUCH_CAMPAIGN_MUTATIONS=N sets the number of mutations (VOUCH_CAMPAIGN_OBSERVER_MUTATIONS=N
 * the observer's, 60 by default); VOUCH_CAMPAIGN_RERUN_EVERY=N the
 * ground-truth sample (1 CURRENT answer in N, default 50); VOUCH_SEED=N replays one sequence
 * (test/helpers/seed.ts). The suite runs 300 mutations, enough for every category to run (about
 * 25 s: each costs two in-process statuses of about 4 ms, and the ground truth a few dozen runs of
 * the check). The
 * proof the issue asks for, 10,000 mutations (two minutes on two idle cores, ten under load):
 *
 *   VOUCH_CAMPAIGN_MUTATIONS=10000 npx vitest run test/integration/tracedCampaign.test.ts
 */

const SEED = testSeed(import.meta.url, 17);


const MUTATIONS = positiveInteger('VOUCH_CAMPAIGN_MUTATIONS', 300);
const RERUN_EVERY = positiveInteger('VOUCH_CAMPAIGN_RERUN_EVERY', 50);
const RETRACE_EVERY = positiveInteger('VOUCH_CAMPAIGN_RETRACE_EVERY', 2_500);
/** The same campaign answered by an observer: each answer a socket round trip and a barrier, so fewer by default. */
const OBSERVER_MUTATIONS = positiveInteger('VOUCH_CAMPAIGN_OBSERVER_MUTATIONS', 60);
const OBSERVER_SEED = testSeed(import.meta.url, 1717);

const availability = traceAvailability();
const TITLE = availability.available ? 'the traced mutation campaign' : `the traced mutation campaign (SKIPPED: tracing cannot run here: ${availability.code}: ${availability.message})`;

type StatusAnswer = Answer & { receipt: unknown; reuseEligible: boolean };

/** Runs the check traced through the CLI, as a user does; returns the digest it printed. */
function traceRun(fx: TracedFixture, env: NodeJS.ProcessEnv): string {
  const result = fx.project.vouch(['run', CHECK_NAME], { env });
  if (result.code !== 0) throw new Error(`vouch run ${CHECK_NAME} exited ${result.code}:\n${result.stdout}\n${result.stderr}`);
  const line = result.stdout.split('\n').find((text) => text.startsWith('{"digest"'));
  if (!line) throw new Error(`the traced run printed no digest:\n${result.stdout}\n${result.stderr}`);
  return JSON.parse(line).digest;
}

/**
 * The fixture and its first traced run, made by the first campaign and left to the next: a
 * campaign ends with every mutation reverted (a revert not CURRENT is traced again, and must print
 * the first run's digest), so the next one starts from the same tree and receipt, and holds them
 * to the same first assertions. A campaign that fails leaves it to be removed, and the next makes
 * its own.
 */
let prepared: { fx: TracedFixture; baseline: string } | null = null;

afterAll(() => {
  prepared?.fx.remove();
  prepared = null;
});

async function prepare(env: NodeJS.ProcessEnv): Promise<{ fx: TracedFixture; baseline: string }> {
  const fx = tracedFixture('traced-campaign');
  try {
    // The state dir made before the run, and the root's change time left well behind: the first
    // `vouch run` in a fresh project makes it, and a change to the root (which every Node
    // program looks up) within the run's clock slack would count as changed during the run.
    expect((await inProcess(fx.project).vouch(['status'], { env })).code).not.toBeNull();
    await new Promise((resolve) => setTimeout(resolve, 150));
    return { fx, baseline: traceRun(fx, env) };
  } catch (error) {
    fx.remove();
    throw error;
  }
}

/** One campaign: the fixture after its traced run, then the seeded mutations, each answered by `via`. */
async function campaign(via: 'scan' | 'observer', mutations: number, seed: Seed): Promise<void> {
  const observers = new ObserverTracker();
  const env = cleanEnv(via === 'observer' ? { VOUCH_OBSERVER_TIMEOUT_MS: PATIENT } : {});
  const { fx, baseline } = prepared ?? (await prepare(env));
  prepared = null;
  let passed = false;
  let fallbacks = 0;
  try {
    const project: Project = await loadProject({ cwd: fx.root });
    const statusNow = async (): Promise<StatusAnswer> => {
      const report = await status(project, [CHECK_NAME], env, { observer: via === 'observer' ? 'auto' : 'off', mode: 'sync' });
      if (report.observation.source !== via) fallbacks++;
      const [check] = report.checks;
      if (!check) throw new Error('status answered no check');
      return check;
    };
    if (via === 'observer') observers.start(fx.project, [], { env });
    const first = await statusNow();
    expect(first.freshness, JSON.stringify(first.reasons)).toBe('CURRENT');
    expect(first.reuseEligible).toBe(true);
    const evidence = (first.receipt as { evidence?: { mode: string; notes: { code: string }[] } } | null)?.evidence;
    expect(evidence?.mode, 'the receipt is a traced one').toBe('traced');
    const notes = evidence?.notes.map((note) => note.code) ?? [];
    expect(notes).not.toContain('trace-unavailable');
    expect(notes).not.toContain('trace-incomplete');
    expect(fx.runProgram().digest, 'an untraced run prints what the traced run printed').toBe(baseline);

    const result = await runCampaign({
      fx,
      draw: new Draw(mulberry32(seed.value)),
      mutations,
      baseline,
      status: statusNow,
      trace: async () => traceRun(fx, env),
      rerunEvery: RERUN_EVERY,
      rerunFirst: 2,
      proveFirst: 1,
      retraceEvery: RETRACE_EVERY,
    });
    // How the observer looked at the evidence: whole, or only where its events said (src/observer/keptEvidence.ts).
    const looks = via === 'observer' ? (await inProcess(fx.project).json(['observer'], { env })).evidence_looks : null;
    console.log(
      campaignReport(result, `traced campaign, answered by ${via === 'scan' ? 'a scan in this process' : 'an observer'}, ${seed.replay()}`) +
        (via === 'observer' ? `\nanswers not from the observer (a fallback to a scan): ${fallbacks}\nevidence looks: ${looks.full} whole, ${looks.partial} partial, ${looks.entries} entries` : ''),
    );
    if (looks) expect(looks.partial, 'answers from a partial look at the evidence').toBeGreaterThan(0);

    // 300 draws are enough for every category with the fixed seeds; fewer may miss one.
    if (mutations >= 300) {
      for (const category of CATEGORIES) {
        const ran = [...result.byVariant.entries()].filter(([key]) => key.startsWith(`${category.name}${VARIANT_SEPARATOR}`));
        expect(ran.length, `no mutation of "${category.name}" ran`).toBeGreaterThan(0);
      }
    }
    expect(result.fixtureMistakes.length, `relevant mutations that change nothing the check prints, a mistake in the campaign:\n${failureLines(result.fixtureMistakes)}`).toBe(0);
    expect(result.falseCurrent.length, `false CURRENT answers, ${seed.replay()}:\n${failureLines(result.falseCurrent)}`).toBe(0);
    expect(fallbacks, `answers that were not ${via === 'scan' ? "a scan's" : "the observer's"}`).toBe(0);
    passed = true;
  } finally {
    const problems = await observers.cleanup();
    if (passed && problems.length === 0) prepared = { fx, baseline };
    else fx.remove();
    expect(problems, 'observers that would not stop').toEqual([]);
  }
}

describe(TITLE, () => {
  it.skipIf(!availability.available)(`finds no false CURRENT over ${MUTATIONS} mutations, each answered by a scan`, async () => {
    await withSeed(SEED, () => campaign('scan', MUTATIONS, SEED));
  }, 3_600_000);

  it.skipIf(!availability.available)(`finds no false CURRENT over ${OBSERVER_MUTATIONS} mutations, each answered by an observer after its barrier`, async () => {
    await withSeed(OBSERVER_SEED, () => campaign('observer', OBSERVER_MUTATIONS, OBSERVER_SEED));
  }, 3_600_000);
});
