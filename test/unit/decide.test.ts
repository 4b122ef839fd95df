import { describe, expect, it } from 'vitest';
import type { CheckDefinition } from '../../src/core/definition.js';
import { decide, type Freshness } from '../../src/core/decide.js';
import type { CheckContext } from '../../src/core/context.js';
import type { Observation, ObservedContext } from '../../src/core/observation.js';
import { NOTE_CODES, type ReasonCode } from '../../src/core/reason.js';
import type { CheckResult, Receipt } from '../../src/core/receipt.js';
import { scriptBody } from '../../src/core/scriptContext.js';
import { ALL_REASON_CODES, context, definition, exe, installed, observation, observed, receipt, source, why } from '../helpers/model.js';

/** One decision: what the reader sees, built from the defaults unless a row changes it. */
interface Row {
  name: string;
  /** Changes to what is observed now; the receipt stays bound to the defaults. */
  now?: { definition?: CheckDefinition; context?: CheckContext; observation?: Observation; observed?: ObservedContext };
  /** The latest receipt, or null for none; a function receives the defaults to bind it to. */
  latest?: null | ((base: { definition: CheckDefinition; context: CheckContext; observation: Observation }) => Receipt);
  freshness: Freshness;
  reuseEligible: boolean;
  codes: ReasonCode[];
  result: CheckResult | null;
}

const DEF = definition();
const CTX = context();
const OBS = observation([source('src/a.ts'), source('src/b.ts'), installed('node_modules/x/index.js')]);
const bound = (overrides: Partial<Receipt> = {}) => (base: { definition: CheckDefinition; context: CheckContext; observation: Observation }) =>
  receipt(base.definition, base.context, base.observation, overrides);

