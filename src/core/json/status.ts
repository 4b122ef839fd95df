// oxlint-disable unicorn/no-thenable -- `then` here is JSON Schema's keyword (https://json-schema.org/understanding-json-schema/reference/conditionals), not a promise's.
import { z } from 'zod';
import { CHECK_KINDS, CHECK_NAME, CHECK_NAME_MAX, EVIDENCE_MODES } from '../config.js';
import type { Freshness } from '../decide.js';
import { REASON_CODES, type ReasonCode } from '../reason.js';
import type { CheckResult } from '../receipt.js';
import { absolutePath, durationMs, message, notices, schemaVersion, time, type SameMembers } from './common.js';

/*
 * `vouch status --json`, and the parts of it that run, explain and log share
 * (docs/json.md, "vouch status --json"). The cross-field rules a zod type
 * cannot state are JSON Schema fragments in `.meta()`, which z.toJSONSchema
 * copies into the generated schema as they are.
 */

export const checkName = z
  .string()
  .regex(CHECK_NAME)
  .max(CHECK_NAME_MAX)
  .meta({ id: 'check_name', description: "A check's name; a package check's is PACKAGE#SCRIPT (docs/workspaces.md)." });

export const checkKind = z.enum(CHECK_KINDS).meta({ id: 'check_kind' });

const FRESHNESS = ['CURRENT', 'STALE', 'UNVERIFIED'] as const;
export const freshness = z.enum(FRESHNESS).meta({ id: 'freshness' });

const RESULTS = ['PASS', 'FAIL'] as const;
export const checkResult = z.enum(RESULTS);
export const result = z.literal([...RESULTS, null]).meta({ id: 'result', description: "The receipt's own outcome; null when there is no receipt." });

export const reasonCode = z.enum(REASON_CODES).meta({ id: 'reason_code', description: 'Stable codes; docs/json.md says what each means.' });

// These enums mirror unions the code decides with: a member added to one side only fails the typecheck.
const mirrored: [SameMembers<(typeof FRESHNESS)[number], Freshness>, SameMembers<(typeof RESULTS)[number], CheckResult>] = [true, true];
void mirrored;

export const reason = z.strictObject({ code: reasonCode, message }).meta({ id: 'reason' });
export const reasons = z.array(reason).meta({ id: 'reasons' });

export const signal = z.string().regex(/^SIG[A-Z0-9]+$/).meta({ id: 'signal' });

/** A process ends either with an exit code or by a signal, never both. */
const HOW_IT_ENDED = {
  description: 'A process ends either with an exit code or by a signal, never both.',
  oneOf: [
    { properties: { exit_code: { type: 'integer', minimum: 0 }, signal: { type: 'null' } } },
    { properties: { exit_code: { type: 'null' }, signal: { type: 'string', pattern: '^SIG[A-Z0-9]+$' } } },
  ],
};

const receiptFields = {
  run_id: z
    .string()
    .regex(/^[0-9]{8}T[0-9]{6}Z-[0-9a-f]{6}$/)
    .meta({ id: 'run_id', description: "A receipt's id: its start time (UTC, to the second) and six random hex digits. Sorts by time." }),
  started_at: time,
  finished_at: time,
  duration_ms: durationMs,
  exit_code: z.number().int().min(0).nullable().describe("The check's exit code; null when a signal ended it."),
  signal: signal.nullable().describe('The signal that ended the check, e.g. SIGTERM; null when it exited.'),
};

/** The notes a receipt's evidence can carry: how it was made, never a reason against reusing it. */
const FALLBACK_NOTES = ['trace-unavailable', 'trace-incomplete'] as const satisfies readonly ReasonCode[];
const TRACED_NOTES = ['read-outside-inputs'] as const satisfies readonly ReasonCode[];

export const evidence = z
  .strictObject({
    mode: z
      .enum(EVIDENCE_MODES)
      .describe(
        "traced: the receipt is bound to what its run read, listed and looked up (a receipt's input_count counts those paths). declared: to the files its inputs and installed globs matched.",
      ),
    notes: z
      .array(reason)
      .describe(
        'How the receipt was made; never a reason against reusing it. trace-unavailable, trace-incomplete: a traced check whose run could not be traced fully, so its declared inputs stood in. read-outside-inputs: a traced run read files its declared inputs do not match.',
      ),
  })
  .meta({
    id: 'evidence',
    description: "What the receipt's inputs are, and how they were found.",
    allOf: [
      {
        description: 'A traced receipt notes only reads outside the declared inputs; a declared one only why its traced check fell back.',
        if: { properties: { mode: { const: 'traced' } } },
        then: { properties: { notes: { type: 'array', items: { type: 'object', properties: { code: { enum: [...TRACED_NOTES] } } } } } },
        else: { properties: { notes: { type: 'array', items: { type: 'object', properties: { code: { enum: [...FALLBACK_NOTES] } } } } } },
      },
    ],
  });

