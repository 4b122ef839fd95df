import { VouchError } from '../core/errors.js';

const UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** "90s", "30m", "8h", "1d" or a bare number of seconds, in milliseconds. */
export function parseDuration(text: string, flag: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$/.exec(text.trim());
  const value = match ? Number(match[1]) * (UNITS[match[2] ?? 's'] ?? 1_000) : NaN;
  if (!Number.isFinite(value) || value <= 0 || value > 2 ** 31 - 1) {
    throw new VouchError('usage', `${flag} takes a duration such as 90s, 30m or 8h (at most 24d), not "${text}"`);
  }
  return Math.round(value);
}
