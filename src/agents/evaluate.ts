import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Project } from '../api/project.js';
import type { CheckStatus } from '../core/decide.js';
import type { CheckDefinition } from '../core/definition.js';
import type { CheckAnswer, CommandDecision } from './commandDecision.js';
import type { MatchedPart } from './commandMatch.js';

// Everything below is imported lazily: the hook is a fresh process per Bash
// command, and most commands are decided (pass) before the parser, the
// project's definitions or the observer client are needed.

export interface EvaluateInput {
  command: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** How the rewrite names vouch, inserted verbatim (the caller quotes it). Default `vouch`. */
  program?: string;
}

export interface Evaluation {
  decision: CommandDecision;
  source: 'observer' | 'scan' | null;
  latencyMs: number;
  /** What the ledger records beside the decision (store/ledger.ts); set as far as the evaluation got. */
  seen: EvaluationSeen;
  /** vouch itself could not work here (a native module built for another Node): the one line that says how to fix it. */
  notice?: string;
}

export interface EvaluationSeen {
  /** The project's state dir and config text, once a config was found. */
  stateDir?: string;
  configText?: string;
  /** The matched checks' answers, once they were asked. */
  answers?: CheckAnswer[];
}

/** The observer is given at least this long, however quick the check... */
export const MIN_DEADLINE_MS = 2_000;
/** ...and at most this long, however slow. */
export const MAX_DEADLINE_MS = 10_000;

/**
 * Decides what to do with a shell command an agent is about to run. Never
 * throws: any error, and any doubt, is a pass, and the command runs as typed.
 */
export async function evaluateCommand(input: EvaluateInput): Promise<Evaluation> {
  const started = Date.now();
  const seen: EvaluationSeen = {};
  let outcome: { decision: CommandDecision; source: Evaluation['source'] };
  try {
    outcome = await evaluate(input, seen);
  } catch (error) {
    outcome = { decision: pass(`error: ${error instanceof Error ? error.message : String(error)}`), source: null };
    // Only on an error: a native module that does not load is said to the user (agents/hook.ts), once per session.
    const native = (await import('../core/nativeLoad.js')).nativeLoadError(error);
    if (native) return { ...outcome, latencyMs: Date.now() - started, seen, notice: native.message };
  }
  return { ...outcome, latencyMs: Date.now() - started, seen };
}

function pass(why: string, checks: string[] = []): CommandDecision {
  return { kind: 'pass', why, checks };
}

async function evaluate(input: EvaluateInput, seen: EvaluationSeen): Promise<{ decision: CommandDecision; source: Evaluation['source'] }> {
  const { command, env } = input;
  const forcedByEnv = env.VOUCH_FORCE;
  if (forcedByEnv !== undefined && forcedByEnv !== '' && forcedByEnv !== '0') return { decision: pass('VOUCH_FORCE is set: run as typed'), source: null };

  const { locateProject } = await import('../api/projectPlace.js');
  let place;
  try {
    place = locateProject({ cwd: input.cwd });
  } catch (error) {
    // Only a missing config is said so; anything else (a refused state dir or root) is said as it is.
    if ((error as { code?: unknown }).code !== 'config-not-found') throw error;
    return { decision: pass('no vouch.config.json here or above'), source: null };
  }
  seen.stateDir = place.stateDir;
  seen.configText = place.text;
  if (!mayMention(command, place.text, place.root)) return { decision: pass('no configured check matched'), source: null };

  const { loadProject, fanOutFacts } = await import('../api/project.js');
  const project = await loadProject({ cwd: input.cwd });
  const facts = project.workspace === null ? null : await fanOutFacts(project, command, env);
  const fanOut = project.workspace === null ? undefined : (await import('./fanOut.js')).fanOutOf;
  const { matchCommand } = await import('./commandMatch.js');
  const match = matchCommand(command, {
    root: project.root,
    cwd: resolve(input.cwd),
    packageManager: project.config.packageManager ?? project.definitions.find((definition) => definition.packageManager !== null)?.packageManager ?? null,
    scripts: project.scripts,
    checks: project.definitions,
    cdpath: (env.CDPATH ?? '') !== '',
    workspace: project.workspace,
    turbo: facts?.turbo ?? null,
    nx: facts?.nx ?? null,
    rootExcluded: facts?.rootExcluded ?? false,
    yarnVariant: facts?.yarnVariant ?? null,
    ...(fanOut ? { fanOut } : {}),
  });
  if (match === null) return { decision: pass('the command does not parse: run as typed'), source: null };

  const { decideCommand } = await import('./commandDecision.js');
  if (match.force || match.parts.length === 0) return { decision: decideCommand(command, match, new Map(), Date.now(), input.program), source: null };

  const { answers, source } = await answersFor(project, match.parts, env);
  seen.answers = [...answers.values()];
  const { readStoredLog } = await import('../store/storedLog.js');
  // Read once per run and end: a FAIL's log is read to decide, and again to show it.
  const logs = new Map<string, ReturnType<typeof readStoredLog>>();
  const logOf = (answer: CheckAnswer, from: 'start' | 'end' | 'whole') => {
    if (!answer.logPath) return null;
    const key = `${answer.logPath}\0${from}`;
    if (!logs.has(key)) logs.set(key, readStoredLog(project.stateDir, answer.logPath, from));
    return logs.get(key)!;
  };
  const options = { replayFailures: project.config.replayFailures !== false, logOf };
  return { decision: decideCommand(command, match, answers, Date.now(), input.program, options), source };
}

