import type { Origin } from './claim.js';
import { VouchError, type VouchErrorCode } from './errors.js';

/** Every claim failure that is not an issue in a verdict; each is also in VOUCH_ERROR_CODES. */
export const CLAIM_ERROR_CODES = ['refused', 'missing', 'malformed', 'destroyed', 'deadline', 'stage-timeout', 'unsupported'] as const satisfies readonly VouchErrorCode[];

export type ClaimErrorCode = (typeof CLAIM_ERROR_CODES)[number];

/**
 * A timeout that is nobody's bug (a tool slow to start on a loaded machine)
 * exits EX_TEMPFAIL: trying again may work (sysexits(3),
 * https://man.freebsd.org/cgi/man.cgi?query=sysexits). A claimant's runaway
 * code is not that: it exits 2 like every other refusal.
 */
export const TIMEOUT_EXIT_CODE = 75;

/**
 * A claim failure that names who must act (origin) and what went wrong (code).
 * It extends VouchError so the existing edge renders it; the message is
 * already `[origin] code: detail`, the one form both the CLI and MCP show.
 */
export class ClaimError extends VouchError {
  readonly origin: Origin;
  override readonly code: ClaimErrorCode;
  /** The message without the `[origin] code:` prefix. */
  readonly detail: string;

  constructor(origin: Origin, code: ClaimErrorCode, detail: string) {
    super(code, `[${origin}] ${code}: ${detail}`, code === 'stage-timeout' || (code === 'deadline' && origin === 'instrument') ? TIMEOUT_EXIT_CODE : 2);
    this.name = 'ClaimError';
    this.origin = origin;
    this.code = code;
    this.detail = detail;
  }
}

export function isClaimError(error: unknown): error is ClaimError {
  return error instanceof ClaimError;
}
