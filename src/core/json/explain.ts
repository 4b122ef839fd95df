// oxlint-disable unicorn/no-thenable -- `then` here is JSON Schema's keyword (https://json-schema.org/understanding-json-schema/reference/conditionals), not a promise's.
import { z } from 'zod';
import { PACKAGE_MANAGERS } from '../config.js';
import { SCRIPT_BODY_LIMIT } from '../scriptContext.js';
import { notices, schemaVersion } from './common.js';
import { checkStatus, reasons } from './status.js';

/* `vouch explain CHECK --json` (docs/json.md, "vouch explain CHECK --json"). */

const strings = z.array(z.string()).meta({ id: 'strings' });

const definitionValue = z.xor([z.string(), strings, z.null()]).meta({ id: 'definition_value' });

const definitionChange = z
  .strictObject({
    field: z
      .enum(['name', 'kind', 'script', 'command', 'inputs', 'installed', 'env', 'packageManager', 'mode'])
      .describe("A field of the check's definition. packageManager is the only one in camelCase: it is the config's own field name. mode's values are declared and traced."),
    old: definitionValue,
    new: definitionValue,
  })
  .meta({ id: 'definition_change' });

export const executable = z
  .strictObject({
    path: z.string().min(1).describe('The resolved file, after symlinks.'),
    identity: z.string().min(1).describe('Its file identity (device, inode, size, mode, times), colon-separated.'),
  })
  .nullable()
  .meta({ id: 'executable' });

export const packageManager = z
  .strictObject({ name: z.enum(PACKAGE_MANAGERS), version: z.string().nullable(), executable })
  .nullable()
  .meta({ id: 'package_manager' });

const scriptBody = z
  .strictObject({
    body: z.string().nullable().describe(`The body as written in package.json; null when longer than ${SCRIPT_BODY_LIMIT} characters, and then only the digest is kept.`),
    digest: z.string().regex(/^[0-9a-f]{64}$/).describe('sha256 of the body.'),
  })
  .nullable()
  .meta({ id: 'script_body', description: 'A script the package manager runs for the check; null when the check did not run it then.' });

const contextChange = z
  .xor([
    z.strictObject({ field: z.literal('argv'), old: strings, new: strings }),
    z.strictObject({ field: z.enum(['executable', 'node.executable']), old: executable, new: executable }),
    z.strictObject({ field: z.enum(['node.version', 'platform', 'arch']), old: z.string(), new: z.string() }),
    z.strictObject({ field: z.literal('package_manager'), old: packageManager, new: packageManager }),
    z
      .strictObject({
        field: z.string().regex(/^env\.[^=\s]+$/),
        old: z.enum(['set', 'unset']),
        new: z.enum(['set', 'unset', 'changed']),
      })
      .describe('An environment variable: only whether it is set, and whether its value changed; never a value.'),
    z
      .strictObject({ field: z.string().regex(/^script\..+$/), old: scriptBody, new: scriptBody })
      .describe('A package.json script the command runs (the script of a script check, its pre and post scripts, and the scripts it runs in turn), by name after "script.".'),
  ])
  .meta({ id: 'context_change' });

const entry = z
  .strictObject({
    type: z.enum(['file', 'symlink']),
    digest: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .nullable()
      .describe('sha256 of the content: source files, and installed files whose identity alone cannot be trusted; else null.'),
    executable: z.boolean().nullable().describe('The executable bit, for source files; else null.'),
    identity: z
      .string()
      .regex(/^[0-9]+:[0-9]+:[0-9]+:[0-7]+:[0-9]+:[0-9]+:[0-9]+$/)
      .nullable()
      .describe('Installed files: dev:ino:size:mode:nlink:mtime_ns:ctime_ns. Else null.'),
    target: z.string().nullable().describe('Symlinks: what the link says, as written. Else null.'),
  })
  .meta({
    id: 'entry',
    description: 'One side of an input change.',
    if: { properties: { type: { const: 'symlink' } } },
    then: { properties: { target: { type: 'string' }, digest: { const: null }, identity: { const: null }, executable: { const: null } } },
    else: { properties: { target: { const: null } } },
  });

