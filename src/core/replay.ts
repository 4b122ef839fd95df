import { isUtf8 } from 'node:buffer';

/*
 * Replay: the part of a run's stored output that the agent's own command would
 * have shown, cut from the log byte for byte (ANSI escapes removed), never
 * regenerated or summarised. Pure: the log's bytes are given.
 *
 * A log (logs/RUN_ID.log) holds the check's stdout and stderr interleaved, as
 * they arrived; it cannot tell them apart. `CMD 2>&1 | tail -30` reads exactly
 * that stream. Without `2>&1` only stdout would pass through the pipe, and
 * stderr would reach the agent whole: the replay then says that stderr is in it.
 */

/** What follows the check in the agent's pipeline: `| tail -N`, `| head -N`, `| grep [-F|-E] [-v] PATTERN`. */
export type Trimmer =
  | { kind: 'tail'; lines: number }
  | { kind: 'head'; lines: number }
  | { kind: 'grep'; syntax: 'basic' | 'extended' | 'fixed'; invert: boolean; pattern: string };

/** The most a replay shows, whatever the command asks. */
export const REPLAY_MAX_BYTES = 8 * 1024;
export const REPLAY_MAX_LINES = 200;
/** What a command without a trimmer gets: the end of the output, where a result is said. */
export const PLAIN_LINES = 40;

export interface ReplayLimits {
  bytes: number;
  lines: number;
}

/** A log's bytes, or a window of them (a large log is read only at the end it is shown from). */
export interface StoredLog {
  bytes: Uint8Array;
  /** Where `bytes` starts in the file, and the file's size. */
  offset: number;
  size: number;
}

export interface Replay {
  /** The lines shown, each with its newline as stored; bounded by the limits. */
  text: string;
  /** Which part of the output this is, e.g. "the last 30 lines (| tail -30)". */
  part: string;
  lines: number;
  bytes: number;
  /** Lines of that part left out to keep within the limits (0 when it is whole). */
  omittedLines: number;
  /** Said beside it: stderr included, a grep that could not be reproduced, bytes that are not UTF-8. */
  notes: string[];
}

/**
 * Reads `tail -n N`, `tail -N`, `head -n N`, `head -N`, and `grep PATTERN` with
 * at most `-F` or `-E` and `-v` before one static pattern (no file operand).
 * Anything else is no trimmer: the command is not matched.
 */
export function trimmerOf(argv: readonly string[]): Trimmer | null {
  const [program, ...args] = argv;
  if (program === 'tail' || program === 'head') {
    let count: string | undefined;
    if (args.length === 1 && /^-[0-9]+$/.test(args[0]!)) count = args[0]!.slice(1);
    else if (args.length === 2 && args[0] === '-n' && /^[0-9]+$/.test(args[1]!)) count = args[1];
    if (count === undefined) return null;
    const lines = Number(count);
    return { kind: program, lines: Number.isSafeInteger(lines) ? lines : Number.MAX_SAFE_INTEGER };
  }
  if (program !== 'grep' || args.length === 0) return null;
  let syntax: 'basic' | 'extended' | 'fixed' = 'basic';
  let invert = false;
  const options = args.slice(0, -1);
  const pattern = args[args.length - 1]!;
  const seen = new Set<string>();
  for (const option of options) {
    if (seen.has(option)) return null;
    seen.add(option);
    if (option === '-v') invert = true;
    else if (option === '-F' && syntax === 'basic') syntax = 'fixed';
    else if (option === '-E' && syntax === 'basic') syntax = 'extended';
    else return null;
  }
  // A pattern that starts with "-" is an option to grep; one with a newline is several patterns.
  if (pattern.startsWith('-') || pattern.includes('\n')) return null;
  return { kind: 'grep', syntax, invert, pattern };
}

/** The trimmer as typed, for the replay's header. */
export function trimmerText(trimmer: Trimmer): string {
  if (trimmer.kind !== 'grep') return `${trimmer.kind} -${trimmer.lines}`;
  const flags = [trimmer.syntax === 'fixed' ? '-F' : trimmer.syntax === 'extended' ? '-E' : null, trimmer.invert ? '-v' : null].filter((flag) => flag !== null);
  return ['grep', ...flags, JSON.stringify(trimmer.pattern)].join(' ');
}

/**
 * ECMA-48 escape sequences (https://ecma-international.org/publications-and-standards/standards/ecma-48/):
 * CSI (ESC [ params intermediates final), OSC (ESC ] ... BEL or ESC \), and the
 * other ESC sequences (intermediates, then one final byte). None of them spans a newline.
 */
