// oxlint-disable unicorn/no-thenable -- `then` here is JSON Schema's keyword (https://json-schema.org/understanding-json-schema/reference/conditionals), not a promise's.
import { z } from 'zod';
import { PACKAGE_MANAGERS, type Config } from '../config.js';
import { absolutePath, schemaVersion } from './common.js';
import { checkKind, checkName } from './status.js';

/* `vouch init --json` (docs/json.md, "vouch init --json"). */

const proposedCheck = z
  .strictObject({
    name: checkName,
    kind: checkKind,
    script: z.string().nullable().describe('The package.json script it runs; null for a command check.'),
    command: z.array(z.string()).min(1).nullable().describe('The argv it runs; null for a script check.'),
    script_command: z.string().nullable().describe("The script's command line from package.json; null for a command check."),
    reason: z.string().min(1).describe('Why it was proposed, and why this kind.'),
    inputs_note: z.string().min(1).describe('Why its inputs are what they are.'),
  })
  .meta({
    id: 'proposed_check',
    description: 'Exactly one of script and command is set, as in the config.',
    oneOf: [
      { properties: { script: { type: 'string' }, command: { type: 'null' }, script_command: { type: 'string' } } },
      { properties: { script: { type: 'null' }, command: { type: 'array' }, script_command: { type: 'null' } } },
    ],
  });

export const initDocument = z
  .strictObject({
    schema: schemaVersion,
    root: absolutePath.describe('The project root: the nearest directory with a package.json.'),
    config_path: absolutePath.describe('Where the config is (or would be) written.'),
    state_dir: absolutePath.describe('The state dir, created only when the config was written.'),
    written: z.boolean().describe('This call wrote the config (and created the state dir).'),
    existing: z.boolean().describe('A file already sat at config_path, so nothing was written; it is left as it was.'),
    dry_run: z.boolean().describe('--dry-run was given, so nothing was written.'),
    package_manager: z.strictObject({
      name: z.enum(PACKAGE_MANAGERS),
      source: z
        .enum(['packageManager-field', 'lockfile', 'default'])
        .describe("What decided: package.json's packageManager field, a lockfile, or nothing (npm by default)."),
      lockfile: z
        .string()
        .nullable()
        .describe('The lockfile relative to the root (../../pnpm-lock.yaml for a workspace member); null when there is none.'),
      variant: z.literal(['classic', 'berry', null]).describe('Yarn only: classic (1.x) or berry (2+); null for the others.'),
    }),
    checks: z.array(proposedCheck).min(1).describe("The proposed checks, in the config's order."),
    skipped: z
      .array(z.strictObject({ script: z.string().min(1), reason: z.string().min(1) }))
      .describe('Scripts that look like checks but were not proposed, with why.'),
    notes: z.array(z.string().min(1)).describe('Things to know that are not about one check.'),
    // The config document has its own schema, generated from its validator (src/core/configSchema.ts).
    config: z
      .custom<Config>(() => true)
      .meta({ $ref: 'config.schema.json', description: 'The proposed vouch.config.json, exactly as written (or as it would be).' }),
  })
  .meta({
    allOf: [
      {
        description: 'Written only when neither a dry run nor an existing file stopped it.',
        if: { properties: { written: { const: true } } },
        then: { properties: { existing: { const: false }, dry_run: { const: false } } },
      },
      { if: { properties: { dry_run: { const: true } } }, then: { properties: { written: { const: false } } } },
    ],
  });

export type InitDocument = z.output<typeof initDocument>;