export const receiptSummary = z.strictObject({ ...receiptFields, evidence }).meta({
  id: 'receipt_summary',
  description: 'The receipt a status answer is about.',
  allOf: [HOW_IT_ENDED],
});

export const receipt = z
  .strictObject({
    ...receiptFields,
    check: checkName,
    result: checkResult,
    reuse_eligible: z.boolean().describe('PASS and nothing made the run itself doubtful.'),
    reasons: reasons.describe('Why the receipt itself is not reusable; a FAIL always carries failed first. Empty exactly when reuse_eligible is true.'),
    input_count: z
      .number()
      .int()
      .min(0)
      .describe('How many inputs the receipt is bound to: declared, the source and installed files its globs matched; traced, the paths its run touched (its evidence entries).'),
    evidence,
    log_path: absolutePath,
  })
  .meta({
    id: 'receipt',
    description: 'A whole receipt, as run and log report it.',
    allOf: [
      HOW_IT_ENDED,
      {
        description: 'PASS exactly when the check exited 0.',
        if: { properties: { result: { const: 'PASS' } } },
        then: { properties: { exit_code: { const: 0 } } },
        else: { properties: { exit_code: { not: { const: 0 } } } },
      },
      {
        description: 'A reusable receipt passed and has no reasons against it.',
        if: { properties: { reuse_eligible: { const: true } } },
        then: { properties: { result: { const: 'PASS' }, reasons: { type: 'array', maxItems: 0 } } },
      },
    ],
  });

export const checkStatus = z
  .strictObject({
    name: checkName,
    kind: checkKind,
    freshness,
    result,
    reuse_eligible: z.boolean().describe('CURRENT, PASS, and the receipt itself is eligible: safe to skip rerunning.'),
    reasons,
    receipt: receiptSummary.nullable(),
  })
  .meta({
    id: 'check_status',
    description: "One check's answer. freshness and result are separate: a CURRENT FAIL is still a failure.",
    allOf: [
      {
        description: 'There is a result exactly when there is a receipt.',
        if: { properties: { receipt: { type: 'null' } } },
        then: { properties: { result: { const: null }, freshness: { const: 'UNVERIFIED' } } },
        else: { properties: { result: { enum: ['PASS', 'FAIL'] } } },
      },
      {
        description: 'Reusable only when CURRENT and PASS; reasons is empty exactly when the check is reusable.',
        if: { properties: { reuse_eligible: { const: true } } },
        then: { properties: { freshness: { const: 'CURRENT' }, result: { const: 'PASS' }, reasons: { type: 'array', maxItems: 0 } } },
        else: { properties: { reasons: { type: 'array', minItems: 1 } } },
      },
      {
        description: 'STALE always says what kind of thing changed.',
        if: { properties: { freshness: { const: 'STALE' } } },
        then: {
          properties: {
            reasons: {
              type: 'array',
              minItems: 1,
              items: { type: 'object', properties: { code: { enum: ['definition-changed', 'context-changed', 'inputs-changed'] } } },
            },
          },
        },
      },
      {
        description: 'UNVERIFIED always says why no answer could be had.',
        if: { properties: { freshness: { const: 'UNVERIFIED' } } },
        then: { properties: { reasons: { type: 'array', minItems: 1 } } },
      },
    ],
  });

export const statusDocument = z.strictObject({
  schema: schemaVersion.describe('The JSON format version; it changes only with an incompatible change.'),
  root: absolutePath.describe('The project root.'),
  config_path: absolutePath.describe('The config file that was read.'),
  observation: z
    .strictObject({
      healthy: z.boolean().describe('The observation is complete; when false, every check is UNVERIFIED with observation-unhealthy.'),
      source: z
        .enum(['scan', 'observer'])
        .describe('scan: this process looked at the files itself. observer: the running observer answered from its warm index; with mode sync it promises what a scan does (docs/json.md).'),
      mode: z
        .literal(['sync', 'cached', null])
        .describe('How the observer was asked: sync (the default) takes in every write made before the question; cached answers from the index as it stands. null for a scan.'),
      observed_at: time.describe('When the scan this answer rests on began. From the observer, that may be before the question, when nothing has changed since.'),
      duration_ms: durationMs.describe('How long observing and deciding took.'),
    })
    .meta({
      description: 'How this answer\'s inputs were observed. mode is set exactly when the observer answered.',
      if: { properties: { source: { const: 'scan' } } },
      then: { properties: { mode: { const: null } } },
      else: { properties: { mode: { enum: ['sync', 'cached'] } } },
    }),
  checks: z.array(checkStatus).describe('One entry per check asked about, in the order asked (config order when none is named).'),
  notices,
});

export type StatusDocument = z.output<typeof statusDocument>;
export type CheckStatusJson = z.output<typeof checkStatus>;
export type ReceiptSummaryJson = z.output<typeof receiptSummary>;
export type ReceiptJson = z.output<typeof receipt>;
export type EvidenceJson = z.output<typeof evidence>;
