import { createHash, createHmac } from 'node:crypto';

export function sha256(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/**
 * Environment values are digested with a per-state key, so a short secret
 * cannot be recovered from the store by hashing guesses.
 */
export function keyedDigest(key: string, value: string): string {
  return createHmac('sha256', key).update(value).digest('hex');
}
