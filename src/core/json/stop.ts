// oxlint-disable unicorn/no-thenable -- `then` here is JSON Schema's keyword (https://json-schema.org/understanding-json-schema/reference/conditionals), not a promise's.
import { z } from 'zod';
import { schemaVersion } from './common.js';
import { pid } from './observer.js';

/* `vouch stop --json` (docs/json.md, "vouch stop --json"). */

export const stopDocument = z.strictObject({
  schema: schemaVersion,
  action: z
    .enum(['stopped', 'not-running'])
    .describe('stopped: the observer exited (killed when it did not within 5 s) and its socket and record are gone. not-running: there was none.'),
  pid: pid.nullable().describe('The observer that was stopped; null when none ran.'),
}).meta({
  if: { properties: { action: { const: 'stopped' } } },
  then: { properties: { pid: { type: 'integer' } } },
  else: { properties: { pid: { type: 'null' } } },
});

export type StopDocument = z.output<typeof stopDocument>;
