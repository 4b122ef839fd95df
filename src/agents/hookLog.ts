import { appendFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { HostName } from './host.js';

/** One line of VOUCH_HOOK_LOG: what the hook did about one Bash command. */
export interface HookLogLine {
  time: string;
  host: HostName;
  command: string;
  decision: 'deny' | 'rewrite' | 'pass';
  why: string;
  checks: string[];
  /** Since this process started, Node's own start-up included: what the agent waited. */
  latency_ms: number;
  /** Where the freshness answer came from; null when none was needed or none could be had. */
  source: 'observer' | 'scan' | null;
  /** Present in shadow mode: the decision was recorded, and the command ran as typed. */
  mode?: 'shadow';
}

/**
 * Appends one JSON line to the file VOUCH_HOOK_LOG names (relative to the
 * hook's cwd). One write of one line, so concurrent hooks (a host runs them in
 * parallel) interleave whole lines. A log that cannot be written is skipped:
 * the log never changes what the agent gets.
 */
export function writeHookLog(env: NodeJS.ProcessEnv, cwd: string, line: HookLogLine): void {
  const file = env.VOUCH_HOOK_LOG;
  if (file === undefined || file === '') return;
  try {
    appendFileSync(resolve(cwd, file), JSON.stringify(line) + '\n', { mode: 0o600 });
  } catch {
    // fail open: no log rather than a failed hook
  }
}
