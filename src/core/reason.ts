/** Why a check is not CURRENT, or why its receipt cannot be reused. Codes are stable; docs/json.md lists them. */
export interface Reason {
  code: ReasonCode;
  message: string;
}

/** Every reason code: the JSON documents' enum (core/json/status.ts) and the tests read this list. */
export const REASON_CODES = [
  'never-run',
  'definition-changed',
  'context-changed',
  'inputs-changed',
  'inputs-empty',
  'input-outside-root',
  'input-symlink-loop',
  'input-unreadable',
  'input-name-not-utf8',
  'input-unsupported-type',
  'executable-not-found',
  'script-not-found',
  'inputs-changed-during-run',
  'interrupted',
  'log-not-written',
  'failed',
  'input-changing',
  'observation-unhealthy',
  'state-dir-in-git',
  'trace-unavailable',
  'trace-incomplete',
  'read-outside-inputs',
] as const;

export type ReasonCode = (typeof REASON_CODES)[number];

/** The codes of a receipt's evidence notes (core/receipt.ts): they say how it was made, never why it is not CURRENT. */
export const NOTE_CODES = ['trace-unavailable', 'trace-incomplete', 'read-outside-inputs'] as const satisfies readonly ReasonCode[];

export function reason(code: ReasonCode, message: string): Reason {
  return { code, message };
}
