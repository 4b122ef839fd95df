import { REPLAY_MAX_BYTES, REPLAY_MAX_LINES, replayHeader, replayOutput, type StoredLog, type Trimmer } from '../core/replay.js';
import { summaryLine, toolCounts } from '../core/runSummary.js';
import type { CheckAnswer } from './commandDecision.js';
import type { CommandMatch } from './commandMatch.js';

/*
 * The reason a deny gives the agent: what the rerun would have told it. Each
 * check once: its summary line (check, PASS or FAIL, exit code, duration, when,
 * run id, the counts its tools printed), then the part of its stored output the
 * agent's own command would have shown (core/replay.ts), then how to run the
 * command anyway. Bounded whatever the command: at most REASON_MAX_BYTES, the
 * command itself only as a capped excerpt.
 */

export const REASON_MAX_BYTES = 16 * 1024;
/** The replays of one reason share this, failures first. */
const REPLAY_BUDGET_BYTES = REPLAY_MAX_BYTES;
/** Below this per check, a replay says too little: the checks after are named without their output. */
const REPLAY_MIN_BYTES = 1024;
/** How much of the command, or of one part of it, the reason quotes. */
const COMMAND_EXCERPT = 300;
const PART_EXCERPT = 80;

type LogOf = (answer: CheckAnswer, from: 'start' | 'end' | 'whole') => StoredLog | null;

interface Named {
  answer: CheckAnswer;
  /** The text of the first part that runs it, excerpted; null when the command is that one part. */
  part: string | null;
  trimmer: Trimmer | null;
  stderrMerged: boolean;
}

export function denyReason(command: string, match: CommandMatch, answers: ReadonlyMap<string, CheckAnswer>, now: number, logOf?: LogOf): string {
  const named: Named[] = [];
  const seen = new Set<string>();
  const chain = match.parts.length > 1;
  for (const part of match.parts) {
    for (const name of part.checks) {
      if (seen.has(name)) continue;
      seen.add(name);
      named.push({
        answer: answers.get(name)!,
        part: chain ? excerpt(command.slice(part.start, part.end), PART_EXCERPT) : null,
        trimmer: part.trimmer ?? null,
        stderrMerged: part.stderrMerged ?? true,
      });
    }
  }
  const failed = named.filter(({ answer }) => answer.result === 'FAIL');
  const single = named.length === 1;
  const head = single
    ? `vouch: not run, because check "${clip(named[0]!.answer.name)}" has a CURRENT receipt: nothing it depends on (inputs, configuration, tools, environment) changed since the run below, so a rerun would ${failed.length > 0 ? 'fail the same way' : 'pass again'}.`
    : `vouch: not run, because each of the ${named.length} checks this command runs has a CURRENT receipt: nothing they depend on (inputs, configuration, tools, environment) changed since the runs below, so a rerun would end the same way.`;
  const force = forceLine(command, failed.length > 0, single);
  const room = REASON_MAX_BYTES - bytes(head) - bytes(force) - 400;

  // Failures get the output first: they are what the agent must read.
  const order = [...named.filter(({ answer }) => answer.result === 'FAIL'), ...named.filter(({ answer }) => answer.result !== 'FAIL')];
  const replayed = new Set(order.slice(0, Math.max(1, Math.floor(REPLAY_BUDGET_BYTES / REPLAY_MIN_BYTES))).map(({ answer }) => answer.name));
  const perCheck = Math.floor(REPLAY_BUDGET_BYTES / replayed.size);
  const linesPerCheck = Math.max(10, Math.floor(REPLAY_MAX_LINES / replayed.size));

  // Listed in that order too: when not all fit, the failures are the ones kept.
  const blocks: string[] = [];
  let used = 0;
  let shown = 0;
  for (const entry of order) {
    const block = checkBlock(entry, now, single, replayed.has(entry.answer.name) && logOf ? logOf : undefined, { bytes: Math.min(REPLAY_MAX_BYTES, perCheck), lines: Math.min(REPLAY_MAX_LINES, linesPerCheck) });
    if (used + bytes(block) + 1 > room) break;
    blocks.push(block);
    used += bytes(block) + 1;
    shown++;
  }
  if (shown < order.length) {
    const rest = order.slice(shown);
    const restFailed = rest.filter(({ answer }) => answer.result === 'FAIL').length;
    blocks.push(`… and ${rest.length} more check${rest.length === 1 ? '' : 's'} with a CURRENT receipt (${rest.length - restFailed} PASS, ${restFailed} FAIL), not listed to keep this short; \`vouch status\` lists them.`);
  }
  const notShown = order.filter(({ answer }, index) => index < shown && !replayed.has(answer.name));
  if (notShown.length > 0) blocks.push(`The output of the other checks is not shown here; \`vouch run CHECK --if-due --replay\` shows a check's.`);
  return cap([head, ...blocks, force].join('\n'));
}

