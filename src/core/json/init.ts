// oxlint-disable unicorn/no-thenable -- `then` here is JSON Schema's keyword (https://json-schema.org/understanding-json-schema/reference/conditionals), not a promise's.
import { z } from 'zod';
import { CHECK_NAME, CHECK_NAME_MAX, PACKAGE_MANAGERS, type Config } from '../config.js';
import { absolutePath, schemaVersion } from './common.js';
import { checkKind } from './status.js';

/* `vouch init --json` (docs/json.md, "vouch init --json"). */

/** A check's name as the config accepts it: a root check's, or a package check's PACKAGE#SCRIPT. */
const checkName = z.string().regex(CHECK_NAME).max(CHECK_NAME_MAX).meta({ id: 'proposed_check_name', description: 'A root check\'s name, or a package check\'s PACKAGE#SCRIPT (e.g. "@scope/a#test").' });

const verifyOutcome = z
  .strictObject({
    passed: z.boolean().describe('It exited 0.'),
    exit_code: z.number().int().nullable().describe('Its exit code; null when it could not start, or was ended by a signal.'),
    signal: z.string().nullable().describe('The signal that ended it, or null.'),
    error: z.string().nullable().describe('Why it did not finish on its own (it could not start, it ran out of time), or null.'),
    duration_ms: z.number().int().nonnegative(),
    output_head: z.array(z.string()).describe("The first lines of its output (without the package manager's banner)."),
  })
  .meta({ id: 'verify_outcome', description: 'What one run under --verify did. Nothing is recorded: it is no receipt.' });

const proposedCheck = z
  .strictObject({
    name: checkName,
    kind: checkKind,
    script: z.string().nullable().describe('The package.json script it runs; null for a command check.'),
    command: z.array(z.string()).min(1).nullable().describe('The argv it runs; null for a script check.'),
    script_command: z.string().nullable().describe("The script's command line from package.json; null for a command check."),
    package: z
      .strictObject({ name: z.string().min(1), dir: z.string().min(1) })
      .nullable()
      .describe('For a package check (named PACKAGE#SCRIPT): the workspace package, and its root-relative directory (its config "package"); null at the root.'),
    reason: z.string().min(1).describe('Why it was proposed, and why this kind.'),
    inputs_note: z.string().min(1).describe('Why its inputs are what they are.'),
    invented: z.boolean().describe('vouch made it up: the project has no script for it (a direct tsc --noEmit, a tsc -b before it).'),
    unverified: z.boolean().describe('Invented, and not run by --verify: whether it passes on this tree is not known.'),
    needs_first: z.array(checkName).describe('Builds proposed before it, because it reads their output.'),
    verify: verifyOutcome.nullable().describe('What --verify saw; null without --verify. A script check that failed stays proposed.'),
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
    all: z.boolean().describe('--all was given: scripts left out by default are proposed, each saying why.'),
    verify: z.boolean().describe('--verify was given: each check ran once before the config was written.'),
    package_manager: z.strictObject({
      name: z.enum(PACKAGE_MANAGERS),
      source: z
        .enum(['packageManager-field', 'lockfile', 'workspace-file', 'default'])
        .describe("What decided: package.json's packageManager field, a lockfile, pnpm-workspace.yaml (pnpm, before any lockfile), or nothing (npm by default)."),
      lockfile: z
        .string()
        .nullable()
        .describe('The lockfile relative to the root (../../pnpm-lock.yaml for a workspace member); null when there is none.'),
      variant: z.literal(['classic', 'berry', null]).describe('Yarn only: classic (1.x) or berry (2+); null for the others.'),
    }),
    checks: z.array(proposedCheck).min(1).describe("The proposed checks, in the config's order."),
    skipped: z
      .array(
        z.strictObject({
          script: z.string().min(1),
          package: z.string().min(1).nullable().describe("The workspace package's name, for a package script; null for a root script."),
          reason: z.string().min(1),
          proposed_by_all: z.boolean().describe('vouch init --all would propose it: false only for lifecycle scripts, npm\'s placeholder and a package whose name cannot name a check.'),
        }),
      )
      .describe('Scripts that look like checks but were not proposed, with why.'),
    dropped: z
      .array(
        z.strictObject({
          name: checkName,
          command: z.array(z.string()).min(1),
          reason: z.string().min(1),
          verify: verifyOutcome,
        }),
      )
      .describe('Invented checks that --verify ran and saw fail: not proposed.'),
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