// oxlint-disable-next-line no-control-regex -- escape sequences are exactly what is removed
const ANSI = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b\n]*(?:\x07|\x1b\\)|\x1b[ -/]*[0-~]/g;

export function stripAnsi(text: string): string {
  return text.replace(ANSI, '');
}

/** Splits into lines, each keeping its newline; a last line without one is a line too, as tail and head count it. */
export function splitLines(text: string): string[] {
  const lines: string[] = [];
  let start = 0;
  while (start < text.length) {
    const end = text.indexOf('\n', start);
    if (end < 0) {
      lines.push(text.slice(start));
      break;
    }
    lines.push(text.slice(start, end + 1));
    start = end + 1;
  }
  return lines;
}

/**
 * A matcher that gives exactly GNU and POSIX grep's answer for a pattern, or
 * null when vouch cannot be sure of it. Only fixed strings are reproduced:
 * with -F any pattern; in a basic pattern none of `\ . [ ] *` (then `+ ? | { } ( )`
 * are plain characters, https://pubs.opengroup.org/onlinepubs/9799919799/basedefs/V1_chap09.html#tag_09_03),
 * with `^` leading and `$` ending as anchors; in an extended one, alternatives of
 * such strings split at `|`. Case folding (-i) depends on the locale: not reproduced.
 */
export function grepMatcher(trimmer: Extract<Trimmer, { kind: 'grep' }>): ((line: string) => boolean) | null {
  const { pattern, syntax } = trimmer;
  // oxlint-disable-next-line no-control-regex -- a pattern with control characters is not reproduced
  if (/[\x00-\x1f\x7f]/.test(pattern)) return null;
  let branches: Array<{ text: string; start: boolean; end: boolean }>;
  if (syntax === 'fixed') {
    branches = [{ text: pattern, start: false, end: false }];
  } else if (syntax === 'basic') {
    if (/[\\.[\]*]/.test(pattern)) return null;
    const start = pattern.startsWith('^');
    const body = start ? pattern.slice(1) : pattern;
    // `^$` is an empty line; a lone `$` ends the line.
    const end = body.endsWith('$');
    branches = [{ text: end ? body.slice(0, -1) : body, start, end }];
  } else {
    if (/[\\.[\]*+?(){}]/.test(pattern)) return null;
    branches = [];
    for (const branch of pattern.split('|')) {
      // An empty alternative matches every line in GNU grep but is undefined in POSIX: not reproduced.
      if (branch === '') return null;
      const start = branch.startsWith('^');
      const body = start ? branch.slice(1) : branch;
      const end = body.endsWith('$');
      const text = end ? body.slice(0, -1) : body;
      if (text.includes('^') || text.includes('$')) return null;
      branches.push({ text, start, end });
    }
  }
  const matches = (line: string) =>
    branches.some(({ text, start, end }) => (start && end ? line === text : start ? line.startsWith(text) : end ? line.endsWith(text) : line.includes(text)));
  return trimmer.invert ? (line) => !matches(line) : matches;
}

interface Selected {
  lines: string[];
  part: string;
  /** Which end the limits keep. */
  keep: 'start' | 'end';
  notes: string[];
}

/**
 * The part of the stored output the agent's command would have shown, bounded.
 * `stderrMerged`: the command had `2>&1` before the pipe (or no pipe at all, when
 * both streams reach the agent anyway).
 */
export function replayOutput(log: StoredLog, trimmer: Trimmer | null, stderrMerged: boolean, limits: ReplayLimits = { bytes: REPLAY_MAX_BYTES, lines: REPLAY_MAX_LINES }): Replay {
  const notes: string[] = [];
  let buffer = Buffer.from(log.bytes.buffer, log.bytes.byteOffset, log.bytes.byteLength);
  const hasStart = log.offset === 0;
  const hasEnd = log.offset + buffer.length >= log.size;
  const whole = hasStart && hasEnd;
  // A window may start or end mid-line, and mid-character: those pieces are not shown.
  if (!hasStart) buffer = buffer.subarray(buffer.indexOf(10) + 1 || buffer.length);
  if (!hasEnd) buffer = buffer.subarray(0, buffer.lastIndexOf(10) + 1);
  if (!isUtf8(buffer)) notes.push('the log holds bytes that are not UTF-8; each is shown as U+FFFD');
  let text = buffer.toString('utf8');
  text = stripAnsi(text);
  const lines = splitLines(text);

  const selected = select(lines, trimmer, whole, hasStart, buffer, notes);
  if (trimmer !== null && !stderrMerged) notes.push('the log keeps stdout and stderr together, so stderr is included; without 2>&1 the command would have filtered stdout only');
  const bounded = bound(selected.lines, selected.keep, limits);
  return { text: bounded.text, part: selected.part, lines: bounded.lines, bytes: Buffer.byteLength(bounded.text), omittedLines: bounded.omitted, notes: [...notes, ...selected.notes] };
}