const inputChange = z
  .strictObject({
    change: z
      .enum(['added', 'removed', 'modified', 'mode', 'identity', 'type'])
      .describe("added, removed; modified (content or link target); mode (executable bit); identity (an installed file's stat identity); type (file <-> symlink, or source <-> installed)."),
    path: z.string().min(1).describe('Relative to the root, with / separators.'),
    origin: z.enum(['source', 'installed']),
    old: entry.nullable(),
    new: entry.nullable(),
    identity_fields: z
      .array(z.enum(['dev', 'ino', 'size', 'mode', 'nlink', 'mtime_ns', 'ctime_ns']))
      .describe('For change identity: which parts of the identity differ. Else empty.'),
  })
  .meta({
    id: 'input_change',
    allOf: [
      { if: { properties: { change: { const: 'added' } } }, then: { properties: { old: { type: 'null' }, new: { type: 'object' } } } },
      { if: { properties: { change: { const: 'removed' } } }, then: { properties: { old: { type: 'object' }, new: { type: 'null' } } } },
      {
        if: { properties: { change: { enum: ['modified', 'mode', 'identity', 'type'] } } },
        then: { properties: { old: { type: 'object' }, new: { type: 'object' } } },
      },
      { if: { properties: { change: { const: 'mode' } } }, then: { properties: { origin: { const: 'source' } } } },
      {
        if: { properties: { change: { const: 'identity' } } },
        then: { properties: { origin: { const: 'installed' }, identity_fields: { type: 'array', minItems: 1 } } },
        else: { properties: { identity_fields: { type: 'array', maxItems: 0 } } },
      },
    ],
  });

const evidenceSide = z
  .strictObject({
    type: z.enum(['absent', 'file', 'directory', 'other', 'error']).describe('What is at the path, links followed.'),
    link: z.string().nullable().describe('What the link says, when the path itself is a symbolic link; else null.'),
    digest: z.string().nullable().describe("sha256 of a read file's bytes or of a listed directory's names; the error, for type error; else null."),
  })
  .meta({ id: 'evidence_side', description: 'One side of an evidence change: what the run left at the path, or what is there now.' });

const evidenceChange = z
  .strictObject({
    path: z.string().min(1).describe('Relative to the root ("." for the root itself), absolute outside it.'),
    use: z.enum(['read', 'listed', 'lookup']).describe('What the run did with it: read its content, listed its entries, or only looked it up.'),
    own: z.boolean().describe('The run wrote it: it is held to what the run left there.'),
    description: z.string().min(1).describe('The change in words, as the inputs-changed reason names it ("src/a.ts: content changed"). Not stable; compare old and new.'),
    old: evidenceSide,
    new: evidenceSide,
  })
  .meta({ id: 'evidence_change', description: "A traced receipt's evidence entry that differs now." });

const evidence = z
  .strictObject({
    mode: z.enum(['declared', 'traced']).describe("How the receipt's inputs were found: the declared globs, or what its run read, listed and looked up."),
    notes: reasons.describe('How the receipt was made (trace-unavailable, trace-incomplete, read-outside-inputs). Notes never make a receipt less reusable.'),
    changes: z
      .array(evidenceChange)
      .describe("Traced: every evidence entry that differs now, sorted by path (input_changes is then empty). Declared: empty; input_changes has the changes."),
  })
  .nullable()
  .meta({ id: 'receipt_evidence', description: "The receipt's evidence: its mode, its notes and, traced, what differs now. Null without a receipt." });

export const explainDocument = z.strictObject({
  schema: schemaVersion,
  check: checkStatus,
  definition_changes: z
    .array(definitionChange)
    .describe("Fields of the check's configuration (defaults filled in) that differ from the receipt's."),
  context_changes: z
    .array(contextChange)
    .describe('How the command, tools, platform or environment differ from the receipt\'s. Environment variables by name only.'),
  input_changes: z.array(inputChange).describe("A declared receipt's inputs added, removed or changed since, sorted by path. Empty for a traced receipt: evidence.changes has its changes."),
  evidence,
  notices,
});

export type ExplainDocument = z.output<typeof explainDocument>;
export type InputChangeJson = z.output<typeof inputChange>;
export type EvidenceJson = z.output<typeof evidence>;
