import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Freshness } from '../../src/core/decide.js';
import type { TracedFixture } from './tracedFixture.js';
import { CATEGORIES, drawCategory, type Category, type Draw } from './tracedMutations.js';

/**
 * The traced campaign's loop, apart from how it asks for a status and how it traces: the test
 * asks the real api; the same loop can be pointed at anything else that answers.
 *
 * Per mutation: apply it, ask; a relevant one answered CURRENT is a false CURRENT. Ground truth:
 * a sample of CURRENT answers (1 in `rerunEvery`, and the first `rerunFirst` of every variant)
 * is held to a real, untraced run of the check, which must print the receipt's digest. The first
 * `proveFirst` of every relevant variant are run too, to prove the campaign: a relevant mutation that
 * changes nothing the check prints is a mistake in the fixture (the own-cache rule aside).
 * Then revert and ask again: a revert not CURRENT is counted, and the check is traced again.
 */

export interface Answer {
  freshness: Freshness;
  reasons: { code: string; message: string }[];
}

export interface CampaignOptions {
  fx: TracedFixture;
  draw: Draw;
  mutations: number;
  /** The digest the receipt's run printed. */
  baseline: string;
  status(): Promise<Answer>;
  /** Traces the check again (a new receipt); returns the digest it printed. */
  trace(): Promise<string>;
  rerunEvery: number;
  /** The first this many CURRENT answers of every irrelevant variant are held to a real run. */
  rerunFirst: number;
  /** The first this many answers of every relevant variant are run too, to prove the mutation relevant. */
  proveFirst: number;
  retraceEvery: number;
  categories?: readonly Category[];
}

export interface Tally {
  mutations: number;
  current: number;
  stale: number;
  unverified: number;
  reruns: number;
  revertMisses: number;
}

export interface Failure {
  index: number;
  category: string;
  variant: string;
  detail: string;
  why: string;
}

export interface CampaignResult {
  byVariant: Map<string, Tally>;
  /** The first reason of each irrelevant variant answered otherwise than CURRENT. */
  missReasons: Map<string, string>;
  falseCurrent: Failure[];
  fixtureMistakes: Failure[];
  revertMisses: Failure[];
  retraceMisses: Failure[];
  elapsedMs: number;
  statusMs: number;
  answers: number;
  reruns: number;
  retraces: number;
}

export const VARIANT_SEPARATOR = ' :: ';

const emptyTally = (): Tally => ({ mutations: 0, current: 0, stale: 0, unverified: 0, reruns: 0, revertMisses: 0 });

