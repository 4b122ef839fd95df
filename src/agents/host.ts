import type { CommandDecision } from './commandDecision.js';

/*
 * What the hook needs from an agent host: its stdin JSON read into an event,
 * and a decision written back in the host's own output format. Claude Code
 * and Codex share the wire format of PreToolUse and SessionStart input; they
 * differ in what they accept back (hostClaude.ts, hostCodex.ts).
 */

export type HostName = 'claude' | 'codex';

/** A shell command the agent is about to run through its Bash tool. */
export interface BashEvent {
  kind: 'bash';
  command: string;
  /** The agent's working directory (follows `cd`); null when the host left it out. */
  cwd: string | null;
  /** The tool's whole input, so a rewrite can hand every other field back unchanged. */
  toolInput: Record<string, unknown>;
  /** The host's session id (both hosts send session_id), for the ledger; null when absent. */
  session: string | null;
}

export interface SessionStartEvent {
  kind: 'session-start';
  cwd: string | null;
}

/** Anything else the hook may be sent (another tool, another event): it stays out of the way. */
export interface IgnoredEvent {
  kind: 'ignored';
}

export type HookEvent = BashEvent | SessionStartEvent | IgnoredEvent;

/** What the hook did about a Bash command, as the log and the tests see it. */
export interface HostResponse {
  /** Exactly what goes to stdout: '' means nothing, which every host reads as "carry on". */
  stdout: string;
  decision: 'deny' | 'rewrite' | 'pass';
  why: string;
}

export interface Host {
  name: HostName;
  respond(event: BashEvent, decision: CommandDecision): HostResponse;
}

/**
 * Reads the fields both hosts send. Shapes that are not recognised become
 * null (malformed) or "ignored", never an error: the hook fails open.
 */
export function parseHookInput(input: unknown): HookEvent | null {
  if (!isRecord(input)) return null;
  const cwd = typeof input.cwd === 'string' && input.cwd.startsWith('/') ? input.cwd : null;
  if (input.hook_event_name === 'SessionStart') return { kind: 'session-start', cwd };
  if (input.hook_event_name !== 'PreToolUse') return { kind: 'ignored' };
  // Both hosts name their shell tool "Bash"; Codex also routes apply_patch and MCP tools here.
  if (input.tool_name !== 'Bash') return { kind: 'ignored' };
  const toolInput = input.tool_input;
  if (!isRecord(toolInput) || typeof toolInput.command !== 'string') return null;
  const session = typeof input.session_id === 'string' && input.session_id.length <= 200 ? input.session_id : null;
  return { kind: 'bash', command: toolInput.command, cwd, toolInput, session };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The PreToolUse deny both hosts understand; the reason is what the agent reads. */
export function denyOutput(reason: string): string {
  return JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: reason } }) + '\n';
}
