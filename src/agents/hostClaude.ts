import type { CommandDecision } from './commandDecision.js';
import { denyOutput, type BashEvent, type Host, type HostResponse } from './host.js';

/*
 * Claude Code (https://docs.anthropic.com/en/docs/claude-code/hooks, "PreToolUse
 * decision control"). A deny carries its reason to Claude. A rewrite sends
 * updatedInput as the whole original tool_input with only `command` changed
 * (updatedInput replaces the input object), and no permissionDecision: the
 * user's own allow, ask and deny rules still decide whether the rewritten
 * command may run.
 */
export const claude: Host = {
  name: 'claude',
  respond(event: BashEvent, decision: CommandDecision): HostResponse {
    if (decision.kind === 'deny') {
      if (decision.reason.trim() === '') return { stdout: '', decision: 'pass', why: 'a deny without a reason is not sent' };
      return { stdout: denyOutput(decision.reason), decision: 'deny', why: decision.reason };
    }
    if (decision.kind === 'rewrite') {
      const updatedInput = { ...event.toolInput, command: decision.command };
      return { stdout: JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse', updatedInput } }) + '\n', decision: 'rewrite', why: decision.why };
    }
    return { stdout: '', decision: 'pass', why: decision.why };
  },
};
