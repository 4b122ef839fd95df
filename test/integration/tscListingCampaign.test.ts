import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadProject } from '../../src/api/project.js';
import { status } from '../../src/api/status.js';
import { traceAvailability } from '../../src/exec/trace/tracer.js';
import { inProcess } from '../helpers/inProcess.js';
import { until } from '../helpers/observer.js';
import { cleanEnv } from '../helpers/project.js';
import { mulberry32, testSeed, withSeed } from '../helpers/seed.js';
import { CHECK, mutate, randomConfigVariant, tscProject, VARIANTS, type Mutation, type TscOutput, type Variant } from '../helpers/tscCampaign.js';
import { Draw } from '../helpers/tracedMutations.js';
import { positiveInteger } from '../helpers/envNumber.js';
import { newestChangeMs, SETTLE_MS } from '../helpers/settle.js';

/*
 * The mutation campaign on a traced tsc's listings (src/core/listingNames.ts): a listing made
 * only by TypeScript's compiler is bound to the names tsc can include, which is sound only if tsc
 * cannot act on the names left out. Per variant of test/helpers/tscCampaign.ts (include globs,
 * allowJs and JSON, package globs, patterns that can match dot names, files only, extends, type
 * roots, and VOUCH_TSC_CAMPAIGN_CONFIGS (2 by default) whose include patterns are drawn at random):
 * one traced run, then seeded mutations, each followed by a status in this process (the api, no
 * observer). The ground truth is the same tsc run untraced: its stdout (--listFiles and the
 * diagnostics) and exit code. It runs in this process (tscInProcess in test/helpers/tscCampaign.ts:
 * the compiler bin/tsc runs, without a Node start and TypeScript's loading each time), held to a
 * tsc process: on each baseline to the traced run's (its log and exit code, the same tree), and
 * on the first output that differs from a baseline to an untraced tsc process's.
 *
 * The traced runs run in this process too, through the CLI's own dispatch
 * (test/helpers/inProcess.ts): the same `vouch run`, strace and tsc included, without a Node
 * start each. Nothing here is about a process of vouch's own (its exit, its PATH, Node's start).
 * A traced run takes a file whose ctime is within its clock slack of its start for one changed
 * while it ran, so a run in this process first waits until the last edit is settled (settled
 * below), as a run through the CLI began long after it.
 *
 * - CURRENT: always rerun; any difference from the baseline is a false CURRENT, which fails the test.
 * - STALE: rerun 1 in VOUCH_TSC_CAMPAIGN_STALE_EVERY (every one by default); an unchanged output
 *   is a precision miss, counted, not a failure.
 * - Then the revert, which must be CURRENT again (a miss is counted, and the check traced again).
 *
 * VOUCH_TSC_CAMPAIGN_MUTATIONS=N spreads N mutations over the variants (40 by default);
 * VOUCH_SEED=N replays one sequence (each variant draws from the seed and its own index, so one
 * variant replays alone: -t VARIANT). The long run:
 *
 *   VOUCH_TSC_CAMPAIGN_MUTATIONS=1000 npx vitest run --project integration test/integration/tscListingCampaign.test.ts
 */

const SEED = testSeed(import.meta.url, 2024);


const MUTATIONS = positiveInteger('VOUCH_TSC_CAMPAIGN_MUTATIONS', 40);
const STALE_EVERY = positiveInteger('VOUCH_TSC_CAMPAIGN_STALE_EVERY', 1);
const RANDOM_CONFIGS = positiveInteger('VOUCH_TSC_CAMPAIGN_CONFIGS', 2);

/** Each variant draws from the seed and its own index, so that one replays alone. */
const drawFor = (index: number) => new Draw(mulberry32((SEED.value + Math.imul(index, 0x9e3779b9)) >>> 0));
const ALL: readonly Variant[] = [...VARIANTS, ...Array.from({ length: RANDOM_CONFIGS }, (_, at) => randomConfigVariant(drawFor(1000 + at), at))];
const PER_VARIANT = Math.ceil(MUTATIONS / ALL.length);

const availability = traceAvailability();
const TITLE = availability.available ? 'the tsc listing campaign' : `the tsc listing campaign (SKIPPED: tracing cannot run here: ${availability.code}: ${availability.message})`;

interface Tally {
  mutations: number;
  current: number;
  stale: number;
  other: number;
  /** STALE answers held to a rerun. */
  staleRerun: number;
  /** Of those, the ones whose output had not changed. */
  precisionMisses: number;
  revertMisses: number;
  falseCurrent: number;
}