function checkBlock(entry: Named, now: number, single: boolean, logOf: LogOf | undefined, limits: { bytes: number; lines: number }): string {
  const { answer } = entry;
  // grep searches the whole log; tail, head and a plain command need only the end they show.
  const from = entry.trimmer?.kind === 'grep' ? 'whole' : entry.trimmer?.kind === 'head' ? 'start' : 'end';
  const log = logOf ? logOf(answer, from) : null;
  const counts = log ? toolCounts(Buffer.from(log.bytes.buffer, log.bytes.byteOffset, log.bytes.byteLength).toString('utf8')) : [];
  const summary =
    answer.runId !== null && answer.finishedAt !== null && answer.result !== null
      ? summaryLine(
          { check: answer.name, result: answer.result, exitCode: answer.exitCode ?? null, signal: answer.signal ?? null, durationMs: answer.durationMs ?? 0, finishedAt: answer.finishedAt, runId: answer.runId },
          counts,
          now,
        )
      : `check "${clip(answer.name)}" ${answer.result === 'FAIL' ? 'FAILED' : 'PASSED'} in run ${answer.runId ?? '-'}`;
  const lines = [single ? summary : `- ${entry.part === null ? '' : `${entry.part}: `}${summary}`];
  if (!logOf) return lines.join('\n');
  if (log === null) {
    lines.push('Its stored output could not be read (the log is gone or unreadable).');
    return lines.join('\n');
  }
  const replay = replayOutput(log, entry.trimmer, entry.stderrMerged, limits);
  lines.push(`${replayHeader(replay)}`);
  for (const note of replay.notes) lines.push(`(note: ${note})`);
  lines.push(`--- output of run ${answer.runId} ---`);
  if (replay.text !== '') lines.push(replay.text.endsWith('\n') ? replay.text.slice(0, -1) : replay.text);
  lines.push('--- end of output ---');
  return lines.join('\n');
}

function forceLine(command: string, failed: boolean, single: boolean): string {
  const typed = command.trimStart();
  const shown = typed.length <= COMMAND_EXCERPT ? `VOUCH_FORCE=1 ${typed}` : `VOUCH_FORCE=1 in front of your command (${excerpt(typed, 60)}, ${typed.length} characters)`;
  if (failed) {
    return (
      `This is the failure the stored run shows, and the same inputs give the same failure. Fix it and run the command again; ` +
      `if you suspect a flaky test, run it anyway with: ${shown} ("replayFailures": false in vouch.config.json always reruns a CURRENT FAIL instead).`
    );
  }
  return `Use ${single ? 'that result' : 'those results'}. To run the command anyway: ${shown}`;
}

function excerpt(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max)}…`;
}

function clip(name: string): string {
  return name.length > 200 ? `${name.slice(0, 200)}…` : name;
}

function bytes(text: string): number {
  return Buffer.byteLength(text);
}

/** The last guard: never more than REASON_MAX_BYTES, cut at a character. */
function cap(text: string): string {
  if (bytes(text) <= REASON_MAX_BYTES) return text;
  let cut = text.slice(0, REASON_MAX_BYTES - 100);
  while (bytes(cut) > REASON_MAX_BYTES - 100) cut = cut.slice(0, -100);
  return `${cut}\n… (cut to ${REASON_MAX_BYTES / 1024} KB)`;
}
