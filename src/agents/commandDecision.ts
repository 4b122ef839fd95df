import type { CommandMatch } from './commandMatch.js';
import { denyReason } from './denyReason.js';
import type { StoredLog } from '../core/replay.js';
import { rewriteCommand } from './rewrite.js';

/** What vouch knows about one matched check, as the decision needs it. */
export interface CheckAnswer {
  name: string;
  freshness: 'CURRENT' | 'STALE' | 'UNVERIFIED';
  result: 'PASS' | 'FAIL' | null;
  reuseEligible: boolean;
  runId: string | null;
  finishedAt: number | null;
  durationMs: number | null;
  /** How the receipt's run ended, and why it may not be reused (reason codes): a replay needs them. */
  exitCode?: number | null;
  signal?: string | null;
  reasons?: readonly string[];
  logPath?: string | null;
}

export interface DecideOptions {
  /** False: a CURRENT FAIL is run again, not replayed (vouch.config.json `replayFailures`). Default true. */
  replayFailures?: boolean;
  /** A receipt's stored log, read from the end a replay shows (null: none). Without it nothing is replayed, and no FAIL is denied. */
  logOf?: (answer: CheckAnswer, from: 'start' | 'end' | 'whole') => StoredLog | null;
}

export type CommandDecision =
  /** reason: each check's run once, its replayed output, and how VOUCH_FORCE=1 runs it as typed; bounded (agents/denyReason.ts). */
  | { kind: 'deny'; reason: string; checks: string[] }
  | { kind: 'rewrite'; command: string; checks: string[]; why: string }
  | { kind: 'pass'; why: string; checks: string[] };

/**
 * The decision for a matched command, pure but for reading stored logs through
 * `options.logOf`. Deny only when the chain is nothing but checks whose
 * receipts are CURRENT, and each PASS and reusable, or a FAIL whose stored
 * output can be replayed (a plain failure, its log readable); otherwise
 * rewrite each matched part to `<program> run CHECK --if-due` (which decides
 * again when its turn comes); pass whenever in doubt.
 */
export function decideCommand(
  command: string,
  match: CommandMatch,
  answers: ReadonlyMap<string, CheckAnswer>,
  now: number,
  program = 'vouch',
  options: DecideOptions = {},
): CommandDecision {
  const checks = unique(match.parts.flatMap((part) => part.checks));
  if (match.force) return forcedDecision(command, match, checks, program);
  if (match.parts.length === 0) return { kind: 'pass', why: 'no configured check matched', checks };

  const reusable = (name: string) => {
    const answer = answers.get(name);
    return answer !== undefined && answer.freshness === 'CURRENT' && answer.result === 'PASS' && answer.reuseEligible && answer.runId !== null;
  };
  // A CURRENT FAIL is answered with its stored failure: the same inputs give the same one. Not one killed by a
  // signal (a timeout, the OOM killer), and not one whose log is gone: then there is nothing to show.
  const replayableFailure = (name: string) => {
    if (options.replayFailures === false || !options.logOf) return false;
    const answer = answers.get(name);
    if (!answer || answer.freshness !== 'CURRENT' || answer.result !== 'FAIL' || answer.runId === null || answer.signal) return false;
    if (!(answer.reasons ?? []).every((code) => code === 'failed')) return false;
    const log = options.logOf(answer, 'end');
    return log !== null && log.size > 0;
  };
  if (match.onlyChecks && checks.every((name) => reusable(name) || replayableFailure(name))) {
    return { kind: 'deny', reason: denyReason(command, match, answers, now, options.logOf), checks };
  }

  // A command that is one fan-out and nothing else names only the checks that must run: `pnpm -r test` after an
  // edit in c becomes `vouch run c#test --if-due`. Where other commands run too, one of them may change what the
  // others read before their turn, so every check stays named and --if-due decides at its turn.
  const parts =
    match.onlyChecks && match.parts.length === 1 && match.parts[0]!.checks.length > 1
      ? match.parts.map((part) => ({ ...part, checks: part.checks.filter((name) => !reusable(name)) }))
      : match.parts;
  const rewritten = rewriteCommand(command, parts, program);
  if (rewritten === null) return { kind: 'pass', why: 'the rewrite did not validate: run as typed', checks };
  return { kind: 'rewrite', command: rewritten, checks, why: rewriteWhy(match, answers, checks, reusable) };
}

/**
 * VOUCH_FORCE=1 in front of a check runs it whatever its receipts say. Where the
 * command can be rewritten, the forced part becomes `<program> run CHECK` (no
 * --if-due): the same run, whose result is kept as a receipt, so that `vouch
 * savings` can tell whether it differed from the receipt it bypassed. Anything
 * that does not rewrite cleanly runs as typed.
 */
function forcedDecision(command: string, match: CommandMatch, checks: string[], program: string): CommandDecision {
  if (!match.parts.some((part) => part.forced === true)) return { kind: 'pass', why: 'VOUCH_FORCE is set: run as typed', checks };
  const rewritten = rewriteCommand(command, match.parts, program);
  if (rewritten === null) return { kind: 'pass', why: 'VOUCH_FORCE is set and the rewrite did not validate: run as typed', checks };
  if (rewritten === command) return { kind: 'pass', why: 'VOUCH_FORCE is set, and the command is vouch run already', checks };
  const forced = unique(match.parts.filter((part) => part.forced === true).flatMap((part) => part.checks));
  return { kind: 'rewrite', command: rewritten, checks, why: `VOUCH_FORCE=1: ${forced.join(', ')} ${forced.length === 1 ? 'runs' : 'run'} now, through vouch run, which keeps the result to compare with the receipt it bypassed` };
}

function rewriteWhy(match: CommandMatch, answers: ReadonlyMap<string, CheckAnswer>, checks: string[], reusable: (name: string) => boolean): string {
  const notCurrent = checks.filter((name) => !reusable(name));
  if (notCurrent.length === 0) return `${checks.join(', ')} ${checks.length === 1 ? 'is' : 'are'} current, but the chain runs other commands too: --if-due decides at its turn`;
  const states = notCurrent.map((name) => {
    const answer = answers.get(name);
    if (!answer) return `${name} has no answer`;
    if (answer.freshness === 'CURRENT') return `${name} is CURRENT but ${answer.result === 'PASS' ? 'not reusable' : 'failed'}`;
    return `${name} is ${answer.freshness}`;
  });
  return match.onlyChecks ? states.join('; ') : `${states.join('; ')}; the chain runs other commands too`;
}

function unique(names: string[]): string[] {
  return [...new Set(names)];
}
