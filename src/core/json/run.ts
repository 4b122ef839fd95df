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

const toolCount = z
  .strictObject({
    tool: z.enum(['tsc', 'eslint', 'oxlint', 'vitest', 'jest', 'node:test']),
    line: z.string().describe("The tool's own summary line as printed, ANSI escapes removed; for tsc without --pretty, how many \"error TS\" lines were counted."),
    errors: z.number().int().min(0).nullable(),
    warnings: z.number().int().min(0).nullable(),
    passed: z.number().int().min(0).nullable(),
    failed: z.number().int().min(0).nullable(),
    total: z.number().int().min(0).nullable(),
  })
  .meta({ id: 'toolCount', description: 'Counts a tool printed in the run, read from its own summary line; a tool that printed none has no entry.' });

const skipSummary = z
  .strictObject({
    line: z.string().min(1).describe('One line: the check, PASSED or FAILED, run id, when, exit code, duration, and the counts.'),
    counts: z.array(toolCount),
    saved_ms: z.number().int().min(0).describe("The receipt's duration less the skip's own time, never below zero."),
  })
  .meta({ id: 'skipSummary', description: 'What the skipped check would have said, from the receipt it relied on and its stored log.' });

const replay = z
  .strictObject({
    part: z.string().describe('Which part of the stored output this is, e.g. "the last 40 lines".'),
    text: z.string().describe('Those lines, byte for byte as stored but with ANSI escapes removed (bytes that are not UTF-8 become U+FFFD); at most 8 KB and 200 lines.'),
    lines: z.number().int().min(0),
    omitted_lines: z.number().int().min(0).describe('Lines of that part left out to stay within the bounds.'),
    notes: z.array(z.string()),
  })
  .meta({ id: 'replay', description: "The skipped run's stored output, bounded (docs/hooks.md, \"Replay\")." });

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
    summary: skipSummary.nullable().describe('Null only when the status has no receipt.'),
    output: replay.nullable().describe('The stored output: given by the MCP run tool, and by `vouch run --if-due --replay --json`; null otherwise, or when the log cannot be read.'),
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
