import { describe, expect, it } from 'vitest';
import { decide, decideObserved, decideWithEarlier, decideWithEarlierTraced, earlierInputsDigest } from '../../src/core/decide.js';
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

/*
 * Traced receipts: each is bound to what its own run touched, so an earlier one is looked at
 * against its own evidence. Here a receipt "made on A" stands for one whose evidence digest is
 * A's, and a look that finds A means its evidence is as its run left it.
 */
describe('decideWithEarlierTraced', () => {
  const TRACED = { evidence: { mode: 'traced' as const, notes: [] } };
  const tracedOn = (inputs: typeof A, runId: string, overrides = {}) => receipt(DEF, CTX, inputs, { runId, ...TRACED, ...overrides });
  const latest = tracedOn(B, 'run-b');
  const C = observation([source('src/a.ts', 'c')]);
  const stale = decide(DEF, observed(), A, latest);
  const look = (r: ReturnType<typeof tracedOn>, now: typeof A) => {
    const seen: string[] = [];
    return { seen, candidate: { receipt: r, observe: () => (seen.push(r.runId), now) } };
  };

  it('an earlier receipt whose own evidence is unchanged answers, PASS or FAIL as it recorded', () => {
    const status = decideWithEarlierTraced(DEF, observed(), stale, latest, [look(tracedOn(A, 'run-a'), A).candidate]);
    expect(status).toMatchObject({ freshness: 'CURRENT', result: 'PASS', reuseEligible: true });
    expect(status.receipt?.runId).toBe('run-a');
    const failed = tracedOn(A, 'run-f', { result: 'FAIL', exitCode: 1, reuseEligible: false });
    expect(decideWithEarlierTraced(DEF, observed(), stale, latest, [look(failed, A).candidate])).toMatchObject({ freshness: 'CURRENT', result: 'FAIL', reuseEligible: false });
  });

  it('goes past receipts whose evidence changed, newest first, and looks no further than the first unchanged one', () => {
    const newer = look(tracedOn(C, 'run-c'), A);
    const answering = look(tracedOn(A, 'run-a'), A);
    const older = look(tracedOn(A, 'run-old'), A);
    const status = decideWithEarlierTraced(DEF, observed(), stale, latest, [newer.candidate, answering.candidate, older.candidate]);
    expect(status.receipt?.runId).toBe('run-a');
    expect([...newer.seen, ...answering.seen, ...older.seen]).toEqual(['run-c', 'run-a']);
  });

  it('does not pass over a newer receipt on unchanged evidence that is not CURRENT for an older one', () => {
    const moved = look(tracedOn(A, 'run-moved', { reasons: [why('inputs-changed-during-run')], reuseEligible: false }), A);
    const older = look(tracedOn(A, 'run-a'), A);
    const status = decideWithEarlierTraced(DEF, observed(), stale, latest, [moved.candidate, older.candidate]);
    expect(status.freshness).toBe('STALE');
    expect(status.receipt?.runId).toBe('run-b');
    expect(older.seen).toEqual([]);
  });

  it('stops on any doubt about a look, and skips receipts of another definition, context, check or mode without looking', () => {
    const doubt = observation(A.manifest.entries, { problems: [why('input-changing')] });
    expect(decideWithEarlierTraced(DEF, observed(), stale, latest, [look(tracedOn(A, 'run-d'), doubt).candidate, look(tracedOn(A, 'run-a'), A).candidate]).freshness).toBe('STALE');
    const others = [
      look(receipt(definition({ env: ['X'] }), CTX, A, { runId: 'run-def', ...TRACED }), A),
      look(receipt(DEF, context({ env: { X: 'other' } }), A, { runId: 'run-ctx', ...TRACED }), A),
      look(tracedOn(A, 'run-other', { check: 'other' }), A),
      look(receipt(DEF, CTX, A, { runId: 'run-declared' }), A),
    ];
    expect(decideWithEarlierTraced(DEF, observed(), stale, latest, others.map((o) => o.candidate)).freshness).toBe('STALE');
    expect(others.flatMap((o) => o.seen)).toEqual([]);
  });

  it('never turns a CURRENT or UNVERIFIED answer into another, nor answers for a declared latest receipt, and then looks at nothing', () => {
    const watched = look(tracedOn(A, 'run-a'), A);
    const current = decide(DEF, observed(), B, latest);
    expect(decideWithEarlierTraced(DEF, observed(), current, latest, [watched.candidate])).toBe(current);
    const unverified = decide(DEF, observed(), observation(A.manifest.entries, { healthy: false }), latest);
    expect(decideWithEarlierTraced(DEF, observed(), unverified, latest, [watched.candidate])).toBe(unverified);
    const declaredStale = decide(DEF, observed(), A, latestOnB);
    expect(decideWithEarlierTraced(DEF, observed(), declaredStale, latestOnB, [watched.candidate])).toBe(declaredStale);
    expect(watched.seen).toEqual([]);
  });
});

describe('decideObserved', () => {
  const TRACED = { evidence: { mode: 'traced' as const, notes: [] } };
  const latest = receipt(DEF, CTX, B, { runId: 'run-b', ...TRACED });
  const earlierA = receipt(DEF, CTX, A, { runId: 'run-a', ...TRACED });
  const changedNow = observation([source('src/x.ts', 'now')]);

  it("takes the observer's looks at earlier traced receipts: the first not changed decides", () => {
    expect(decideObserved(DEF, observed(), changedNow, latest, null, [{ receipt: earlierA, evidence: 'unchanged' }]).receipt?.runId).toBe('run-a');
    const older = receipt(DEF, CTX, A, { runId: 'run-old', ...TRACED });
    expect(decideObserved(DEF, observed(), changedNow, latest, null, [{ receipt: earlierA, evidence: 'changed' }, { receipt: older, evidence: 'unchanged' }]).receipt?.runId).toBe('run-old');
    expect(decideObserved(DEF, observed(), changedNow, latest, null, [{ receipt: earlierA, evidence: 'doubt' }, { receipt: older, evidence: 'unchanged' }]).freshness).toBe('STALE');
    expect(decideObserved(DEF, observed(), changedNow, latest, null, []).freshness).toBe('STALE');
  });

  it('is decideWithEarlier for declared receipts', () => {
    expect(decideObserved(DEF, observed(), A, latestOnB, onA('run-a')).receipt?.runId).toBe('run-a');
  });
});
