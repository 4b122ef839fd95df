import type { Phase, Stage } from '../core/claim.js';
import { ClaimError } from '../core/claimError.js';

/** How long one stage may take over one inspection, and over warming. */
export interface Deadlines {
  inspectMs: number;
  warmMs: number;
}

/** Generous for a cold tool on a slow machine; an infinite loop is still caught in half a minute. */
export const DEFAULT_DEADLINES: Deadlines = { inspectMs: 30_000, warmMs: 120_000 };

const EXPIRED = Symbol('expired');

/**
 * Races `work` against a timer owned here, outside the stage: a stage stuck in
 * a synchronous loop (a worker, a test) cannot stop its own clock. Resolves
 * with the work's value, or with EXPIRED; the caller decides who is at fault.
 */
export async function withDeadline<T>(work: Promise<T>, ms: number): Promise<T | typeof EXPIRED> {
  let timer: NodeJS.Timeout | undefined;
  const expiry = new Promise<typeof EXPIRED>((resolve) => {
    timer = setTimeout(() => resolve(EXPIRED), ms);
  });
  try {
    return await Promise.race([work, expiry]);
  } finally {
    clearTimeout(timer);
  }
}

export function expired<T>(value: T | typeof EXPIRED): value is typeof EXPIRED {
  return value === EXPIRED;
}

/**
 * The error for an expired inspection. Progress on claimant input means the
 * claimant's code (a loop in a test, a type that never resolves) held the
 * stage; no progress means the tool itself never got to it.
 */
export function deadlineError(stage: Stage, phase: Phase | 'warm', ms: number, progressed: boolean): ClaimError {
  const what = phase === 'warm' ? `warming the ${stage} stage` : `the ${stage} stage's inspection of the ${phase}`;
  if (progressed) {
    return new ClaimError(
      'claimant',
      'deadline',
      `${what} did not finish within ${ms} ms after it began on the claim's drafts; the stage was replaced. Look for an infinite loop or a runaway type in the drafts or the test`,
    );
  }
  return new ClaimError(
    'instrument',
    'deadline',
    `${what} did not finish within ${ms} ms before it reached the claim's drafts; the stage was replaced. The tool is stuck or the machine is overloaded: try again, or raise the deadline`,
  );
}

/** Spawn to `initialize` answered measured 160–270 ms; the default leaves room for a loaded 2-core machine. */
export const DEFAULT_INITIALIZE_MS = 5000;

/**
 * How long a language server (oxlint --lsp) may take to answer `initialize`:
 * VOUCH_PROVE_INITIALIZE_MS when it is a positive whole number of
 * milliseconds, else the default. A busy machine (a CI runner, many provers
 * at once) may need more.
 */
export function initializeMsFrom(env: NodeJS.ProcessEnv): number {
  const value = Number(env.VOUCH_PROVE_INITIALIZE_MS);
  return Number.isInteger(value) && value > 0 ? value : DEFAULT_INITIALIZE_MS;
}