function select(lines: string[], trimmer: Trimmer | null, whole: boolean, hasStart: boolean, buffer: Buffer, notes: string[]): Selected {
  const last = (count: number, part: string, extra: string[] = []): Selected => ({ lines: count === 0 ? [] : lines.slice(-count), part, keep: 'end', notes: extra });
  if (trimmer === null) return last(PLAIN_LINES, `the last ${PLAIN_LINES} lines`);
  if (trimmer.kind === 'tail') return last(trimmer.lines, `the last ${trimmer.lines} lines (| ${trimmerText(trimmer)})`);
  if (trimmer.kind === 'head') {
    if (!hasStart) return last(PLAIN_LINES, `the last ${PLAIN_LINES} lines`, ['the start of this log was not read, so | head is not replayed']);
    return { lines: lines.slice(0, trimmer.lines), part: `the first ${trimmer.lines} lines (| ${trimmerText(trimmer)})`, keep: 'start', notes: [] };
  }
  const matcher = grepMatcher(trimmer);
  // grep calls input with a NUL byte binary, and prints "Binary file (standard input) matches" instead.
  const why =
    matcher === null
      ? `vouch cannot reproduce ${trimmerText(trimmer)} exactly`
      : !whole
      ? 'the log is too large to search whole'
      : buffer.includes(0)
      ? 'the log holds NUL bytes, which grep treats as binary'
      : notes.length > 0
      ? 'the log is not valid UTF-8, which grep may treat as binary'
      : null;
  if (why !== null || matcher === null) return last(PLAIN_LINES, `the last ${PLAIN_LINES} lines`, [`${why}, so it shows the last ${PLAIN_LINES} lines instead`]);
  // grep ends every line it prints with a newline, the last one too.
  const matched = lines.map((line) => (line.endsWith('\n') ? line.slice(0, -1) : line)).filter(matcher).map((line) => `${line}\n`);
  return { lines: matched, part: `the lines matching ${trimmerText(trimmer)}`, keep: 'start', notes: [] };
}

/** Whole lines from the kept end, within both limits; a single line too long alone is cut at a character. */
function bound(lines: string[], keep: 'start' | 'end', limits: ReplayLimits): { text: string; lines: number; omitted: number } {
  const ordered = keep === 'end' ? [...lines].reverse() : lines;
  const kept: string[] = [];
  let bytes = 0;
  for (const line of ordered) {
    if (kept.length >= limits.lines) break;
    const size = Buffer.byteLength(line);
    if (bytes + size > limits.bytes) {
      if (kept.length === 0) kept.push(cutLine(line, limits.bytes, keep));
      break;
    }
    kept.push(line);
    bytes += size;
  }
  const shown = keep === 'end' ? kept.reverse() : kept;
  return { text: shown.join(''), lines: shown.length, omitted: lines.length - shown.length };
}

function cutLine(line: string, maxBytes: number, keep: 'start' | 'end'): string {
  const chars = Array.from(line);
  const taken: string[] = [];
  let bytes = 0;
  for (let index = 0; index < chars.length; index++) {
    const char = keep === 'start' ? chars[index]! : chars[chars.length - 1 - index]!;
    bytes += Buffer.byteLength(char);
    if (bytes > maxBytes) break;
    taken.push(char);
  }
  return keep === 'start' ? taken.join('') : taken.reverse().join('');
}

/** The header a replay is shown under, and its notes. */
export function replayHeader(replay: Replay): string {
  const cut = replay.omittedLines > 0 ? `; ${replay.omittedLines} more line${replay.omittedLines === 1 ? '' : 's'} of it left out to stay within ${REPLAY_MAX_BYTES / 1024} KB and ${REPLAY_MAX_LINES} lines` : '';
  const empty = replay.lines === 0 ? ' (nothing)' : '';
  return `Its stored output, ${replay.part}, ANSI escapes removed${cut}${empty}:`;
}
