import { type Baseline, linesOf, splitByBaseline as split, takeBaseline as take } from './draftBaseline.js';
import type { Finding } from './residentLinter.js';

/**
 * A drafted file's lint baseline: what the linter already found in the file's
 * text on disk, matched to the draft's findings by rule, message and line
 * text, counted (draftBaseline.ts).
 */
export type { Baseline };

/** Lines as the linters number them (LSP and ESLint both break at \r\n, \r and \n). */
const BREAKS = /\r\n|\r|\n/;

/**
 * The baseline of a disk text from the findings the linter gave on it
 * (already filtered to those that count). A text that did not parse
 * (`unparsed`) has no baseline: the linter ran none of its rules there, so
 * nothing on the draft can be shown to be old, and all of it is the claimant's.
 */
export function takeBaseline(findings: readonly Finding[], text: string, unparsed: boolean): Baseline {
  return unparsed ? new Map() : take(findings, linesOf(text, BREAKS));
}

/** Splits a draft's findings (those that count) into the ones the baseline already had and the new ones, each in the linter's order. */
export function splitByBaseline(findings: readonly Finding[], text: string, baseline: Baseline): { old: Finding[]; added: Finding[] } {
  return split(findings, linesOf(text, BREAKS), baseline);
}

/** How many disk texts' baselines one resident linter keeps: enough for a session's drafted files, bounded for a long-lived prover. */
const KEPT = 256;

/**
 * Baselines taken, per (path, digest of the disk text), for one running
 * linter: a warm prove does not lint an unchanged disk file again. A changed
 * disk file has another digest; a changed config restarts the linter, which
 * drops them all (clear). The promise is kept, so two drafts of the same
 * file in flight share one lint; a failed one is forgotten.
 */
export class BaselineCache {
  #entries = new Map<string, Promise<Baseline>>();

  get size(): number {
    return this.#entries.size;
  }

  take(path: string, digest: string, lint: () => Promise<Baseline>): Promise<Baseline> {
    const k = `${path}\0${digest}`;
    let entry = this.#entries.get(k);
    if (entry === undefined) {
      entry = lint();
      this.#entries.set(k, entry);
      const taken = entry;
      taken.catch(() => {
        if (this.#entries.get(k) === taken) this.#entries.delete(k);
      });
      // The oldest goes first: Map keeps insertion order.
      if (this.#entries.size > KEPT) this.#entries.delete(this.#entries.keys().next().value as string);
    }
    return entry;
  }

  clear(): void {
    this.#entries = new Map();
  }
}
