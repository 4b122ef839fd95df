import { MAX_LINE_BYTES } from './protocol.js';

/** How long a client waits for the observer unless VOUCH_OBSERVER_TIMEOUT_MS says otherwise. */
export const DEFAULT_DEADLINE_MS = 5_000;

/** The longest answer read, in characters (bytes on the native path): an observer sending more is broken. */
export const MAX_ANSWER_CHARS = 64 * MAX_LINE_BYTES;

export function deadlineFrom(env: NodeJS.ProcessEnv): number {
  const value = Number(env.VOUCH_OBSERVER_TIMEOUT_MS);
  return Number.isFinite(value) && value > 0 ? value : DEFAULT_DEADLINE_MS;
}

/** The addon takes a 32-bit deadline in whole milliseconds; VOUCH_OBSERVER_TIMEOUT_MS may say more. */
export function addonDeadline(deadlineMs: number): number {
  return Math.min(2 ** 31 - 1, Math.max(1, Math.ceil(deadlineMs)));
}
