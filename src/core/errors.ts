/**
 * Every error code a user can meet, in an error document's `code` (docs/json.md,
 * "Errors"). Closed, so that a code is added here, in the docs and in the
 * generated schemas/error.schema.json at once, never only at a throw site.
 */
export const VOUCH_ERROR_CODES = [
  // Any command.
  'usage',
  'unknown-command',
  'internal',
  'unknown-check',
  'native-module-unloadable',
  // The config and the project.
  'config-not-found',
  'config-unreadable',
  'config-invalid-json',
  'config-invalid',
  'config-not-utf8',
  'config-too-large',
  'root-not-found',
  'root-outside-config',
  'no-package-json',
  'package-json-invalid',
  'package-manager-ambiguous',
  'package-manager-unsupported',
  'workspace-invalid',
  'init-nothing-to-check',
  'git-failed',
  // The state dir.
  'state-dir-not-writable',
  'state-dir-unsafe',
  'disk-full',
  // vouch run: a receipt whose manifest no longer exists to store (docs/json.md, "Errors").
  'manifest-unavailable',
  // Thrown and caught inside vouch (a store written by a newer vouch is set aside): no user sees it.
  'state-newer',
  // The observer.
  'observer-start-failed',
  'observer-start-timeout',
  'observer-running',
  'observer-unreachable',
  'observer-unverified',
  'socket-path-too-long',
  // vouch prove.
  'claim-unreadable',
  'prove-serving',
  'prove-server-gone',
  'prove-server-error',
  'prove-socket-taken',
  // A claim error (src/core/claimError.ts), which also names who must act.
  'refused',
  'missing',
  'malformed',
  'destroyed',
  'deadline',
  'stage-timeout',
  'unsupported',
  // vouch agent.
  'agent-record-invalid',
  'agent-file-changed',
  'agent-write-failed',
] as const;

export type VouchErrorCode = (typeof VOUCH_ERROR_CODES)[number];

/**
 * A failure the user can act on: a stable code plus a message that names the fix.
 * Rendered once, at the edge (CLI or MCP); everything below only throws.
 */
export class VouchError extends Error {
  readonly code: VouchErrorCode;
  readonly exitCode: number;

  constructor(code: VouchErrorCode, message: string, exitCode = 2) {
    super(message);
    this.name = 'VouchError';
    this.code = code;
    this.exitCode = exitCode;
  }
}

export function isVouchError(error: unknown): error is VouchError {
  return error instanceof VouchError;
}
