import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { explanationJson, logJson, receiptJson, statusJson } from '../../src/api/reportJson.js';
import { diffDefinition } from '../../src/core/diff.js';
import { explainDocument } from '../../src/core/json/explain.js';
import type { CheckStatus } from '../../src/core/decide.js';
import { logDocument } from '../../src/core/json/log.js';
import { statusDocument } from '../../src/core/json/status.js';
import type { Receipt } from '../../src/core/receipt.js';
import { context, definition, observation, receipt, why } from '../helpers/model.js';
import { REPO } from '../helpers/project.js';

/*
 * A receipt's evidence in the JSON documents: the zod definitions (which type the serializers)
 * and the committed JSON Schemas (which consumers load) both take traced evidence with its
 * notes, and the schemas refuse a note on the wrong kind of evidence.
 */

function compile(name: string) {
  const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
  ajv.addFormat('date-time', /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/);
  const validate = ajv.compile(JSON.parse(readFileSync(join(REPO, 'schemas', `${name}.schema.json`), 'utf8')));
  return (value: unknown): string | null => (validate(value) ? null : ajv.errorsText(validate.errors));
}

const logSchema = compile('log');
const statusSchema = compile('status');
const explainSchema = compile('explain');

const STATE_DIR = '/home/me/app/.vouch';

function made(overrides: Partial<Receipt>): Receipt {
  const def = definition({ name: 'test', mode: 'traced' });
  return receipt(def, context(), observation(), { runId: '20261202T183253Z-0fccc0', logPath: 'logs/20261202T183253Z-0fccc0.log', ...overrides });
}

const traced = made({
  inputCount: 412,
  evidence: { mode: 'traced', notes: [why('read-outside-inputs', 'read 2 files outside the declared inputs: .env.test, ../shared/base.json')] },
});
const fallback = made({ evidence: { mode: 'declared', notes: [why('trace-unavailable', 'strace is not installed; the declared inputs stood in')] } });
const incomplete = made({ evidence: { mode: 'declared', notes: [why('trace-incomplete', 'past the cap of 200,000 paths; the declared inputs stood in')] } });
const declared = made({});

/** ajv's words for a note's code outside the allowed ones. */
const WRONG_NOTE = /notes\/0\/code must be equal to one of the allowed values/;

const log = (receipts: Receipt[]) => logJson(receipts, STATE_DIR, []);

function statusOf(of: Receipt): unknown {
  const check: CheckStatus = { name: of.check, kind: 'test', freshness: 'CURRENT', result: 'PASS', reuseEligible: true, reasons: [], receipt: of };
  return {
    schema: 1,
    root: '/home/me/app',
    config_path: '/home/me/app/vouch.config.json',
    observation: { healthy: true, source: 'scan', mode: null, observed_at: '2026-12-02T18:32:52.253Z', duration_ms: 9 },
    checks: [statusJson(check)],
    notices: [],
  };
}

describe("a receipt's evidence in --json", () => {
  it('a traced receipt carries its mode, its notes and the count of its evidence entries', () => {
    expect(receiptJson(traced, STATE_DIR)).toMatchObject({
      input_count: 412,
      evidence: { mode: 'traced', notes: [{ code: 'read-outside-inputs', message: expect.stringContaining('.env.test') }] },
    });
    expect(receiptJson(declared, STATE_DIR).evidence).toEqual({ mode: 'declared', notes: [] });
  });

  it('log: traced, fallen back and declared receipts match the zod definition and schemas/log.schema.json', () => {
    const document = log([traced, fallback, incomplete, declared]);
    expect(logDocument.safeParse(document).error?.issues).toBeUndefined();
    expect(logSchema(document)).toBeNull();
  });

  it('status: the receipt summary carries the evidence too', () => {
    const document = statusOf(traced) as { checks: { receipt: { evidence: unknown } }[] };
    expect(document.checks[0]!.receipt.evidence).toEqual(receiptJson(traced, STATE_DIR).evidence);
    expect(statusDocument.safeParse(document).error?.issues).toBeUndefined();
    expect(statusSchema(document)).toBeNull();
  });

  it('an old observer\'s receipt without evidence is reported as declared', () => {
    const { evidence: _, ...old } = declared;
    expect(receiptJson(old as Receipt, STATE_DIR).evidence).toEqual({ mode: 'declared', notes: [] });
  });

  it('the schemas refuse a note on the wrong kind of evidence, an unknown mode, and a receipt without evidence', () => {
    const withEvidence = (evidence: unknown) => {
      const document = log([declared]) as unknown as { receipts: Record<string, unknown>[] };
      document.receipts[0]!.evidence = evidence;
      return document;
    };
    const outside = { code: 'read-outside-inputs', message: 'read .env' };
    const unavailable = { code: 'trace-unavailable', message: 'no strace' };
    expect(logSchema(withEvidence({ mode: 'declared', notes: [outside] }))).toMatch(WRONG_NOTE);
    expect(logSchema(withEvidence({ mode: 'traced', notes: [unavailable] }))).toMatch(WRONG_NOTE);
    expect(logSchema(withEvidence({ mode: 'traced', notes: [{ code: 'failed', message: 'exit 1' }] }))).toMatch(WRONG_NOTE);
    const guessed = withEvidence({ mode: 'strace', notes: [] });
    expect(logSchema(guessed)).toMatch(/mode/);
    expect(logDocument.safeParse(guessed).success).toBe(false);
    const without = log([declared]) as unknown as { receipts: Record<string, unknown>[] };
    delete without.receipts[0]!.evidence;
    expect(logSchema(without)).toMatch(/evidence/);
    expect(logDocument.safeParse(without).success).toBe(false);
    const summary = statusOf(traced) as { checks: { receipt: Record<string, unknown> }[] };
    delete summary.checks[0]!.receipt.evidence;
    expect(statusSchema(summary)).toMatch(/evidence/);
  });

  it('explain: a check turned traced (or back) names mode, declared for a definition without it', () => {
    const before = definition({ name: 'test' });
    const after = definition({ name: 'test', mode: 'traced' });
    const status: CheckStatus = {
      name: 'test',
      kind: 'test',
      freshness: 'STALE',
      result: 'PASS',
      reuseEligible: false,
      reasons: [why('definition-changed', "the check's configuration changed since run 20261202T183253Z-0fccc0")],
      receipt: declared,
    };
    for (const [old, now, expected] of [
      [before, after, { field: 'mode', old: 'declared', new: 'traced' }],
      [after, before, { field: 'mode', old: 'traced', new: 'declared' }],
    ] as const) {
      const document = explanationJson({ status, definitionChanges: diffDefinition(old, now), contextChanges: [], inputChanges: [], installedCounts: () => ({}) as never, evidence: null, notices: [] });
      expect(document.definition_changes).toEqual([expected]);
      expect(explainDocument.safeParse(document).error?.issues).toBeUndefined();
      expect(explainSchema(document)).toBeNull();
    }
  });
});
