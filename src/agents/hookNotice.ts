import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type { HostName } from './host.js';

/*
 * When vouch itself cannot work (a native module built for another Node), the
 * hook still lets every command run as typed, but says so once per agent
 * session, so that someone learns why vouch stopped answering: on Claude Code
 * as a top-level "systemMessage", which it shows to the user
 * (https://docs.anthropic.com/en/docs/claude-code/hooks, "Common JSON
 * fields"); on Codex on stderr (https://developers.openai.com/codex/hooks),
 * which stays out of the agent's context.
 *
 * Once per session: the state dir keeps one file, NOTICE_FILE, holding a
 * digest of the last session told. It is written only inside a state dir that
 * is safe to write (store/stateDir.ts: a real directory of this user's,
 * owner-only, never through a link); where that cannot be had, the notice is
 * given every time rather than written anywhere else.
 */

export const NOTICE_FILE = 'hook-notice';

/** What the hook prints for a notice: stdout for Claude Code, stderr for Codex. */
export function noticeOutput(host: HostName, message: string): { stdout: string; stderr: string } {
  if (host === 'claude') return { stdout: JSON.stringify({ systemMessage: message }) + '\n', stderr: '' };
  return { stdout: '', stderr: `${message}\n` };
}

/** Whether this session has not been told yet, recording that it now is; true when that cannot be known. */
export async function firstInSession(cwd: string, sessionId: string | null): Promise<boolean> {
  if (sessionId === null || sessionId === '') return true;
  try {
    const { locateProject } = await import('../api/project.js');
    const { ensureStateDir, readStateFile, writeStateFile } = await import('../store/stateDir.js');
    const { stateDir } = locateProject({ cwd });
    ensureStateDir(stateDir);
    const file = join(stateDir, NOTICE_FILE);
    const key = `${createHash('sha256').update(sessionId).digest('hex')}\n`;
    if (readStateFile(file) === key) return false;
    writeStateFile(file, key, stateDir);
    return true;
  } catch {
    return true;
  }
}
