import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** A heap that grew past this factor of what the last full collection left, plus the slack, is collected. */
const GROWTH = 1.25;
const SLACK_BYTES = 16 << 20;

/**
 * Each inspection builds a new program and checker; the old ones are garbage,
 * but V8 grows the old generation rather than collect it while the heap is
 * far from its limit. Measured on the demo claim: the type worker's heap went
 * from 170 to 321 MB in use over 120 inspections, and back to 130 MB after a
 * full collection, so a resident prover's RSS roughly doubled in 100 proves
 * without holding anything more. Collecting when the heap has grown well past
 * what the last collection left keeps it near what it holds.
 */
export class HeapKeeper {
  readonly #collect: () => void;
  readonly #used: () => number;
  /**
   * Bytes in use after the last full collection. Before the first one, what the first settle() saw: an
   * overestimate (the warming's garbage is in it), which only delays the first collection. Collecting
   * right after warming would put a pause of hundreds of milliseconds before the first inspection.
   */
  #live: number | undefined;

  constructor(collect: () => void, used: () => number = () => getHeapStatistics().used_heap_size) {
    this.#collect = collect;
    this.#used = used;
  }

  /** Called when a request has been answered: collects only when the heap has grown enough to be worth a pause. */
  settle(): boolean {
    const used = this.#used();
    if (this.#live === undefined) {
      this.#live = used;
      return false;
    }
    if (used < this.#live * GROWTH + SLACK_BYTES) return false;
    this.#collect();
    this.#live = this.#used();
    return true;
  }
}

/**
 * This isolate's full collection, without starting Node with --expose-gc: the
 * flag is set for one new context and cleared again, as Jest's leak detector
 * does (https://github.com/jestjs/jest/blob/main/packages/jest-leak-detector/src/index.ts),
 * so no other context (a test's) sees a `gc` global. Undefined where that is refused.
 */
export function fullCollection(): (() => void) | undefined {
  const exposed = (globalThis as { gc?: unknown }).gc;
  if (typeof exposed === 'function') return exposed as () => void;
  try {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as unknown;
    return typeof gc === 'function' ? (gc as () => void) : undefined;
  } catch {
    return undefined;
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
}