const emptyTally = (): Tally => ({ mutations: 0, current: 0, stale: 0, other: 0, staleRerun: 0, precisionMisses: 0, revertMisses: 0, falseCurrent: 0 });

interface Failure {
  variant: string;
  index: number;
  mutation: string;
  why: string;
}

const byVariant = new Map<string, Tally>();
const byClass = new Map<string, Tally>();
const falseCurrent: Failure[] = [];
const missReasons = new Map<string, string>();
let tscRuns = 0;
let tscMs = 0;
let tscProcesses = 0;
/** Whether an output that differs from a baseline has been held to a tsc process yet. */
let errorsMatched = false;
let traces = 0;
const started = Date.now();

function add(key: string, map: Map<string, Tally>, field: keyof Tally, by = 1): void {
  const tally = map.get(key) ?? emptyTally();
  tally[field] += by;
  map.set(key, tally);
}

/**
 * A traced run takes a file it read whose ctime is not before its start, less a clock slack of
 * 20 ms (fs/runEvidence.ts), for one changed while it ran. A run through the CLI starts long after
 * the campaign's last change (a Node start and vouch's loading); one in this process may start a
 * few milliseconds after it. So it first waits until nothing in the project changed within
 * SETTLE_MS: the revert is then one made before the run, as the campaign means it.
 */


async function settled(root: string): Promise<void> {
  const newest = newestChangeMs(root);
  await until(() => Date.now() > newest + SETTLE_MS, `the last change to be ${SETTLE_MS} ms old`, 5_000, 5);
}

const same = (a: TscOutput, b: TscOutput) => a.code === b.code && a.stdout === b.stdout;
const shown = (output: TscOutput) => `exit ${output.code}:\n${output.stdout.trimEnd()}`;

