import type { CommandDecision } from './commandDecision.js';
import { denyOutput, type BashEvent, type Host, type HostResponse } from './host.js';

/*
 * Codex (https://developers.openai.com/codex/hooks, "PreToolUse", and its
 * parser, https://github.com/openai/codex/blob/main/codex-rs/hooks/src/engine/output_parser.rs).
 * Codex takes updatedInput only together with permissionDecision "allow",
 * which would skip the user's approval of the command, and it does not
 * support "ask". So a stale check is not rewritten here: the command runs as
 * typed, through Codex's own approval. A current check is denied; Codex
 * requires the deny's reason to be non-empty.
 */
export const codex: Host = {
  name: 'codex',
  respond(_event: BashEvent, decision: CommandDecision): HostResponse {
    if (decision.kind === 'deny') {
      if (decision.reason.trim() === '') return { stdout: '', decision: 'pass', why: 'Codex rejects a deny without a reason' };
      return { stdout: denyOutput(decision.reason), decision: 'deny', why: decision.reason };
    }
    if (decision.kind === 'rewrite') {
      return { stdout: '', decision: 'pass', why: `Codex takes a rewrite only with "allow", which would skip the user's approval; runs as typed (${decision.why})` };
    }
    return { stdout: '', decision: 'pass', why: decision.why };
  },
};
