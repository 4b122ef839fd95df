import { z } from 'zod';
import { CHECK_KINDS } from '../core/config.js';

/**
 * The tools' outputSchemas: the same documents as `vouch COMMAND --json`
 * (docs/json.md, schemas/*.schema.json). They are written in zod because the
 * SDK takes zod; schemas/ stays the full contract (its cross-field rules are
 * left out here), and test/mcp.test.ts checks real tool output against both.
 */

const time = z.string().describe('ISO-8601 UTC time');
const reason = z.object({ code: z.string().describe('stable reason code (docs/json.md)'), message: z.string() });
const exitCode = z.number().int().min(0).nullable();
const signal = z.string().nullable();

const receiptSummary = z.object({
  run_id: z.string(),
  started_at: time,
  finished_at: time,
  duration_ms: z.number().int().min(0),
  exit_code: exitCode,
  signal,
});

const receipt = receiptSummary.extend({
  check: z.string(),
  result: z.enum(['PASS', 'FAIL']),
  reuse_eligible: z.boolean(),
  reasons: z.array(reason),
  input_count: z.number().int().min(0),
  log_path: z.string().describe('absolute path of the run output'),
});

const checkStatus = z.object({
  name: z.string(),
  kind: z.enum(CHECK_KINDS),
  freshness: z.enum(['CURRENT', 'STALE', 'UNVERIFIED']),
  result: z.enum(['PASS', 'FAIL']).nullable(),
  reuse_eligible: z.boolean().describe('true only when CURRENT, PASS and the receipt itself is reusable: safe to skip rerunning'),
  reasons: z.array(reason),
  receipt: receiptSummary.nullable(),
});

export const statusOutput = z.object({
  schema: z.literal(1),
  root: z.string(),
  config_path: z.string(),
  observation: z.object({
    healthy: z.boolean(),
    source: z.enum(['scan', 'observer']),
    mode: z.enum(['sync', 'cached']).nullable(),
    observed_at: time,
    duration_ms: z.number().int().min(0),
  }),
  checks: z.array(checkStatus),
  notices: z.array(z.string()),
});

const entry = z
  .object({
    type: z.enum(['file', 'symlink']),
    digest: z.string().nullable(),
    executable: z.boolean().nullable(),
    identity: z.string().nullable(),
    target: z.string().nullable(),
  })
  .nullable();

// Old and new values differ by field (strings, lists, executables, package managers): docs/json.md lists them.
const valueChange = z.object({ field: z.string(), old: z.unknown(), new: z.unknown() });

export const explainOutput = z.object({
  schema: z.literal(1),
  check: checkStatus,
  definition_changes: z.array(valueChange),
  context_changes: z.array(valueChange),
  input_changes: z.array(
    z.object({
      change: z.enum(['added', 'removed', 'modified', 'mode', 'identity', 'type']),
      path: z.string().describe('relative to the root, with / separators'),
      origin: z.enum(['source', 'installed']),
      old: entry,
      new: entry,
      identity_fields: z.array(z.string()),
    }),
  ),
  notices: z.array(z.string()),
});

export const logOutput = z.object({ schema: z.literal(1), receipts: z.array(receipt), notices: z.array(z.string()) });

const runError = z
  .object({ code: z.string(), message: z.string() })
  .describe("what vouch could not do after the check ran (disk-full: the receipt was not saved); exit_code stays the check's");

export const runOutput = z.object({
  schema: z.literal(1),
  exit_code: z.number().int().min(0).describe("the first failing check's own exit code (128+N for signal N), else 0"),
  runs: z.array(
    z.union([
      z.object({ name: z.string(), action: z.literal('ran'), exit_code: z.number().int().min(0), status: z.null(), receipt, error: runError.nullable() }),
      z.object({ name: z.string(), action: z.literal('skipped'), exit_code: z.literal(0), status: checkStatus, receipt: z.null(), error: z.null() }),
    ]),
  ),
  notices: z.array(z.string()),
});

const stage = z.enum(['type', 'lint', 'runtime']);
const phase = z.enum(['case', 'control']);
const claimIssue = z.object({
  origin: z.enum(['claimant', 'workspace', 'instrument']).describe('who must act: claimant (the drafts or test), workspace (already there, or config), instrument (the inspection did not complete)'),
  stage,
  path: z.string().nullable(),
  line: z.number().int().min(1).nullable(),
  code: z.string().nullable(),
  message: z.string(),
});

export const proveOutput = z.object({
  schema: z.literal(1),
  digest: z.string(),
  receipt: z.string().nullable().describe('the claim receipt token, or null when none was minted'),
  why: z.array(z.string()).describe('every receipt condition that failed'),
  verdict: z.object({
    digest: z.string(),
    control_stage: stage,
    toolchain: z.object({ typescript: z.string(), linter: z.object({ name: z.string(), version: z.string() }), vitest: z.string() }),
    project: z.object({ tsconfig: z.string(), options_digest: z.string() }),
    checks: z.array(z.object({ stage, phase, completed: z.boolean(), issues: z.array(claimIssue) })),
  }),
  timings: z.array(z.object({ stage, phase, ms: z.number().int().min(0) })),
  ms: z.number().int().min(0),
  cold: z.boolean(),
  notices: z.array(z.string()).describe('what the prove noticed that is not about the claim'),
});