const ROWS: Row[] = [
  // UNVERIFIED: any doubt about the observation or the context, or no receipt.
  { name: 'no receipt yet', latest: null, freshness: 'UNVERIFIED', reuseEligible: false, codes: ['never-run'], result: null },
  {
    name: 'an unhealthy observation, whatever the receipt says',
    now: { observation: observation(OBS.manifest.entries, { healthy: false }) },
    freshness: 'UNVERIFIED',
    reuseEligible: false,
    codes: ['observation-unhealthy'],
    result: 'PASS',
  },
  ...(['inputs-empty', 'input-outside-root', 'input-symlink-loop', 'input-unreadable', 'input-name-not-utf8', 'input-unsupported-type', 'input-changing', 'state-dir-in-git'] as const).map(
    (code): Row => ({
      name: `an input problem: ${code}`,
      now: { observation: observation(OBS.manifest.entries, { problems: [why(code)] }) },
      freshness: 'UNVERIFIED',
      reuseEligible: false,
      codes: [code],
      result: 'PASS',
    }),
  ),
  ...(['executable-not-found', 'script-not-found'] as const).map(
    (code): Row => ({
      name: `a context problem: ${code}`,
      now: { observed: observed(CTX, [why(code)]) },
      freshness: 'UNVERIFIED',
      reuseEligible: false,
      codes: [code],
      result: 'PASS',
    }),
  ),
  {
    name: 'every doubt at once, in order: unhealthy first, then input problems, context problems, never-run',
    now: {
      observation: observation(OBS.manifest.entries, { healthy: false, problems: [why('input-unreadable'), why('input-changing')] }),
      observed: observed(CTX, [why('executable-not-found')]),
    },
    latest: null,
    freshness: 'UNVERIFIED',
    reuseEligible: false,
    codes: ['observation-unhealthy', 'input-unreadable', 'input-changing', 'executable-not-found', 'never-run'],
    result: null,
  },
  {
    name: 'doubts win over changes: a problem and a changed definition is UNVERIFIED, not STALE',
    now: { definition: definition({ inputs: ['src/**'] }), observation: observation([source('src/a.ts', 'other')], { problems: [why('input-unreadable')] }) },
    freshness: 'UNVERIFIED',
    reuseEligible: false,
    codes: ['input-unreadable'],
    result: 'PASS',
  },
  {
    name: 'an UNVERIFIED check keeps the result of its failed receipt',
    now: { observation: observation(OBS.manifest.entries, { healthy: false }) },
    latest: bound({ result: 'FAIL', exitCode: 1, reuseEligible: false, reasons: [why('failed')] }),
    freshness: 'UNVERIFIED',
    reuseEligible: false,
    codes: ['observation-unhealthy'],
    result: 'FAIL',
  },

  // STALE: the receipt is bound to something that moved.
  { name: 'the definition changed', now: { definition: definition({ env: ['FOO'] }) }, freshness: 'STALE', reuseEligible: false, codes: ['definition-changed'], result: 'PASS' },
  { name: 'the context changed', now: { context: context({ node: { version: 'v22.0.0', executable: exe('/usr/bin/node') } }) }, freshness: 'STALE', reuseEligible: false, codes: ['context-changed'], result: 'PASS' },
  { name: 'an environment digest changed', now: { context: context({ env: { CI: 'digest', NODE_ENV: null } }) }, freshness: 'STALE', reuseEligible: false, codes: ['context-changed'], result: 'PASS' },
  { name: 'an input changed', now: { observation: observation([source('src/a.ts', 'edited'), source('src/b.ts'), installed('node_modules/x/index.js')]) }, freshness: 'STALE', reuseEligible: false, codes: ['inputs-changed'], result: 'PASS' },
  { name: 'an input was added', now: { observation: observation([...OBS.manifest.entries, source('src/c.ts')]) }, freshness: 'STALE', reuseEligible: false, codes: ['inputs-changed'], result: 'PASS' },
  {
    name: 'definition, context and inputs all changed, in that order',
    now: { definition: definition({ command: ['node', 'other.mjs'] }), context: context({ arch: 'arm64' }), observation: observation([source('src/a.ts')]) },
    freshness: 'STALE',
    reuseEligible: false,
    codes: ['definition-changed', 'context-changed', 'inputs-changed'],
    result: 'PASS',
  },
  {
    name: 'a receipt whose inputs moved while it ran is STALE even when nothing moved since',
    latest: bound({ reuseEligible: false, reasons: [why('inputs-changed-during-run'), why('log-not-written')] }),
    freshness: 'STALE',
    reuseEligible: false,
    codes: ['inputs-changed-during-run'],
    result: 'PASS',
  },
  {
    name: 'changes since come before the moves during the run',
    now: { context: context({ platform: 'darwin' }) },
    latest: bound({ result: 'FAIL', exitCode: 1, reuseEligible: false, reasons: [why('failed'), why('inputs-changed-during-run'), why('inputs-changed-during-run', 'the tools changed')] }),
    freshness: 'STALE',
    reuseEligible: false,
    codes: ['context-changed', 'inputs-changed-during-run', 'inputs-changed-during-run'],
    result: 'FAIL',
  },

  // CURRENT: everything equal. The result stays apart: a CURRENT FAIL is a failure.
  { name: 'a passing receipt, bound to all of it', freshness: 'CURRENT', reuseEligible: true, codes: [], result: 'PASS' },
  {
    name: 'a passing receipt that may not be reused keeps its reasons',
    latest: bound({ reuseEligible: false, reasons: [why('log-not-written')] }),
    freshness: 'CURRENT',
    reuseEligible: false,
    codes: ['log-not-written'],
    result: 'PASS',
  },
  {
    name: 'a PASS is reusable only if its receipt says so',
    latest: bound({ reuseEligible: false, reasons: [] }),
    freshness: 'CURRENT',
    reuseEligible: false,
    codes: [],
    result: 'PASS',
  },
  {
    name: 'a failed receipt without a failed reason gets one',
    latest: bound({ result: 'FAIL', exitCode: 2, reuseEligible: false, reasons: [] }),
    freshness: 'CURRENT',
    reuseEligible: false,
    codes: ['failed'],
    result: 'FAIL',
  },
  {
    name: 'a failed receipt with its failed reason keeps exactly its reasons',
    latest: bound({ result: 'FAIL', exitCode: 130, reuseEligible: false, reasons: [why('failed'), why('interrupted')] }),
    freshness: 'CURRENT',
    reuseEligible: false,
    codes: ['failed', 'interrupted'],
    result: 'FAIL',
  },
  {
    name: 'a FAIL that claims to be reusable is still not reusable',
    latest: bound({ result: 'FAIL', exitCode: 1, reuseEligible: true, reasons: [why('failed')] }),
    freshness: 'CURRENT',
    reuseEligible: false,
    codes: ['failed'],
    result: 'FAIL',
  },
  {
    name: 'the observer as source decides the same',
    now: { observation: observation(OBS.manifest.entries, { source: 'observer' }) },
    freshness: 'CURRENT',
    reuseEligible: true,
    codes: [],
    result: 'PASS',
  },
];

