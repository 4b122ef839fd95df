import { z } from 'zod';

/*
 * Pieces every JSON document of the --json contract (docs/json.md) shares.
 * A schema with an `id` becomes a named entry of `$defs` in the generated
 * JSON Schema (https://zod.dev/json-schema#metadata), so the ids here are
 * also the names consumers see; they are unique across all documents.
 */

/** `"schema": 1`: within format 1, no field is removed or renamed and none changes its meaning. */
export const schemaVersion = z.literal(1);

/** Date.prototype.toISOString's form: UTC, milliseconds, ending in Z. */
export const time = z
  .string()
  .regex(/^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?Z$/)
  .meta({ id: 'time', format: 'date-time', description: 'An ISO-8601 time in UTC, as Date.prototype.toISOString writes it.' });

export const durationMs = z.number().int().min(0).meta({ id: 'duration_ms' });

export const count = z.number().int().min(0);

/** root, config_path, state_dir, log_path and the like. */
export const absolutePath = z.string().min(1).regex(/^\//).meta({ id: 'absolute_path' });

export const notices = z
  .array(z.string())
  .meta({
    id: 'notices',
    description:
      'Things the user must hear about, also printed on stderr: a damaged state.db kept aside (with what it held), a full disk under the state dir, why the observer was not used. Empty when there is nothing to say.',
  });

/** The message of a reason or an error: for people, never matched on. */
export const message = z.string().min(1).describe('For people: names the problem and the fix. Not stable; match on code.');

/** True exactly when the two union types have the same members: keeps a zod enum equal to the TypeScript union it mirrors. */
export type SameMembers<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