export async function runCampaign(options: CampaignOptions): Promise<CampaignResult> {
  const { fx, draw, baseline } = options;
  const categories = options.categories ?? CATEGORIES;
  const result: CampaignResult = {
    byVariant: new Map(),
    missReasons: new Map(),
    falseCurrent: [],
    fixtureMistakes: [],
    revertMisses: [],
    retraceMisses: [],
    elapsedMs: 0,
    statusMs: 0,
    answers: 0,
    reruns: 0,
    retraces: 0,
  };
  const started = Date.now();
  const ask = async () => {
    const at = performance.now();
    const answer = await options.status();
    result.statusMs += performance.now() - at;
    result.answers++;
    return answer;
  };
  // A run in a mutated tree rewrites the check's own caches from what it read there; they are
  // put back before the revert, so that the reverted tree is the receipt's again.
  const caches: { restore: (() => void) | null } = { restore: null };
  const rerun = (counts: Tally) => {
    caches.restore ??= snapshotFiles(fx.ownCaches.map((path) => join(fx.root, path)));
    counts.reruns++;
    result.reruns++;
    return fx.runProgram().digest;
  };
  const retrace = async (index: number, why: string) => {
    result.retraces++;
    const digest = await options.trace();
    // A mistake of the campaign's reverts, not of vouch: the tree must be as the first run found it.
    if (digest !== baseline) throw new Error(`after ${why} (mutation #${index}), the check prints ${digest}, not ${baseline}: a revert did not put the tree back`);
    const again = await ask();
    if (again.freshness !== 'CURRENT') result.retraceMisses.push({ index, category: '-', variant: '-', detail: why, why: `a fresh traced run is ${again.freshness}: ${messages(again)}` });
  };

  for (let index = 0; index < options.mutations; index++) {
    const category = drawCategory(draw, categories);
    const applied = category.apply(fx, draw);
    const key = `${category.name}${VARIANT_SEPARATOR}${applied.variant}`;
    const counts = result.byVariant.get(key) ?? emptyTally();
    result.byVariant.set(key, counts);
    counts.mutations++;
    const failure = (why: string): Failure => ({ index, category: category.name, variant: applied.variant, detail: applied.detail, why });

    const answer = await ask();
    if (answer.freshness === 'CURRENT') counts.current++;
    else if (answer.freshness === 'STALE') counts.stale++;
    else counts.unverified++;

    if (category.expect === 'stale') {
      if (answer.freshness === 'CURRENT') {
        // The ground truth, for the report: what the check prints now.
        const digest = category.byRule || counts.current > options.proveFirst + 2 ? null : rerun(counts);
        const truth = digest === null ? (category.byRule ? ' (relevant by the own-cache rule)' : '') : digest === baseline ? ` (the check still prints ${baseline})` : ` (the check now prints ${digest}, not ${baseline})`;
        result.falseCurrent.push(failure(`CURRENT after a relevant mutation${truth}`));
      }
      else if (!category.byRule && counts.mutations <= options.proveFirst && rerun(counts) === baseline) result.fixtureMistakes.push(failure('the check printed the same digest: this mutation is not relevant'));
    } else if (answer.freshness !== 'CURRENT') {
      if (!result.missReasons.has(key)) result.missReasons.set(key, `${answer.freshness}: ${messages(answer)}`);
    } else if (counts.current <= options.rerunFirst || draw.int(options.rerunEvery) === 0) {
      const digest = rerun(counts);
      if (digest !== baseline) result.falseCurrent.push(failure(`CURRENT, but the check now prints ${digest}, not ${baseline}`));
    }

    caches.restore?.();
    caches.restore = null;
    applied.revert();
    const after = await ask();
    if (after.freshness !== 'CURRENT') {
      counts.revertMisses++;
      if (result.revertMisses.length < 20) result.revertMisses.push(failure(`${after.freshness} after the revert: ${messages(after)}`));
      await retrace(index, `the revert of ${key}`);
    } else if (draw.int(options.rerunEvery * 4) === 0) {
      // The reverted tree is the receipt's: the check must print the receipt's digest.
      const digest = rerun(counts);
      if (digest !== baseline) result.falseCurrent.push(failure(`CURRENT after the revert, but the check now prints ${digest}, not ${baseline}`));
    }
    if ((index + 1) % options.retraceEvery === 0 && index + 1 < options.mutations) await retrace(index, `mutation ${index + 1} (a periodic fresh receipt)`);
  }
  result.elapsedMs = Date.now() - started;
  return result;
}

/** The bytes of these files (or that they are absent), and how to put them back. */
function snapshotFiles(paths: readonly string[]): () => void {
  const saved = paths.map((path) => ({ path, bytes: existsSync(path) ? readFileSync(path) : null }));
  return () => {
    for (const { path, bytes } of saved) {
      if (bytes === null) rmSync(path, { force: true });
      else if (!existsSync(path) || !readFileSync(path).equals(bytes)) {
        mkdirSync(dirname(path), { recursive: true });
        writeFileSync(path, bytes);
      }
    }
  };
}

/** The failures in a few lines, for an assertion's message. */
export function failureLines(failures: readonly Failure[], most = 10): string {
  const lines = failures.slice(0, most).map((f) => `#${f.index} ${f.category} / ${f.variant}: ${f.detail}: ${f.why}`);
  if (failures.length > most) lines.push(`and ${failures.length - most} more`);
  return lines.join('\n');
}