async function campaign(variant: Variant, index: number): Promise<void> {
  const draw = drawFor(index);
  const fx = tscProject(variant);
  const env = cleanEnv();
  try {
    const project = await loadProject({ cwd: fx.root });
    const statusNow = async () => {
      const report = await status(project, [CHECK], env, { observer: 'off', mode: 'sync' });
      const [check] = report.checks;
      if (!check) throw new Error('status answered no check');
      return check;
    };
    const trace = async () => {
      traces++;
      await settled(fx.root);
      const result = await inProcess(fx.project).vouch(['run', CHECK], { env });
      // A random config may take in the links' store, whose files fail: a FAIL receipt is held to the truth alike.
      if (!/receipt \S+ \(traced/.test(result.stdout + result.stderr)) throw new Error(`vouch run ${CHECK} left no traced receipt (exit ${result.code}):\n${result.stdout}\n${result.stderr}`);
    };
    const runTsc = () => {
      const at = performance.now();
      const output = fx.compile();
      tscMs += performance.now() - at;
      tscRuns++;
      if (!errorsMatched && !same(output, baseline)) {
        errorsMatched = true;
        tscProcesses++;
        expect(output, 'tsc in this process prints what a tsc process prints on a changed tree').toEqual(fx.runTsc());
      }
      return output;
    };
    const messages = (answer: { reasons: { code: string; message: string }[] }) => answer.reasons.map((reason) => `${reason.code}: ${reason.message}`).join('; ');

    // The state dir made first, and the root's change time left behind the run's clock slack
    // (tsc lists the root in some variants), as test/e2e/tracedPrecision.test.ts does.
    expect((await inProcess(fx.project).vouch(['status'], { env })).code).not.toBeNull();
    await new Promise((resolve) => setTimeout(resolve, 150));
    await trace();
    const baseline = fx.compile();
    if (!variant.name.startsWith('random-')) expect(baseline.code, `the fixture compiles: ${shown(baseline)}`).toBe(0);
    const first = await statusNow();
    expect(first.freshness, messages(first)).toBe('CURRENT');
    // The traced run was tsc in a process of its own, on this same tree: what it printed (its log) and its exit code.
    const receipt = first.receipt as { logPath: string; exitCode: number | null; evidence?: { mode: string; notes: { code: string }[] } } | null;
    const traced = { code: receipt?.exitCode ?? null, stdout: receipt ? readFileSync(join(fx.root, '.vouch', receipt.logPath), 'utf8') : '' };
    expect(baseline, 'tsc in this process prints what the traced tsc process printed').toEqual(traced);
    const evidence = receipt?.evidence;
    expect(evidence?.mode, 'the receipt is a traced one').toBe('traced');
    expect(evidence?.notes.map((note) => note.code) ?? []).not.toContain('trace-incomplete');

    for (let at = 0; at < PER_VARIANT; at++) {
      const mutation: Mutation = mutate(fx, draw);
      const key = `${mutation.op} ${mutation.nameClass}`;
      const count = (field: keyof Tally) => {
        add(variant.name, byVariant, field);
        add(key, byClass, field);
      };
      count('mutations');
      const answer = await statusNow();
      if (answer.freshness === 'CURRENT') {
        count('current');
        const now = runTsc();
        if (!same(now, baseline)) {
          count('falseCurrent');
          falseCurrent.push({ variant: variant.name, index: at, mutation: mutation.detail, why: `CURRENT, but tsc now prints ${shown(now)}\ninstead of ${shown(baseline)}` });
        }
      } else {
        count(answer.freshness === 'STALE' ? 'stale' : 'other');
        if (draw.int(STALE_EVERY) === 0) {
          count('staleRerun');
          if (same(runTsc(), baseline)) {
            count('precisionMisses');
            if (!missReasons.has(key)) missReasons.set(key, `${variant.name}: ${mutation.detail}: ${answer.freshness}: ${messages(answer)}`);
          }
        }
      }
      mutation.revert();
      const after = await statusNow();
      if (after.freshness !== 'CURRENT') {
        count('revertMisses');
        await trace();
        const again = await statusNow();
        expect(again.freshness, `a fresh traced run after the revert of ${mutation.detail}: ${messages(again)}`).toBe('CURRENT');
        // A mistake of the campaign's reverts, not of vouch: the tree must be the baseline's.
        expect(same(runTsc(), baseline), `the revert of ${mutation.detail} put the tree back`).toBe(true);
      }
    }
  } finally {
    fx.remove();
  }
  const failures = falseCurrent.filter((failure) => failure.variant === variant.name);
  expect(failures.length, `false CURRENT answers in ${variant.name}, ${SEED.replay()}:\n${failures.map((f) => `#${f.index} ${f.mutation}: ${f.why}`).join('\n\n')}`).toBe(0);
}

function table(title: string, map: Map<string, Tally>): string[] {
  const columns: (keyof Tally)[] = ['mutations', 'current', 'stale', 'other', 'staleRerun', 'precisionMisses', 'revertMisses', 'falseCurrent'];
  const heads = ['muts', 'CURRENT', 'STALE', 'other', 'STALE rerun', 'precision miss', 'revert miss', 'FALSE CURRENT'];
  const lines = [`${title.padEnd(24)} ${heads.map((head) => head.padStart(head.length < 7 ? 7 : head.length)).join(' ')}`];
  const total = emptyTally();
  for (const [key, tally] of [...map].sort(([a], [b]) => (a < b ? -1 : 1))) {
    for (const column of columns) total[column] += tally[column];
    lines.push(`${key.padEnd(24)} ${columns.map((column, i) => String(tally[column]).padStart(Math.max(7, heads[i]!.length))).join(' ')}`);
  }
  lines.push(`${'total'.padEnd(24)} ${columns.map((column, i) => String(total[column]).padStart(Math.max(7, heads[i]!.length))).join(' ')}`);
  return lines;
}

describe(TITLE, () => {
  afterAll(() => {
    if (byVariant.size === 0) return;
    const lines = [
      `tsc listing campaign, ${SEED.replay()}, ${PER_VARIANT} mutations per variant, STALE reruns 1 in ${STALE_EVERY}`,
      ...table('variant', byVariant),
      ...table('mutation / name class', byClass),
      `${((Date.now() - started) / 1000).toFixed(1)} s; ${traces} traced runs; ${tscRuns} untraced tsc runs in this process, ${(tscMs / Math.max(1, tscRuns)).toFixed(0)} ms each; ${tscProcesses} tsc processes`,
    ];
    if (missReasons.size > 0) lines.push('precision misses, the first of each mutation / name class:', ...[...missReasons].map(([key, why]) => `  ${key}: ${why}`));
    for (const failure of falseCurrent.slice(0, 20)) lines.push(`FALSE CURRENT ${failure.variant} #${failure.index}: ${failure.mutation}: ${failure.why}`);
    console.log(lines.join('\n'));
  });

  ALL.forEach((variant, index) => {
    it.skipIf(!availability.available)(`${variant.name} (${variant.about}): no false CURRENT over ${PER_VARIANT} mutations`, async () => {
      await withSeed(SEED, () => campaign(variant, index));
    }, 3_600_000);
  });
});
