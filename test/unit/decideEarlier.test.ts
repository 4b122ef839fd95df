import { describe, expect, it } from 'vitest';
import { decideWithEarlier, earlierInputsDigest } from '../../src/core/decide.js';
import { context, definition, observation, observed, receipt, source, why } from '../helpers/model.js';

/*
 * An earlier receipt answers for inputs seen before (an edit and its revert), and only when it
 * is CURRENT on its own: same definition, same context, same inputs, nothing moved while it ran.
 */

const DEF = definition();
const CTX = context();
const A = observation([source('src/a.ts', 'a')]);
const B = observation([source('src/a.ts', 'b')]);
const onA = (runId: string, overrides = {}) => receipt(DEF, CTX, A, { runId, ...overrides });
const latestOnB = receipt(DEF, CTX, B, { runId: 'run-b' });

describe('earlierInputsDigest', () => {
  it('asks for the observed digest when it differs from the latest declared receipt', () => {
    expect(earlierInputsDigest(latestOnB, A)).toBe(A.manifest.digest);
    expect(A.manifest.digest).not.toBe(B.manifest.digest);
  });

  it('asks for nothing without a receipt, on the same inputs, on any doubt, or for a traced receipt', () => {
    expect(earlierInputsDigest(null, A)).toBeNull();
    expect(earlierInputsDigest(latestOnB, B)).toBeNull();
    expect(earlierInputsDigest(latestOnB, observation(A.manifest.entries, { healthy: false }))).toBeNull();
    expect(earlierInputsDigest(latestOnB, observation(A.manifest.entries, { problems: [why('input-changing')] }))).toBeNull();
    expect(earlierInputsDigest(receipt(DEF, CTX, B, { evidence: { mode: 'traced', notes: [] } }), A)).toBeNull();
  });
});

describe('decideWithEarlier', () => {
  it('is decide() when no earlier receipt is given', () => {
    const status = decideWithEarlier(DEF, observed(), A, latestOnB, null);
    expect(status.freshness).toBe('STALE');
    expect(status.receipt?.runId).toBe('run-b');
  });

  it('after an edit and its revert, the receipt made on the same inputs answers', () => {
    const status = decideWithEarlier(DEF, observed(), A, latestOnB, onA('run-a'));
    expect(status).toMatchObject({ freshness: 'CURRENT', result: 'PASS', reuseEligible: true });
    expect(status.receipt?.runId).toBe('run-a');
  });

  it('answers with the FAIL it recorded: a CURRENT failure, not reusable', () => {
    const status = decideWithEarlier(DEF, observed(), A, latestOnB, onA('run-a', { result: 'FAIL', exitCode: 1, reuseEligible: false }));
    expect(status).toMatchObject({ freshness: 'CURRENT', result: 'FAIL', reuseEligible: false });
    expect(status.reasons.map((r) => r.code)).toContain('failed');
  });

  it('does not answer with a receipt of another definition or context', () => {
    const otherDefinition = receipt(definition({ env: ['X'] }), CTX, A, { runId: 'run-a' });
    expect(decideWithEarlier(DEF, observed(), A, latestOnB, otherDefinition).receipt?.runId).toBe('run-b');
    const otherContext = receipt(DEF, context({ env: { X: 'other' } }), A, { runId: 'run-a' });
    const status = decideWithEarlier(DEF, observed(), A, latestOnB, otherContext);
    expect(status.freshness).toBe('STALE');
    expect(status.receipt?.runId).toBe('run-b');
  });

  it('does not answer with a receipt whose inputs moved while it ran', () => {
    const moved = onA('run-a', { reasons: [why('inputs-changed-during-run')], reuseEligible: false });
    expect(decideWithEarlier(DEF, observed(), A, latestOnB, moved).freshness).toBe('STALE');
  });

  it('ignores a receipt that is not for the observed inputs, for another check, or traced', () => {
    expect(decideWithEarlier(DEF, observed(), A, latestOnB, receipt(DEF, CTX, observation([source('src/a.ts', 'c')]), { runId: 'run-c' })).freshness).toBe('STALE');
    expect(decideWithEarlier(DEF, observed(), A, latestOnB, onA('run-a', { check: 'other' })).freshness).toBe('STALE');
    expect(decideWithEarlier(DEF, observed(), A, latestOnB, onA('run-a', { evidence: { mode: 'traced', notes: [] } })).freshness).toBe('STALE');
    const tracedLatest = receipt(DEF, CTX, B, { runId: 'run-b', evidence: { mode: 'traced', notes: [] } });
    expect(decideWithEarlier(DEF, observed(), A, tracedLatest, onA('run-a')).freshness).toBe('STALE');
  });

  it('never turns an UNVERIFIED or CURRENT answer into another', () => {
    const doubt = observation(A.manifest.entries, { problems: [why('input-unreadable')] });
    expect(decideWithEarlier(DEF, observed(), doubt, latestOnB, onA('run-a')).freshness).toBe('UNVERIFIED');
    const current = decideWithEarlier(DEF, observed(), B, latestOnB, onA('run-a'));
    expect(current.receipt?.runId).toBe('run-b');
    expect(decideWithEarlier(DEF, observed(), A, null, onA('run-a')).freshness).toBe('UNVERIFIED');
  });

  it('a definition or context changed since the latest receipt, and back: the earlier receipt on these inputs answers', () => {
    // The latest was made under another configuration, on other inputs; both are back as they were.
    const latestElsewhere = receipt(definition({ env: ['X'] }), context({ env: { X: '1' } }), B, { runId: 'run-b' });
    const status = decideWithEarlier(DEF, observed(), A, latestElsewhere, onA('run-a'));
    expect(status.freshness).toBe('CURRENT');
    expect(status.receipt?.runId).toBe('run-a');
  });
});