/**
 * A cheap test before loading the parser: a command that cannot mention any
 * check's program (vouch, a package manager, npx, or the first words of a
 * check's script or command) passes at once. Quotes and backslashes are
 * dropped first, so `"n"pm` and `n\pm` still count as npm.
 */
function mayMention(command: string, configText: string, root: string): boolean {
  const plain = command.replace(/["'\\]/g, '');
  // turbo and nx run a workspace's package checks (agents/fanOut.ts).
  const words = new Set(['vouch', 'npm', 'pnpm', 'yarn', 'bun', 'npx', 'turbo', 'nx']);
  let checks: Array<{ script?: unknown; command?: unknown }> = [];
  try {
    const parsed = JSON.parse(configText) as { checks?: unknown };
    if (Array.isArray(parsed.checks)) checks = parsed.checks as typeof checks;
  } catch {
    return true; // let the full load report it
  }
  let scripts: Record<string, unknown> | null = null;
  for (const check of checks) {
    if (Array.isArray(check.command)) {
      for (const word of check.command.slice(0, 2)) if (typeof word === 'string') words.add(word);
    } else if (typeof check.script === 'string') {
      scripts ??= readScripts(root);
      const body = scripts[check.script];
      if (typeof body === 'string') for (const word of body.trim().split(/\s+/).slice(0, 2)) words.add(word);
    }
  }
  for (const word of words) if (word.length > 0 && plain.includes(word)) return true;
  return false;
}

function readScripts(root: string): Record<string, unknown> {
  try {
    const text = readFileSync(join(root, 'package.json'), 'utf8');
    const scripts = (JSON.parse(text) as { scripts?: unknown }).scripts;
    return scripts && typeof scripts === 'object' ? (scripts as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/**
 * The matched checks' answers. A part whose assignments differ from the
 * shell's environment is judged with them applied (a variable in the check's
 * context changes its freshness); a check judged more than once keeps its
 * least reusable answer.
 */
async function answersFor(
  project: Project,
  parts: MatchedPart[],
  env: NodeJS.ProcessEnv,
): Promise<{ answers: Map<string, CheckAnswer>; source: Evaluation['source'] }> {
  const byName = new Map(project.definitions.map((definition) => [definition.name, definition]));
  const groups = new Map<string, { env: Record<string, string>; definitions: CheckDefinition[] }>();
  for (const part of parts) {
    const key = JSON.stringify(Object.entries(part.env).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    const group = groups.get(key) ?? { env: part.env, definitions: [] };
    for (const name of part.checks) {
      const definition = byName.get(name);
      if (definition && !group.definitions.includes(definition)) group.definitions.push(definition);
    }
    groups.set(key, group);
  }
  const answers = new Map<string, CheckAnswer>();
  let source: Evaluation['source'] = null;
  for (const group of groups.values()) {
    const observed = await statusesOf(project, group.definitions, { ...env, ...group.env });
    source = source === 'scan' ? 'scan' : observed.source;
    for (const status of observed.statuses) {
      const answer = answerOf(status);
      const earlier = answers.get(answer.name);
      if (!earlier || (earlier.reuseEligible && !answer.reuseEligible)) answers.set(answer.name, answer);
    }
  }
  return { answers, source };
}

function answerOf(status: CheckStatus): CheckAnswer {
  return {
    name: status.name,
    freshness: status.freshness,
    result: status.result,
    reuseEligible: status.reuseEligible,
    runId: status.receipt?.runId ?? null,
    finishedAt: status.receipt?.finishedAt ?? null,
    durationMs: status.receipt?.durationMs ?? null,
    exitCode: status.receipt?.exitCode ?? null,
    signal: status.receipt?.signal ?? null,
    reasons: status.reasons.map((reason) => reason.code),
    logPath: status.receipt?.logPath ?? null,
  };
}

/**
 * Asks the observer, then falls back to a direct scan. The observer's
 * deadline is the checks' last duration clamped to [2 s, 10 s]: waiting
 * longer than a rerun would take saves nothing. The durations are in the
 * receipts, and reading them means loading SQLite, which a healthy observer
 * spares this process. So the first ask gets the 2 s floor (which every
 * deadline is at least); only when that runs out are the last durations read
 * from the store (which the fallback scan opens anyway) and the observer
 * asked again for the rest of the clamped deadline.
 */
async function statusesOf(
  project: Project,
  definitions: CheckDefinition[],
  env: NodeJS.ProcessEnv,
): Promise<{ statuses: CheckStatus[]; source: 'observer' | 'scan' }> {
  const { askObserver } = await import('../api/askObserver.js');
  const notices: string[] = [];
  const started = Date.now();
  const ask = async (deadlineMs: number) => {
    try {
      return await askObserver(project, definitions, env, 'sync', notices, { deadlineMs });
    } catch {
      return null; // an observer that answers wrongly is no observer
    }
  };
  let answer = await ask(MIN_DEADLINE_MS);
  if (answer === null && Date.now() - started >= MIN_DEADLINE_MS * 0.9) {
    const remaining = clampDeadline(await lastDurationMs(project, definitions)) - (Date.now() - started);
    if (remaining >= 100) answer = await ask(remaining);
  }
  if (answer !== null) {
    const { decideObserved } = await import('../core/decide.js');
    return { statuses: answer.checks.map(({ definition, observed, inputs, receipt, earlier, earlierTraced }) => decideObserved(definition, observed, inputs, receipt, earlier, earlierTraced)), source: 'observer' };
  }
  const { status } = await import('../api/status.js');
  const report = await status(project, definitions.map((definition) => definition.name), env, { observer: 'off', mode: 'sync' });
  return { statuses: report.checks, source: 'scan' };
}

export function clampDeadline(durationMs: number | null): number {
  if (durationMs === null || !Number.isFinite(durationMs)) return MIN_DEADLINE_MS;
  return Math.min(MAX_DEADLINE_MS, Math.max(MIN_DEADLINE_MS, Math.round(durationMs)));
}

/** The longest last duration among the checks, from their latest receipts; null when none has run. */
async function lastDurationMs(project: Project, definitions: CheckDefinition[]): Promise<number | null> {
  const { log } = await import('../api/log.js');
  let longest: number | null = null;
  for (const definition of definitions) {
    try {
      const duration = (await log(project, definition.name, 1)).receipts[0]?.durationMs;
      if (duration !== undefined) longest = Math.max(longest ?? 0, duration);
    } catch {
      // no store yet, or unreadable: the scan will say so
    }
  }
  return longest;
}
