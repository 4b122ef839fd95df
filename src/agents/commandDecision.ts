import type { CommandMatch } from './commandMatch.js';
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
}

export type CommandDecision =
  /** reason: names each check, its run id and age, and says VOUCH_FORCE=1 <command> runs it as typed. */
  | { kind: 'deny'; reason: string; checks: string[] }
  | { kind: 'rewrite'; command: string; checks: string[]; why: string }
  | { kind: 'pass'; why: string; checks: string[] };

/**
 * The decision for a matched command, pure. Deny only when the chain is
 * nothing but checks whose receipts are CURRENT, PASS and reusable; otherwise
 * rewrite each matched part to `<program> run CHECK --if-due` (which decides
 * again when its turn comes); pass whenever in doubt.
 */
export function decideCommand(
  command: string,
  match: CommandMatch,
  answers: ReadonlyMap<string, CheckAnswer>,
  now: number,
  program = 'vouch',
): CommandDecision {
  const checks = unique(match.parts.flatMap((part) => part.checks));
  if (match.force) return { kind: 'pass', why: 'VOUCH_FORCE is set: run as typed', checks };
  if (match.parts.length === 0) return { kind: 'pass', why: 'no configured check matched', checks };

  const reusable = (name: string) => {
    const answer = answers.get(name);
    return answer !== undefined && answer.freshness === 'CURRENT' && answer.result === 'PASS' && answer.reuseEligible && answer.runId !== null;
  };
  if (match.onlyChecks && checks.every(reusable)) {
    return { kind: 'deny', reason: denyReason(command, match, answers, now), checks };
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

function denyReason(command: string, match: CommandMatch, answers: ReadonlyMap<string, CheckAnswer>, now: number): string {
  const force = `VOUCH_FORCE=1 ${command.trimStart()}`;
  const line = (name: string) => {
    const answer = answers.get(name)!;
    return `"${name}" PASSED in run ${answer.runId}${answer.finishedAt === null ? '' : `, ${age(now - answer.finishedAt)} ago`}`;
  };
  if (match.parts.length === 1 && match.parts[0]!.checks.length > 1) {
    const part = match.parts[0]!;
    return [
      `vouch: not run, because each package check this command runs has a receipt that is CURRENT and PASS; nothing they depend on changed since:`,
      ...part.checks.map((name) => `- check ${line(name)}`),
      `Use those results. To run the command anyway: ${force}`,
    ].join('\n');
  }
  if (match.parts.length === 1) {
    const name = match.parts[0]!.checks[0]!;
    return (
      `vouch: not run, because check ${line(name)} and its receipt is CURRENT: nothing it depends on (inputs, configuration, tools, environment) changed since. ` +
      `Use that result. To run the command anyway: ${force}`
    );
  }
  const listed = match.parts.flatMap((part) => part.checks.map((name) => `- ${command.slice(part.start, part.end)}: check ${line(name)}`));
  return [
    `vouch: not run, because every part of this command is a check whose receipt is CURRENT and PASS; nothing they depend on changed since:`,
    ...listed,
    `Use those results. To run the command anyway: ${force}`,
  ].join('\n');
}

/** A short human age: 45 s, 12 min, 3 h, 2 d. */
export function age(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 90) return `${seconds} s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 90) return `${minutes} min`;
  const hours = Math.round(minutes / 60);
  if (hours < 36) return `${hours} h`;
  return `${Math.round(hours / 24)} d`;
}

function unique(names: string[]): string[] {
  return [...new Set(names)];
}
