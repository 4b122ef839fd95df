import type { CommandDecision } from './commandDecision.js';
import type { EvaluationSeen } from './evaluate.js';
import { writeHookLog } from './hookLog.js';
import { hookProgram } from './hookProgram.js';
import { parseHookInput, type BashEvent, type Host } from './host.js';

/*
 * The hook's flow, shared by the hosts: read the host's event, decide, answer
 * in the host's format. It fails open everywhere: whatever goes wrong, the
 * answer is '' (print nothing, exit 0) and the agent's command runs as typed.
 *
 * It loads only what a decision needs: the matcher, the project and the
 * observer client come in with evaluate.js, and only for a Bash command.
 */

export interface HookContext {
  env: NodeJS.ProcessEnv;
  /** The hook process's own cwd: where the host ran it. */
  cwd: string;
  /** The script this process runs (process.argv[1]): what a rewrite and SessionStart run again. */
  entry: string | undefined;
  /** Shadow mode (`vouch hook HOST --shadow`): decide and record as usual, but let every command run as typed. */
  shadow?: boolean;
  /** Writes to the hook's stderr: where Codex shows a notice (agents/hookNotice.ts). */
  warn?: (text: string) => void;
  /** When the call began, in process.uptime() milliseconds: 0 (the process's start) for a hook process; a resident server (agents/hookServer.ts) gives each call its own. */
  startedAt?: number;
  /** Answered by the resident hook server: said in the hook log. */
  server?: boolean;
  /** Reached through the native client (build/Release/vouch_hook): a rewrite runs through it too (agents/hookProgram.ts). */
  client?: boolean;
}

/** Returns exactly what goes to stdout. Never throws. */
export async function runHook(host: Host, stdin: string, context: HookContext): Promise<string> {
  let input: unknown;
  try {
    input = JSON.parse(stdin);
  } catch {
    return '';
  }
  try {
    const event = parseHookInput(input);
    if (event === null || event.kind === 'ignored') return '';
    if (event.kind === 'session-start') {
      // Once per session, and spawn's module is not needed for a Bash decision: loaded here.
      const { startObserverDetached } = await import('./startObserverDetached.js');
      startObserverDetached(event.cwd ?? context.cwd, context.env, context.entry);
      // Claude Code adds SessionStart stdout to the agent's context: nothing is said.
      return '';
    }
    const session = (input as { session_id?: unknown }).session_id;
    return await answerBash(host, event, context, typeof session === 'string' ? session : null);
  } catch {
    return '';
  }
}

/** VOUCH_FORCE=1 in front of the command or a part of it, for the ledger's count of forced reruns. */
const FORCED = /(^|[\s;&|(])VOUCH_FORCE=1[ \t]/;

async function answerBash(host: Host, event: BashEvent, context: HookContext, sessionId: string | null): Promise<string> {
  const cwd = event.cwd ?? context.cwd;
  let decision: CommandDecision;
  let source: 'observer' | 'scan' | null = null;
  let seen: EvaluationSeen = {};
  let notice: string | undefined;
  if (context.env.VOUCH_FORCE === '1') {
    decision = { kind: 'pass', why: 'VOUCH_FORCE=1 is set for the hook', checks: [] };
  } else {
    try {
      const { evaluateCommand } = await import('./evaluate.js');
      // A forced command is matched too, without asking whether its checks are current: where it rewrites
      // cleanly it runs through `vouch run` (agents/commandDecision.ts), and the ledger counts forced reruns.
      const evaluation = await evaluateCommand({ command: event.command, cwd, env: context.env, program: hookProgram(context.env, context.entry, process.execPath, context.client === true) });
      decision = evaluation.decision;
      source = evaluation.source;
      seen = evaluation.seen;
      notice = evaluation.notice;
    } catch (error) {
      // evaluateCommand does not throw by contract; a failure to load it is still a pass.
      decision = { kind: 'pass', why: `internal error: ${(error as Error).message}`, checks: [] };
    }
  }
  const response = host.respond(event, decision);
  const mode = context.shadow === true ? 'shadow' : 'enforce';
  if (seen.stateDir !== undefined) {
    try {
      const [{ hookLedgerEntry }, { recordLedger, retentionOf }] = await Promise.all([import('./hookLedger.js'), import('../store/ledgerSpool.js')]);
      const forced = FORCED.test(event.command);
      const entry = hookLedgerEntry({
        host: host.name,
        session: event.session,
        command: event.command,
        mode,
        decision: response.decision,
        evaluated: decision,
        answers: seen.answers ?? [],
        forced: forced && decision.kind !== 'deny' && decision.checks.length > 0,
        latencyMs: sinceStart(context),
        at: Date.now(),
      });
      await recordLedger(seen.stateDir, entry, retentionOf(seen.configText));
    } catch {
      // the ledger never changes what the agent gets
    }
  }
  writeHookLog(context.env, context.cwd, {
    time: new Date().toISOString(),
    host: host.name,
    command: event.command,
    decision: response.decision,
    why: response.why,
    checks: decision.checks,
    latency_ms: Math.round(sinceStart(context)),
    source,
    ...(mode === 'shadow' ? { mode } : {}),
    ...(context.server === true ? { server: true } : {}),
  });
  if (notice !== undefined && response.stdout === '') return await sayOnce(host, cwd, sessionId, notice, context);
  // Shadow mode: decided and recorded exactly as in enforce mode; the command runs as typed.
  return mode === 'shadow' ? '' : response.stdout;
}

/** vouch cannot work here: said once per session (agents/hookNotice.ts), and the command runs as typed. */
async function sayOnce(host: Host, cwd: string, sessionId: string | null, notice: string, context: HookContext): Promise<string> {
  const { firstInSession, noticeOutput } = await import('./hookNotice.js');
  if (!(await firstInSession(cwd, sessionId))) return '';
  const out = noticeOutput(host.name, `vouch: ${notice}. Until then, the vouch hook lets every command run as typed.`);
  if (out.stderr !== '') context.warn?.(out.stderr);
  return out.stdout;
}

/** Milliseconds since the call began; process.uptime(), not performance.now(), which loads perf_hooks for the global (about 0.6 ms). */
function sinceStart(context: HookContext): number {
  return process.uptime() * 1000 - (context.startedAt ?? 0);
}
