/**
 * A unified diff of two texts, for people to review before setup or removal
 * writes. Files here are small (settings, a section, a skill), so a plain
 * longest-common-subsequence table is fast enough; past a size it gives up
 * on the detail and shows both sides.
 */
const CONTEXT = 3;
const MAX_CELLS = 4_000_000;

export function unifiedDiff(path: string, before: string | null, after: string | null): string {
  const a = splitLines(before);
  const b = splitLines(after);
  const header = `--- ${before === null ? '/dev/null' : `a/${path}`}\n+++ ${after === null ? '/dev/null' : `b/${path}`}\n`;
  if (a.length * b.length > MAX_CELLS) return header + `@@ -1,${a.length} +1,${b.length} @@\n` + a.map((l) => `-${l}\n`).join('') + b.map((l) => `+${l}\n`).join('');
  const ops = diffLines(a, b);
  const hunks: string[] = [];
  let i = 0;
  while (i < ops.length) {
    if (ops[i]?.op === ' ') {
      i += 1;
      continue;
    }
    const start = Math.max(0, i - CONTEXT);
    let end = i;
    // Extend over changes separated by at most 2*CONTEXT unchanged lines.
    for (let j = i; j < ops.length; j += 1) {
      if (ops[j]?.op !== ' ') end = j;
      else if (j - end > 2 * CONTEXT) break;
    }
    const stop = Math.min(ops.length, end + CONTEXT + 1);
    const slice = ops.slice(start, stop);
    const aStart = (ops[start]?.a ?? 0) + 1;
    const bStart = (ops[start]?.b ?? 0) + 1;
    const aCount = slice.filter((o) => o.op !== '+').length;
    const bCount = slice.filter((o) => o.op !== '-').length;
    hunks.push(`@@ -${aCount === 0 ? aStart - 1 : aStart},${aCount} +${bCount === 0 ? bStart - 1 : bStart},${bCount} @@\n` + slice.map((o) => `${o.op}${o.line}\n`).join(''));
    i = stop;
  }
  return hunks.length === 0 ? '' : header + hunks.join('');
}

interface Op {
  op: ' ' | '-' | '+';
  line: string;
  /** Lines of a and b before this one. */
  a: number;
  b: number;
}

function splitLines(text: string | null): string[] {
  if (text === null || text === '') return [];
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  else lines[lines.length - 1] += '\n\\ No newline at end of file';
  return lines;
}

function diffLines(a: string[], b: string[]): Op[] {
  const n = a.length;
  const m = b.length;
  const width = m + 1;
  const table = new Uint32Array((n + 1) * width);
  for (let i = n - 1; i >= 0; i -= 1) {
    for (let j = m - 1; j >= 0; j -= 1) {
      table[i * width + j] = a[i] === b[j] ? (table[(i + 1) * width + j + 1] as number) + 1 : Math.max(table[(i + 1) * width + j] as number, table[i * width + j + 1] as number);
    }
  }
  const ops: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) {
      ops.push({ op: ' ', line: a[i] as string, a: i, b: j });
      i += 1;
      j += 1;
    } else if (i < n && (j === m || (table[(i + 1) * width + j] as number) >= (table[i * width + j + 1] as number))) {
      // Removals before additions, as git shows them.
      ops.push({ op: '-', line: a[i] as string, a: i, b: j });
      i += 1;
    } else {
      ops.push({ op: '+', line: b[j] as string, a: i, b: j });
      j += 1;
    }
  }
  return ops;
}
