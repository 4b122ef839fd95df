import { z } from 'zod';
import { SCRIPT_BODY_LIMIT } from '../scriptContext.js';
import { count, notices, schemaVersion } from './common.js';
import { executable, packageManager } from './explain.js';
import { checkName, receipt } from './status.js';

/* `vouch explain CHECK --inputs --json` (docs/json.md, "vouch explain CHECK --inputs --json"). */

const strings = z.array(z.string());

const bucket = z
  .strictObject({
    name: z.string().min(1).describe('A top-level directory ("." for files in the root), or a package directory: node_modules/NAME, node_modules/@SCOPE/NAME, node_modules/.pnpm/DIR.'),
    count,
  })
  .meta({ id: 'input_bucket' });

const group = z
  .strictObject({
    kind: z
      .enum(['source', 'installed'])
      .describe('source: files bound by content; installed: files under the installed globs, bound by identity. Traced receipts will add kinds.'),
    by: z.enum(['directory', 'package']).describe('What the buckets are: top-level directories (source) or packages (installed).'),
    count,
    buckets: z.array(bucket).describe('Every bucket, by count (largest first), then by name.'),
    paths: strings.describe('Every input of this kind, relative to the root, sorted.'),
  })
  .meta({ id: 'input_group' });

const context = z
  .strictObject({
    argv: strings,
    executable,
    node: z.strictObject({ version: z.string(), executable }),
    platform: z.string(),
    arch: z.string(),
    package_manager: packageManager,
    env: z
      .array(z.strictObject({ name: z.string().min(1), set: z.boolean() }))
      .describe('The environment variables the receipt is bound to, by name, and whether each was set. Never a value.'),
    scripts: z
      .array(
        z.strictObject({
          name: z.string().min(1),
          body: z.string().nullable().describe(`As written in package.json; null when longer than ${SCRIPT_BODY_LIMIT} characters.`),
          digest: z.string().regex(/^[0-9a-f]{64}$/),
        }),
      )
      .describe('The package.json scripts the command runs, by name.'),
  })
  .meta({ id: 'receipt_context', description: "The receipt's context: what besides the inputs it is bound to." });

export const explainInputsDocument = z.strictObject({
  schema: schemaVersion,
  check: checkName,
  mode: z
    .literal('declared')
    .describe("How the inputs were found: declared, the check's inputs and installed globs as observed when it ran. Traced receipts will say traced."),
  receipt: receipt.nullable().describe('The latest receipt, whose inputs these are; null when the check has none, and then nothing is known.'),
  declared: z
    .strictObject({ inputs: strings, installed: strings })
    .nullable()
    .describe("The globs the receipt's check declared; null without a receipt."),
  context: context.nullable().describe('Null without a receipt.'),
  groups: z
    .array(group)
    .nullable()
    .describe("The receipt's inputs, grouped by kind: source, then installed. Null without a receipt, or when its manifest cannot be read (a notice says so)."),
  notices,
});

export type ExplainInputsDocument = z.output<typeof explainInputsDocument>;
