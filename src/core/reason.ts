/** Why a check is not CURRENT, or why its receipt cannot be reused. Codes are stable; docs/json.md lists them. */
export interface Reason {
  code: ReasonCode;
  message: string;
}

export type ReasonCode =
  | 'never-run'
  | 'definition-changed'
  | 'context-changed'
  | 'inputs-changed'
  | 'inputs-empty'
  | 'input-outside-root'
  | 'input-symlink-loop'
  | 'input-unreadable'
  | 'input-name-not-utf8'
  | 'input-unsupported-type'
  | 'executable-not-found'
  | 'script-not-found'
  | 'inputs-changed-during-run'
  | 'interrupted'
  | 'log-not-written'
  | 'failed'
  | 'input-changing'
  | 'observation-unhealthy'
  | 'state-dir-in-git';

export function reason(code: ReasonCode, message: string): Reason {
  return { code, message };
}
