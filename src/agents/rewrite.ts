import type { Command, PipelineNode, Script } from 'unbash';
import { parseShell, staticArgv } from '../core/shellWords.js';
import type { MatchedPart } from './commandMatch.js';
import { chainElements, commandWords } from './shellCommand.js';
import { shellQuote } from './shellQuote.js';

/**
 * The words that replace a matched part: `<program> run CHECK... --if-due`, or
 * for a part typed with VOUCH_FORCE=1, `<program> run CHECK...`, which runs
 * whatever the receipts say and keeps the result as a receipt: `vouch savings`
 * then compares it with the receipt the force bypassed.
 */
export function replacementFor(part: MatchedPart, program = 'vouch'): string {
  return `${program} run ${part.checks.map(shellQuote).join(' ')}${part.forced === true ? '' : ' --if-due'}`;
}

/**
 * Rewrites each matched part to `<program> run CHECK --if-due` (a forced part
 * without `--if-due`), leaving every
 * other byte as typed. `program` is inserted verbatim: the caller quotes it.
 * Null when the candidate does not pass validateRewrite.
 */
export function rewriteCommand(command: string, parts: MatchedPart[], program = 'vouch'): string | null {
  if (parts.length === 0) return null;
  const ordered = [...parts].sort((a, b) => a.start - b.start);
  let candidate = '';
  let cursor = 0;
  for (const part of ordered) {
    if (part.start < cursor || part.end <= part.start || part.end > command.length) return null;
    candidate += command.slice(cursor, part.start) + replacementFor(part, program);
    cursor = part.end;
  }
  candidate += command.slice(cursor);
  return validateRewrite(command, candidate, parts, program) ? candidate : null;
}

/**
 * Whether a candidate rewrite changes nothing but the matched command words.
 * It does not trust how the candidate was made; it checks that:
 * - each part spans exactly the words of a top-level simple command of the
 *   original (never inside a substitution, subshell, group or here-document);
 * - the candidate equals the original byte for byte outside those spans, and
 *   each span holds exactly `<program> run CHECK --if-due`;
 * - the candidate parses, with the same top-level chain: the same statements,
 *   operators and elements, each unchanged element with the same source text,
 *   and each rewritten command read by the shell as exactly the words
 *   `<program words> run CHECK --if-due` with its assignments and redirections
 *   as they were. A program or check name that would split a word, open a
 *   quote or start a comment fails here.
 */
export function validateRewrite(original: string, candidate: string, parts: MatchedPart[], program = 'vouch'): boolean {
  if (parts.length === 0) return false;
  const ordered = [...parts].sort((a, b) => a.start - b.start);
  const programWords = programArgv(program);
  if (programWords === null) return false;

  // Byte identity outside the spans, and the exact replacement inside.
  const shifted: Array<{ part: MatchedPart; start: number; end: number }> = [];
  let expected = '';
  let cursor = 0;
  for (const part of ordered) {
    if (part.start < cursor || part.end <= part.start || part.end > original.length) return false;
    expected += original.slice(cursor, part.start);
    const start = expected.length;
    expected += replacementFor(part, program);
    shifted.push({ part, start, end: expected.length });
    cursor = part.end;
  }
  expected += original.slice(cursor);
  if (candidate !== expected) return false;

  const before = parseShell(original);
  const after = parseShell(candidate);
  if (before === null || after === null) return false;
  const beforeChain = outline(before);
  const afterChain = outline(after);
  if (beforeChain.length !== afterChain.length) return false;

  const used = new Set<number>();
  for (let index = 0; index < beforeChain.length; index++) {
    const was = beforeChain[index]!;
    const now = afterChain[index]!;
    if (was.statement !== now.statement || was.operator !== now.operator || was.background !== now.background) return false;
    const wasCommand = rewritable(was.node);
    const nowCommand = rewritable(now.node);
    const at = wasCommand ? ordered.findIndex((part) => wordsSpan(wasCommand)?.start === part.start) : -1;
    if (at < 0) {
      if (was.node.type !== now.node.type || original.slice(was.node.pos, was.node.end) !== candidate.slice(now.node.pos, now.node.end)) return false;
      continue;
    }
    const part = ordered[at]!;
    const place = shifted[at]!;
    if (wordsSpan(wasCommand!)?.end !== part.end || nowCommand === null) return false;
    const span = wordsSpan(nowCommand);
    if (!span || span.start !== place.start || span.end !== place.end) return false;
    const words = commandWords(nowCommand).words.map((word) => word.value);
    if (part.checks.length === 0 || JSON.stringify(words) !== JSON.stringify([...programWords, 'run', ...part.checks, ...(part.forced === true ? [] : ['--if-due'])])) return false;
    if (prefixText(wasCommand!, original) !== prefixText(nowCommand, candidate)) return false;
    if (afterWords(was.node, wasCommand!, original) !== afterWords(now.node, nowCommand, candidate)) return false;
    used.add(at);
  }
  // Every part must have been found at the top level.
  return used.size === ordered.length;
}

/** The words the shell reads from `program`: it must be one plain simple command (a name, perhaps quoted, and arguments). */
function programArgv(program: string): string[] | null {
  const script = parseShell(program);
  const only = script?.commands.length === 1 ? script.commands[0]!.command : null;
  if (!only || only.type !== 'Command' || only.prefix.length > 0 || script!.commands[0]!.background) return null;
  const argv = staticArgv(only);
  return argv !== null && only.suffix.length === argv.length - 1 ? argv : null;
}

interface OutlineElement {
  node: PipelineNode;
  statement: number;
  /** The operator before this element within its statement ('' for the first). */
  operator: string;
  background: boolean;
}

function outline(script: Script): OutlineElement[] {
  const elements: OutlineElement[] = [];
  let statementIndex = -1;
  let last: unknown = null;
  let position = 0;
  for (const { node, statement } of chainElements(script)) {
    if (statement !== last) {
      statementIndex++;
      last = statement;
      position = 0;
    }
    const operators = statement.command.type === 'AndOr' ? statement.command.operators : [];
    elements.push({ node, statement: statementIndex, operator: position === 0 ? '' : (operators[position - 1] ?? '?'), background: statement.background === true });
    position++;
  }
  return elements;
}

/** The simple command a rewrite may replace the words of: alone, or first in a two-command pipeline. */
function rewritable(node: PipelineNode): Command | null {
  if (node.type === 'Command') return node;
  if (node.type === 'Pipeline' && node.prefixes.length === 0 && node.commands.length === 2 && node.commands[0]?.type === 'Command') return node.commands[0];
  return null;
}

function wordsSpan(command: Command): { start: number; end: number } | null {
  const { words } = commandWords(command);
  const first = words[0];
  const last = words[words.length - 1];
  return first && last ? { start: first.pos, end: last.end } : null;
}

function prefixText(command: Command, source: string): string {
  return command.prefix.map((item) => source.slice(item.pos, item.end)).join('\0');
}

/** Everything of the element after the command words: redirections and the piped trimmer. */
function afterWords(node: PipelineNode, command: Command, source: string): string {
  const span = wordsSpan(command);
  return span ? source.slice(span.end, node.end) : '';
}
