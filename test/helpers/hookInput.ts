import type { Json } from './answers.js';

/** Claude Code's PreToolUse input for its Bash tool, as in the hooks reference (docs/hooks.md). */
export function claudeBash(cwd: string, command: string): Json {
  return {
    session_id: 'abc123',
    prompt_id: '550e8400-e29b-41d4-a716-446655440000',
    transcript_path: '/home/user/.claude/projects/x/transcript.jsonl',
    cwd,
    permission_mode: 'default',
    hook_event_name: 'PreToolUse',
    tool_name: 'Bash',
    tool_input: { command, description: 'Run the checks', timeout: 120000, run_in_background: false },
    tool_use_id: 'toolu_01ABC123',
  };
}
