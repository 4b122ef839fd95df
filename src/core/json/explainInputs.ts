// oxlint-disable unicorn/no-thenable -- `then` here is JSON Schema's keyword (https://json-schema.org/understanding-json-schema/reference/conditionals), not a promise's.
import { z } from 'zod';
import { SCRIPT_BODY_LIMIT } from '../scriptContext.js';
import type { DeclaredGroupKind, TracedGroupKind } from '../inputGroups.js';
import { count, notices, schemaVersion, type SameMembers } from './common.js';
import { executable, packageManager } from './explain.js';
import { checkName, receipt } from './status.js';

/* `vouch explain CHECK --inputs --json` (docs/json.md, "vouch explain CHECK --inputs --json"). */

const strings = z.array(z.string());

const bucket = z
  .strictObject({
    name: z
      .string()
      .min(1)
      .describe(
        'A top-level directory ("." for files in the root), the directory a path outside the root is in ("/home/me"), or a package directory: node_modules/NAME, node_modules/@SCOPE/NAME, node_modules/.pnpm/DIR.',
      ),
    count,
  })
  .meta({ id: 'input_bucket' });

const DECLARED_KINDS = ['source', 'installed'] as const;
const TRACED_KINDS = ['read', 'listed', 'found', 'absent', 'installed', 'outside', 'own'] as const;
// The groups core/inputGroups.ts makes, and no other: a kind added there must be described here.
const mirrored: [SameMembers<(typeof DECLARED_KINDS)[number], DeclaredGroupKind>, SameMembers<(typeof TRACED_KINDS)[number], TracedGroupKind>] = [true, true];
void mirrored;

const group = z
  .strictObject({
    kind: z
      .enum(['source', 'installed', 'read', 'listed', 'found', 'absent', 'outside', 'own'])
      .describe(
        'Declared receipts: source (files bound by content), installed (files under the installed globs, bound by identity). ' +
          'Traced receipts, each path in the first that applies: own (the run wrote it, then read, listed or looked it up: its own cache or output), ' +
          'outside (an absolute path outside the root), absent (looked up and not there), installed (under a node_modules directory), ' +
          'read (opened for reading, or executed), listed (a directory whose entries it read), found (looked up and there).',
      ),
    by: z.enum(['directory', 'package']).describe('What the buckets are: packages (installed), else top-level directories.'),
    count,
    buckets: z.array(bucket).describe('Every bucket, by count (largest first), then by name.'),
    paths: strings.describe('Every path of this kind, sorted: relative to the root, or absolute outside it (traced).'),
  })
  .meta({ id: 'input_group' });

const evidenceEntry = z
  .strictObject({
    path: z.string().min(1).describe('Relative to the root ("." for the root itself), absolute outside it.'),
    use: z.enum(['read', 'listed', 'lookup']).describe('What the run did with it: read its content, listed its entries, or only looked it up.'),
    own: z.boolean().describe('The run wrote it: it is held to what the run left there.'),
    type: z.enum(['absent', 'file', 'directory', 'other', 'error']).describe('What was at the path when the run ended, links followed.'),
    link: z.string().nullable().describe('What the link says, when the path itself is a symbolic link; else null.'),
    digest: z
      .string()
      .nullable()
      .describe("sha256 of a read file's bytes or of a listed directory's entries (names and kinds); SIZE:MTIME_NS of a file only looked up (null when its bytes were read under another name); the error, for type error; else null."),
    executable: z.boolean().nullable().describe('For a file the run executed: whether it may be executed (any execute bit); else null.'),
  })
  .meta({ id: 'evidence_entry', description: "One path a traced receipt's run touched, fingerprinted by what the run did with it." });

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
    .enum(['declared', 'traced'])
    .describe(
      "How the receipt's inputs were found. declared: the check's inputs and installed globs, as observed when it ran. " +
        'traced: what its run read, listed and looked up. Without a receipt, the mode the check is configured with.',
    ),
  receipt: receipt.nullable().describe('The latest receipt, whose inputs these are; null when the check has none, and then nothing is known.'),
  declared: z
    .strictObject({ inputs: strings, installed: strings })
    .nullable()
    .describe("The globs the receipt's check declared; null without a receipt."),
  context: context.nullable().describe('Null without a receipt.'),
  groups: z
    .array(group)
    .nullable()
    .describe(
      "The receipt's inputs, grouped by kind, every kind in order even when empty: source, installed (declared); read, listed, found, absent, installed, outside, own (traced). " +
        'Null without a receipt, or when its manifest or evidence cannot be read (a notice says so).',
    ),
  evidence: z
    .array(evidenceEntry)
    .nullable()
    .describe("A traced receipt's evidence, every entry, sorted by path. Null for a declared receipt, without a receipt, or when it cannot be read."),
  notices,
}).meta({
  allOf: [
    {
      description: 'A declared receipt groups its inputs as source and installed, and has no evidence entries.',
      if: { properties: { mode: { const: 'declared' } } },
      then: { properties: { groups: { anyOf: [{ type: 'null' }, { type: 'array', items: { type: 'object', properties: { kind: { enum: [...DECLARED_KINDS] } } } }] }, evidence: { type: 'null' } } },
      else: { properties: { groups: { anyOf: [{ type: 'null' }, { type: 'array', items: { type: 'object', properties: { kind: { enum: [...TRACED_KINDS] } } } }] } } },
    },
  ],
});

export type ExplainInputsDocument = z.output<typeof explainInputsDocument>;
