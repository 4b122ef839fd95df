import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Project } from '../api/project.js';
import { isClaimError } from '../core/claimError.js';
import { isVouchError, VouchError } from '../core/errors.js';

/** A tool answer: the --json document as structuredContent, and a short summary for people and older clients. */
export function answer(structured: Record<string, unknown>, summary: string): CallToolResult {
  return { structuredContent: structured, content: [{ type: 'text', text: summary }] };
}

/**
 * A failure as an MCP tool error. `isError` results reach the model, which can
 * act on the fix in the message; a protocol error would not. Only a VouchError's
 * message is written for users; anything else is a bug in vouch and says so.
 */
export function failure(error: unknown): CallToolResult {
  // A claim error's message is already `[origin] code: detail`, the form the CLI shows too.
  const text = isClaimError(error)
    ? error.message
    : isVouchError(error)
    ? `${error.code}: ${error.message}`
    : `internal: internal error in vouch: ${(error as Error).message ?? String(error)}; please report it`;
  return { isError: true, content: [{ type: 'text', text }] };
}

/**
 * Refuses any name the config does not define, naming the member refused
 * (`check`, or `checks[1]` for a list), so that a tool never reaches a check by
 * a name it guessed.
 */
export function requireConfigured(project: Project, member: string, names: string | readonly string[]): void {
  const known = project.definitions.map((definition) => definition.name);
  const list = typeof names === 'string' ? [names] : names;
  list.forEach((name, index) => {
    if (known.includes(name)) return;
    const where = typeof names === 'string' ? member : `${member}[${index}]`;
    throw new VouchError('unknown-check', `${where}: no check named "${name}"; checks: ${known.join(', ') || `none yet; add one to ${project.configPath}`}`);
  });
}
