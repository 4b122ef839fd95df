/**
 * A failure the user can act on: a stable code plus a message that names the fix.
 * Rendered once, at the edge (CLI or MCP); everything below only throws.
 */
export class VouchError extends Error {
  readonly code: string;
  readonly exitCode: number;

  constructor(code: string, message: string, exitCode = 2) {
    super(message);
    this.name = 'VouchError';
    this.code = code;
    this.exitCode = exitCode;
  }
}

export function isVouchError(error: unknown): error is VouchError {
  return error instanceof VouchError;
}
