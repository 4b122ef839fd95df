import type { Finding } from './residentLinter.js';

/**
 * A drafted file's lint baseline: what the linter already found in the file's
 * text on disk, before the claim. A finding on the draft that matches one of
 * these is the workspace's; every other finding is the claimant's.
 *
 * A draft moves lines (an edit above an old error shifts it), so findings are
 * not matched by line number but by key: the rule, the message and the text
 * of the line the finding starts on, with surrounding whitespace trimmed (so
 * re-indenting keeps the key). Keys are counted, not merely looked up: a
 * disk text with one `==` violation on `if (a == b) {` and a draft with two
 * such lines gives one workspace finding and one claimant finding. So a draft
 * can never hide a NEW error behind an old one: each old finding excuses at
 * most one finding of the draft, with the same rule, message and line text.
 * What it may do is call an old error new: one whose own line the draft
 * edited (`a == b` → `a == c`) is the claimant's, who touched it.
 *
 * Among equal keys, the first ones in the draft (in the linter's order) are
 * taken as the old ones; which is which cannot be told, only how many.
 */
export type Baseline = ReadonlyMap<string, number>;

/** The lines of a text as the linters number them (LSP and ESLint both break at \r\n, \r and \n). */
function lines(text: string): string[] {
  return text.split(/\r\n|\r|\n/);
}

/** The key a finding is matched by: rule, message and the trimmed text of its line. */
function key(finding: Finding, textLines: readonly string[]): string {
  const line = finding.line === undefined ? '' : (textLines[finding.line - 1] ?? '').trim();
  return [finding.code ?? '', finding.message, line].join('\0');
}

/**
 * The baseline of a disk text from the findings the linter gave on it
 * (already filtered to those that count). A text that did not parse
 * (`unparsed`) has no baseline: the linter ran none of its rules there, so
 * nothing on the draft can be shown to be old, and all of it is the claimant's.
 */
export function takeBaseline(findings: readonly Finding[], text: string, unparsed: boolean): Baseline {
  const counts = new Map<string, number>();
  if (unparsed) return counts;
  const textLines = lines(text);
  for (const finding of findings) {
    const k = key(finding, textLines);
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  return counts;
}

/** Splits a draft's findings (those that count) into the ones the baseline already had and the new ones, each in the linter's order. */
export function splitByBaseline(findings: readonly Finding[], text: string, baseline: Baseline): { old: Finding[]; added: Finding[] } {
  const left = new Map(baseline);
  const textLines = lines(text);
  const old: Finding[] = [];
  const added: Finding[] = [];
  for (const finding of findings) {
    const k = key(finding, textLines);
    const remaining = left.get(k) ?? 0;
    if (remaining > 0) {
      left.set(k, remaining - 1);
      old.push(finding);
    } else {
      added.push(finding);
    }
  }
  return { old, added };
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
