import { z } from 'zod';
import { notices, schemaVersion } from './common.js';
import { checkName, checkStatus, receipt } from './status.js';

/* `vouch run --json` (docs/json.md, "vouch run --json"). */

const ran = z
  .strictObject({
    name: checkName,
    action: z.literal('ran'),
    exit_code: z.number().int().min(0).describe("The check's exit code, or 128+N when signal N ended it; 127 when its program was not found."),
    status: z.null(),
    receipt,
    error: z
      .strictObject({ code: z.string().min(1), message: z.string().min(1) })
      .nullable()
      .describe("What vouch could not do after the check ran, such as saving the receipt (code disk-full); null when nothing failed. The exit codes stay the check's."),
  })
  .meta({ id: 'ran' });

const skipped = z
  .strictObject({
    name: checkName,
    action: z.literal('skipped'),
    exit_code: z.literal(0),
    status: checkStatus.meta({
      allOf: [{ type: 'object', properties: { freshness: { const: 'CURRENT' }, result: { const: 'PASS' }, reuse_eligible: { const: true } } }],
    }),
    receipt: z.null(),
    error: z.null(),
  })
  .meta({ id: 'skipped', description: '--if-due found a CURRENT, PASS, reusable receipt, so the check did not run.' });

export const runDocument = z.strictObject({
  schema: schemaVersion,
  exit_code: z.number().int().min(0).describe("vouch's own exit code: the first failing check's exit code (128+N for signal N), else 0."),
  runs: z
    .array(z.xor([ran, skipped]))
    .describe('One entry per check, in the order run. After an interrupt the rest are not run and not listed.'),
  notices,
});

export type RunDocument = z.output<typeof runDocument>;
