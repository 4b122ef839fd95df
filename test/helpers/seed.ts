import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { REPO } from './project.js';

/**
 * The seed of a randomized test. VOUCH_SEED=N replays one sequence; without it
 * every run, CI included, uses the test's own fixed seed, so a red run can be
 * replayed and a green one is not luck. A failure names the seed and the
 * command line that replays it.
 */
export interface Seed {
  readonly value: number;
  /** Where the value came from. */
  readonly source: 'VOUCH_SEED' | 'fixed';
  /** "seed N (replay: VOUCH_SEED=N npx vitest run test/…)", for an assertion message; `value` defaults to this seed. */
  replay(value?: number): string;
}

export const SEED_VARIABLE = 'VOUCH_SEED';

/** Parses VOUCH_SEED: an integer from 0 to 2^32 - 1, or undefined when unset or empty. */
export function parseSeed(text: string | undefined): number | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0 || value > 0xffff_ffff) {
    throw new Error(`${SEED_VARIABLE}=${text} is not a seed: give an integer from 0 to ${0xffff_ffff}`);
  }
  return value;
}

/** The seed for the test file at `fileUrl` (its import.meta.url): VOUCH_SEED, or `fixed`. */
export function testSeed(fileUrl: string, fixed: number, env: NodeJS.ProcessEnv = process.env): Seed {
  const file = relative(REPO, fileURLToPath(fileUrl));
  const given = parseSeed(env[SEED_VARIABLE]);
  const value = given ?? fixed;
  return {
    value,
    source: given === undefined ? 'fixed' : 'VOUCH_SEED',
    replay: (at = value) => `seed ${at} (replay: ${SEED_VARIABLE}=${at} npx vitest run ${file})`,
  };
}

/** mulberry32: small, fast, and the same sequence of numbers in [0, 1) for the same seed everywhere. */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Runs `body`; an error it throws names the seed and how to replay it. */
export async function withSeed<T>(seed: Seed, body: () => T | Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (error) {
    if (error instanceof Error && !error.message.includes(`seed ${seed.value} (replay`)) error.message = `${seed.replay()}: ${error.message}`;
    throw error;
  }
}
