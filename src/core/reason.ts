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

/** How many reasons of one code are named one by one before the rest are counted. */
export const NAMED_PER_CODE = 3;

/**
 * Reasons as they are shown and stored: duplicates dropped, and past NAMED_PER_CODE of one
 * code (a node_modules full of links that leave the root gives one per link) the rest counted
 * in one reason of that code. Every code present stays present, so no decision changes.
 */
export function boundedReasons(reasons: readonly Reason[]): Reason[] {
  const seen = new Set<string>();
  const named = new Map<ReasonCode, number>();
  const counted = new Map<ReasonCode, number>();
  const out: Reason[] = [];
  for (const r of reasons) {
    if (seen.has(r.message)) continue;
    seen.add(r.message);
    const shown = named.get(r.code) ?? 0;
    if (shown < NAMED_PER_CODE) {
      named.set(r.code, shown + 1);
      out.push(r);
    } else counted.set(r.code, (counted.get(r.code) ?? 0) + 1);
  }
  for (const [code, more] of counted) out.push(reason(code, `and ${more} more ${more === 1 ? 'path' : 'paths'} for the same reason (${code})`));
  return out;
}