function messages(answer: Answer): string {
  return answer.reasons.map((reason) => `${reason.code}: ${reason.message}`).join('; ');
}

/** The per-category and per-variant table, the totals, and the failures, for the test's output. */
export function campaignReport(result: CampaignResult, title: string, categories: readonly Category[] = CATEGORIES): string {
  const lines: string[] = [];
  const byCategory = new Map<string, Tally>();
  for (const [key, t] of result.byVariant) {
    const name = key.split(VARIANT_SEPARATOR)[0]!;
    const sum = byCategory.get(name) ?? emptyTally();
    for (const field of Object.keys(sum) as (keyof Tally)[]) sum[field] += t[field];
    byCategory.set(name, sum);
  }
  const cells = (t: Tally) => [t.mutations, t.current, t.stale, t.unverified, t.reruns, t.revertMisses].map((n, i) => String(n).padStart([6, 7, 6, 6, 6, 7][i]!)).join(' ');
  lines.push(title, `${'category / variant'.padEnd(76)} ${'expect'.padEnd(7)} ${'muts'.padStart(6)} ${'CURRENT'.padStart(7)} ${'STALE'.padStart(6)} ${'UNVER'.padStart(6)} ${'reruns'.padStart(6)} ${'reverts'.padStart(7)}`);
  let missed = 0;
  let revertMisses = 0;
  for (const category of categories) {
    const t = byCategory.get(category.name);
    if (!t) continue;
    if (category.expect === 'current') missed += t.stale + t.unverified;
    revertMisses += t.revertMisses;
    lines.push(`${category.name.padEnd(76)} ${(category.expect === 'stale' ? (category.byRule ? 'stale*' : 'stale') : 'current').padEnd(7)} ${cells(t)}`);
    const variants = [...result.byVariant.entries()].filter(([key]) => key.startsWith(`${category.name}${VARIANT_SEPARATOR}`)).sort(([a], [b]) => (a < b ? -1 : 1));
    for (const [key, v] of variants) lines.push(`  ${key.split(VARIANT_SEPARATOR)[1]!.padEnd(74)} ${''.padEnd(7)} ${cells(v)}`);
  }
  lines.push(
    '(stale*: relevant by the own-cache rule: the next run would rewrite it, but a receipt holds what its run left there)',
    `${result.byVariant.size === 0 ? 0 : [...byCategory.values()].reduce((sum, t) => sum + t.mutations, 0)} mutations in ${(result.elapsedMs / 1000).toFixed(1)} s; ` +
      `${result.answers} status answers, ${(result.statusMs / Math.max(1, result.answers)).toFixed(2)} ms each; ${result.reruns} ground-truth reruns; ${result.retraces} traced runs`,
    `false CURRENT: ${result.falseCurrent.length}; precision misses (an irrelevant mutation not CURRENT): ${missed}; reverts not CURRENT: ${revertMisses}; fresh traced runs not CURRENT: ${result.retraceMisses.length}`,
  );
  if (result.missReasons.size > 0) {
    lines.push('precision misses, the first reason of each variant:');
    for (const [key, why] of result.missReasons) lines.push(`  ${key}: ${why}`);
  }
  for (const [name, list] of [
    ['false CURRENT', result.falseCurrent],
    ['campaign mistakes', result.fixtureMistakes],
    ['reverts not CURRENT (the first 20)', result.revertMisses],
    ['fresh traced runs not CURRENT', result.retraceMisses],
  ] as const) {
    if (list.length === 0) continue;
    lines.push(`${name}:`);
    for (const f of list.slice(0, 20)) lines.push(`  #${f.index} ${f.category} / ${f.variant}: ${f.detail}: ${f.why}`);
    if (list.length > 20) lines.push(`  and ${list.length - 20} more`);
  }
  return lines.join('\n');
}