describe('decide(definition, observed, observation, latest)', () => {
  it.each(ROWS)('$name: $freshness', (row) => {
    const base = { definition: DEF, context: CTX, observation: OBS };
    const latest = row.latest === null ? null : (row.latest ?? bound())(base);
    const def = row.now?.definition ?? DEF;
    const seen = row.now?.observed ?? observed(row.now?.context ?? CTX);
    const obs = row.now?.observation ?? OBS;

    const status = decide(def, seen, obs, latest);

    expect(status).toMatchObject({ name: def.name, kind: def.kind, freshness: row.freshness, reuseEligible: row.reuseEligible, result: row.result });
    expect(status.reasons.map((r) => r.code)).toEqual(row.codes);
    expect(status.receipt).toBe(latest);
    for (const r of status.reasons) expect(r.message, `${r.code} has a message`).not.toBe('');
  });

  it('names the run a reason is about, and the command to run when there is none', () => {
    const latest = receipt(DEF, CTX, OBS, { runId: 'run-42' });
    const stale = decide(definition({ env: ['X'] }), observed(), observation([source('z')]), latest);
    expect(stale.reasons.map((r) => r.message)).toEqual(['the check\'s configuration changed since run run-42', 'inputs changed since run run-42']);
    expect(decide(definition({ name: 'lint' }), observed(), OBS, null).reasons[0]?.message).toBe('no receipt yet; run "vouch run lint"');
    expect(decide(DEF, observed(), OBS, receipt(DEF, CTX, OBS, { runId: 'run-7', result: 'FAIL' })).reasons).toEqual([{ code: 'failed', message: 'run run-7 failed' }]);
  });

  it('names the scripts whose body changed, and stays CURRENT while they are the same', () => {
    const withScripts = (typecheck: string) =>
      context({ scripts: [scriptBody('pretypecheck', 'node gen.js'), scriptBody('typecheck', typecheck)] });
    const latest = receipt(DEF, withScripts('tsc --noEmit'), OBS, { runId: 'run-9' });
    expect(decide(DEF, observed(withScripts('tsc --noEmit')), OBS, latest).freshness).toBe('CURRENT');
    const stale = decide(DEF, observed(withScripts('echo skipped')), OBS, latest);
    expect(stale.freshness).toBe('STALE');
    expect(stale.reasons).toEqual([{ code: 'context-changed', message: 'the command, tools or environment changed since run run-9; script typecheck changed' }]);
    const gone = decide(DEF, observed(context({ scripts: [] })), OBS, latest);
    expect(gone.reasons.map((r) => r.message)).toEqual(['the command, tools or environment changed since run run-9; scripts pretypecheck, typecheck changed']);
    // A receipt from before scripts were recorded: STALE once, naming them.
    const old = receipt(DEF, CTX, OBS, { runId: 'run-1' });
    expect(decide(DEF, observed(withScripts('tsc')), OBS, old).reasons.map((r) => r.message)).toEqual([
      'the command, tools or environment changed since run run-1; scripts pretypecheck, typecheck changed',
    ]);
  });

  it('does not change the receipt it reads', () => {
    const latest = receipt(DEF, CTX, OBS, { result: 'FAIL', reasons: [] });
    const copy = structuredClone(latest);
    decide(DEF, observed(), OBS, latest);
    expect(latest).toEqual(copy);
  });

  it('meets every reason code but the evidence notes in some row of the table', () => {
    const expected = new Set(ROWS.flatMap((row) => row.codes));
    const notes: readonly string[] = NOTE_CODES;
    expect([...expected].sort()).toEqual(ALL_REASON_CODES.filter((code) => !notes.includes(code)).sort());
  });
});
