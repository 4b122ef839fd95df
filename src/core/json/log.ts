import { z } from 'zod';
import { notices, schemaVersion } from './common.js';
import { receipt } from './status.js';

/* `vouch log --json` (docs/json.md, "vouch log --json"). */

export const logDocument = z.strictObject({
  schema: schemaVersion,
  receipts: z.array(receipt).describe("At most --limit receipts (default 20), newest first; only CHECK's when one is named."),
  notices,
});

export type LogDocument = z.output<typeof logDocument>;
