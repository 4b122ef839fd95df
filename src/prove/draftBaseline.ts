/**
 * A drafted file's baseline: the findings a tool (a linter, the compiler)
 * already gave on the file's text on disk, before the claim. A finding on the
 * draft that matches one of these is the workspace's; every other finding is
 * the claimant's.
 *
 * A draft moves lines (an edit above an old error shifts it), so findings are
 * not matched by position but by key: the code (rule), the message and the
 * text of the line the finding starts on, with surrounding whitespace trimmed
 * (so re-indenting keeps the key). Keys are counted, not merely looked up: a
 * disk text with one `==` violation on `if (a == b) {` and a draft with two
 * such lines gives one workspace finding and one claimant finding. So a draft
 * can never hide a NEW error behind an old one: each old finding excuses at
 * most one finding of the draft, with the same code, message and line text.
 * What it may do is call an old error new: one whose own line the draft
 * edited (`a == b` → `a == c`) is the claimant's, who touched it.
 *
 * Among equal keys, the first ones in the draft (in the order given) are
 * taken as the old ones; which is which cannot be told, only how many.
 */
export type Baseline = ReadonlyMap<string, number>;

/** A finding as far as a baseline matches it, whichever tool gave it. */
export interface Matchable {
  code?: string;
  message: string;
  /** 1-based, when the tool located it. */
  line?: number;
}

/** The text of a 1-based line of the text the findings are about, as the tool numbers its lines. */
export type LineText = (line: number) => string;

/** The key a finding is matched by: code, message and the trimmed text of its line. */
function key(finding: Matchable, lineText: LineText): string {
  const line = finding.line === undefined ? '' : lineText(finding.line).trim();
  return [finding.code ?? '', finding.message, line].join('\0');
}

/** The baseline of a disk text from the findings the tool gave on it (already filtered to those that count). */
export function takeBaseline(findings: readonly Matchable[], lineText: LineText): Baseline {
  const counts = new Map<string, number>();
  for (const finding of findings) {
    const k = key(finding, lineText);
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  return counts;
}

/** Splits a draft's findings (those that count) into the ones the baseline already had and the new ones, each in the order given. */
export function splitByBaseline<T extends Matchable>(findings: readonly T[], lineText: LineText, baseline: Baseline): { old: T[]; added: T[] } {
  const left = new Map(baseline);
  const old: T[] = [];
  const added: T[] = [];
  for (const finding of findings) {
    const k = key(finding, lineText);
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

/** Line texts of `text` split at `breaks`, the tool's line terminators: a missing line is empty. */
export function linesOf(text: string, breaks: RegExp): LineText {
  const lines = text.split(breaks);
  return (line) => lines[line - 1] ?? '';
}
