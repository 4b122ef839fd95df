import { constants } from 'node:os';
import { describe, expect, it } from 'vitest';
import { contextDigest } from '../../src/core/context.js';
import { definitionDigest } from '../../src/core/definition.js';
import { manifestOf, type InputEntry, type Manifest } from '../../src/core/manifest.js';
import type { ReasonCode } from '../../src/core/reason.js';
import { buildReceipt, changedDuringRun, MAX_LISTED_PATHS, runExitCode, UNNAMED_CHANGE, type RunEnd, type RunRecord } from '../../src/core/receiptBuilder.js';
import { context, definition, observation, observed, source, why } from '../helpers/model.js';

const INPUTS = [source('src/a.ts'), source('src/b.ts')];
const ids = (entries: Record<string, string>) => new Map(Object.entries(entries));

/** A run in which nothing moved and the check exited 0; each row changes what it needs. */
function run(overrides: Partial<RunRecord> = {}, end: Partial<RunEnd> = {}): RunRecord {
  const obs = observation(INPUTS, { sourceIdentities: ids({ 'src/a.ts': 'i1', 'src/b.ts': 'i2' }) });
  return {
    runId: 'run-9',
    definition: definition(),
    contextBefore: context(),
    observedAfter: observed(context()),
    inputsBefore: obs,
    inputsAfter: obs,
    end: { exitCode: 0, signal: null, interruptedBy: null, logFailure: null, ...end },
    startedAt: 5_000,
    finishedAt: 7_500,
    logPath: 'logs/run-9.log',
    logKeptBytes: 64 * 1024,
    ...overrides,
  };
}

describe('runExitCode: how a run ends becomes one exit code', () => {
  it.each<[string, Pick<RunEnd, 'exitCode' | 'signal' | 'interruptedBy'>, number]>([
    ['exit 0', { exitCode: 0, signal: null, interruptedBy: null }, 0],
    ['exit 3', { exitCode: 3, signal: null, interruptedBy: null }, 3],
    ['no code and no signal counts as a failure', { exitCode: null, signal: null, interruptedBy: null }, 1],
    ['killed by SIGKILL', { exitCode: null, signal: 'SIGKILL', interruptedBy: null }, 137],
    ['ended by SIGTERM', { exitCode: null, signal: 'SIGTERM', interruptedBy: null }, 143],
    ['interrupted by SIGINT, though the check exited 0', { exitCode: 0, signal: null, interruptedBy: 'SIGINT' }, 130],
    ['its own signal wins over the interrupting one', { exitCode: null, signal: 'SIGKILL', interruptedBy: 'SIGINT' }, 137],
  ])('%s -> %i', (_name, end, code) => {
    expect(runExitCode(end)).toBe(code);
  });

  it('is 128 + the signal number of this platform', () => {
    expect(runExitCode({ exitCode: null, signal: 'SIGHUP', interruptedBy: null })).toBe(128 + constants.signals.SIGHUP);
  });
});

describe('buildReceipt(run)', () => {
  const rows: { name: string; run: RunRecord; result: 'PASS' | 'FAIL'; exitCode: number; codes: ReasonCode[]; messages?: (string | RegExp)[] }[] = [
    { name: 'a clean pass', run: run(), result: 'PASS', exitCode: 0, codes: [] },
    { name: 'a clean failure', run: run({}, { exitCode: 2 }), result: 'FAIL', exitCode: 2, codes: ['failed'], messages: ['exited with code 2'] },
    { name: 'killed by a signal', run: run({}, { exitCode: null, signal: 'SIGKILL' }), result: 'FAIL', exitCode: 137, codes: ['failed'], messages: ['stopped by SIGKILL'] },
    {
      name: 'interrupted, though the check caught it and exited 0',
      run: run({}, { exitCode: 0, interruptedBy: 'SIGINT' }),
      result: 'FAIL',
      exitCode: 130,
      codes: ['failed', 'interrupted'],
      messages: ['stopped by SIGINT', 'interrupted by SIGINT'],
    },
    {
      name: 'a source edited while it ran',
      run: run({ inputsAfter: observation([source('src/a.ts', 'edited'), source('src/b.ts')], { sourceIdentities: ids({ 'src/a.ts': 'i9', 'src/b.ts': 'i2' }) }) }),
      result: 'PASS',
      exitCode: 0,
      codes: ['inputs-changed-during-run'],
      messages: ['inputs changed while the check ran: src/a.ts'],
    },
    {
      name: 'a source rewritten with the same bytes while it ran',
      run: run({ inputsAfter: observation(INPUTS, { sourceIdentities: ids({ 'src/a.ts': 'i1', 'src/b.ts': 'rewritten' }) }) }),
      result: 'PASS',
      exitCode: 0,
      codes: ['inputs-changed-during-run'],
      messages: ['inputs changed while the check ran: src/b.ts'],
    },
    {
      name: 'a source that appears only after the run is an addition, not a rewrite',
      run: run({ inputsAfter: observation([...INPUTS, source('src/c.ts')], { sourceIdentities: ids({ 'src/a.ts': 'i1', 'src/b.ts': 'i2', 'src/c.ts': 'i3' }) }) }),
      result: 'PASS',
      exitCode: 0,
      codes: ['inputs-changed-during-run'],
      messages: ['inputs changed while the check ran: src/c.ts'],
    },
    {
      name: 'the context drifted while it ran',
      run: run({ observedAfter: observed(context({ node: { version: 'v22.0.0', executable: null } })) }),
      result: 'PASS',
      exitCode: 0,
      codes: ['inputs-changed-during-run'],
      messages: ['the tools or environment changed while the check ran'],
    },
    {
      name: 'the log could not be written',
      run: run({}, { logFailure: 'ENOSPC: no space left on device' }),
      result: 'PASS',
      exitCode: 0,
      codes: ['log-not-written'],
      messages: ['the log could not be written (ENOSPC: no space left on device) and keeps at most its first 64 KiB; free space where the state dir is, and run the check again'],
    },
    {
      name: 'problems seen after the run: the inputs first, then the context',
      run: run({ inputsAfter: observation(INPUTS, { problems: [why('input-unreadable')], sourceIdentities: ids({ 'src/a.ts': 'i1', 'src/b.ts': 'i2' }) }), observedAfter: observed(context(), [why('executable-not-found')]) }),
      result: 'PASS',
      exitCode: 0,
      codes: ['input-unreadable', 'executable-not-found'],
    },
    {
      name: 'everything at once, in order: failed first, then problems, moves, drift, interruption, log',
      run: run(
        {
          inputsAfter: observation([source('src/a.ts', 'x')], { problems: [why('input-changing')], sourceIdentities: ids({ 'src/a.ts': 'i1' }) }),
          observedAfter: observed(context({ arch: 'arm64' }), [why('script-not-found')]),
        },
        { exitCode: null, signal: 'SIGTERM', interruptedBy: 'SIGTERM', logFailure: 'EIO' },
      ),
      result: 'FAIL',
      exitCode: 143,
      codes: ['failed', 'input-changing', 'script-not-found', 'inputs-changed-during-run', 'inputs-changed-during-run', 'interrupted', 'log-not-written'],
    },
  ];

  it.each(rows)('$name: $result, exit $exitCode', (row) => {
    const { receipt, exitCode } = buildReceipt(row.run);
    expect(exitCode).toBe(row.exitCode);
    expect(receipt.result).toBe(row.result);
    expect(receipt.reasons.map((r) => r.code)).toEqual(row.codes);
    if (row.messages) expect(receipt.reasons.map((r) => r.message)).toEqual(row.messages);
    // Reusable exactly when nothing stands against it.
    expect(receipt.reuseEligible).toBe(row.codes.length === 0);
  });

  it('binds the receipt to the definition, the context after the run and the inputs after it', () => {
    const after = observation([source('src/a.ts', 'new'), source('src/z.ts')]);
    const ctx = context({ platform: 'darwin' });
    const record = run({ inputsAfter: after, observedAfter: observed(ctx) }, { exitCode: 1 });
    expect(buildReceipt(record).receipt).toEqual({
      runId: 'run-9',
      check: 't',
      definition: record.definition,
      definitionDigest: definitionDigest(record.definition),
      context: ctx,
      contextDigest: contextDigest(ctx),
      manifestDigest: after.manifest.digest,
      inputCount: 2,
      result: 'FAIL',
      exitCode: 1,
      signal: null,
      startedAt: 5_000,
      finishedAt: 7_500,
      durationMs: 2_500,
      logPath: 'logs/run-9.log',
      reuseEligible: false,
      reasons: [
        { code: 'failed', message: 'exited with code 1' },
        { code: 'inputs-changed-during-run', message: 'inputs changed while the check ran: src/a.ts, src/b.ts, src/z.ts' },
        { code: 'inputs-changed-during-run', message: 'the tools or environment changed while the check ran' },
      ],
      evidence: { mode: 'declared', notes: [] },
    });
  });

  it.each<[string, Partial<RunEnd>, number | null, string | null]>([
    ['a code: kept', { exitCode: 4 }, 4, null],
    ['a signal: no code, the signal', { exitCode: null, signal: 'SIGKILL' }, null, 'SIGKILL'],
    ['an interruption with exit 0: the code the check gave', { exitCode: 0, interruptedBy: 'SIGINT' }, 0, null],
    ['no code at all: the exit code vouch answers', { exitCode: null }, 1, null],
  ])('records the process end as it was: %s', (_name, end, exitCode, signal) => {
    const { receipt } = buildReceipt(run({}, end));
    expect(receipt.exitCode).toBe(exitCode);
    expect(receipt.signal).toBe(signal);
  });

  it(`names at most ${MAX_LISTED_PATHS} changed paths and counts the rest`, () => {
    const before = Array.from({ length: 8 }, (_, i) => source(`f${i}`));
    const after = before.map((entry) => source(entry.path, 'edited'));
    const { receipt } = buildReceipt(run({ inputsBefore: observation(before), inputsAfter: observation(after) }));
    expect(receipt.reasons).toEqual([{ code: 'inputs-changed-during-run', message: 'inputs changed while the check ran: f0, f1, f2, f3, f4 and 3 more' }]);
  });

  it('lists a path once when its entry and its identity both moved', () => {
    const before = observation([source('a', 'd1')], { sourceIdentities: ids({ a: 'i1' }) });
    const after = observation([source('a', 'd2')], { sourceIdentities: ids({ a: 'i2' }) });
    expect(changedDuringRun(before, after)).toEqual(['a']);
  });

  it('does not call a removed file a rewrite', () => {
    const before = { manifest: manifestOf([source('a')]), sourceIdentities: ids({ a: 'i1', gone: 'i2' }) };
    const after = { manifest: manifestOf([source('a')]), sourceIdentities: ids({ a: 'i1' }), problems: [] };
    expect(changedDuringRun(before, after)).toEqual([]);
  });

  it('compares no entries when the digests are the same, and still sees a rewrite by its identity', () => {
    const untouchable = (digest: string): Manifest => ({
      digest,
      get entries(): InputEntry[] {
        throw new Error('entries made for two manifests of one digest');
      },
    });
    const { digest } = manifestOf([source('a'), source('b')]);
    const before = { manifest: untouchable(digest), sourceIdentities: ids({ a: 'i1', b: 'i2' }) };
    const after = { manifest: untouchable(digest), sourceIdentities: ids({ a: 'i1', b: 'i3' }), problems: [] };
    expect(changedDuringRun(before, after)).toEqual(['b']);
    // Different digests: the entries say what moved.
    const edited = { manifest: manifestOf([source('a'), source('b', 'edited')]), sourceIdentities: ids({ a: 'i1', b: 'i2' }), problems: [] };
    expect(changedDuringRun({ manifest: manifestOf([source('a'), source('b')]), sourceIdentities: ids({ a: 'i1', b: 'i2' }) }, edited)).toEqual(['b']);
  });
});

describe('changedDuringRun against the observer\'s answer: a digest, and when vouch asked', () => {
  // An identity as core/identity.ts makes it: dev:ino:size:mode:nlink:mtime_ns:ctime_ns.
  const identity = (ctimeMs: number, nanos = 123_456) => `1:2:3:644:1:0:${BigInt(ctimeMs) * 1_000_000n + BigInt(nanos)}`;
  const ASKED = 1_800_000_000_000;
  const manifest = manifestOf([source('a'), source('b')]);
  const after = (identities: Record<string, string>, m: Manifest = manifest) => ({ manifest: m, sourceIdentities: ids(identities), problems: [] });

  it('names no path when every source was last changed before vouch asked, past the clock\'s tick', () => {
    expect(changedDuringRun({ digest: manifest.digest, askedAt: ASKED }, after({ a: identity(ASKED - 60_000), b: identity(ASKED - 51) }))).toEqual([]);
  });

  it('names a source changed since, or within a tick before, even when its bytes and the digest are the same', () => {
    const moved = after({ a: identity(ASKED + 900), b: identity(ASKED - 49), c: identity(ASKED - 5_000) });
    expect(changedDuringRun({ digest: manifest.digest, askedAt: ASKED }, moved)).toEqual(['a', 'b']);
  });

  it('gives a whole-second ctime (a coarse file system) a tick of two seconds', () => {
    const coarse = (ms: number) => identity(ms, 0);
    expect(changedDuringRun({ digest: manifest.digest, askedAt: ASKED }, after({ a: coarse(ASKED - 1_000), b: coarse(ASKED - 3_000) }))).toEqual(['a']);
  });

  it('counts an identity without a readable ctime as changed', () => {
    expect(changedDuringRun({ digest: manifest.digest, askedAt: ASKED }, after({ a: 'no-ctime' }))).toEqual(['a']);
  });

  it('says an input was added or removed when only the digest moved', () => {
    const added = manifestOf([source('a'), source('b'), source('c')]);
    expect(changedDuringRun({ digest: manifest.digest, askedAt: ASKED }, after({ a: identity(ASKED - 60_000) }, added))).toEqual([UNNAMED_CHANGE]);
    const { receipt } = buildReceipt(run({ inputsBefore: { digest: manifest.digest, askedAt: ASKED }, inputsAfter: observation([source('a'), source('b'), source('c')]) }));
    expect(receipt.reuseEligible).toBe(false);
    expect(receipt.reasons).toEqual([{ code: 'inputs-changed-during-run', message: `inputs changed while the check ran: ${UNNAMED_CHANGE}` }]);
  });

  it('makes no entry of either manifest', () => {
    const untouchable: Manifest = {
      digest: manifest.digest,
      get entries(): InputEntry[] {
        throw new Error('entries made against an observer\'s digest');
      },
    };
    expect(changedDuringRun({ digest: manifest.digest, askedAt: ASKED }, after({ a: identity(ASKED - 60_000) }, untouchable))).toEqual([]);
  });
});

describe('buildReceipt(run) of a traced check', () => {
  const note = { code: 'read-outside-inputs' as const, message: 'the run read 1 file in the root that its declared inputs do not match, which tracing covers: .env' };
  // The declared inputs moved under the run: a traced receipt is not bound to them.
  const moved = observation([source('src/a.ts', 'other'), source('src/b.ts')]);

  it('is bound to the evidence: its digest and count, its changes during the run, and its notes', () => {
    const { receipt } = buildReceipt(run({ inputsAfter: moved, traced: { kind: 'traced', digest: 'e'.repeat(64), count: 412, changedDuringRun: [], notes: [note] } }));
    expect(receipt).toMatchObject({ manifestDigest: 'e'.repeat(64), inputCount: 412, reuseEligible: true, reasons: [], evidence: { mode: 'traced', notes: [note] } });
  });

  it('is not reusable when what the run touched moved under it, and names the paths', () => {
    const { receipt } = buildReceipt(run({ traced: { kind: 'traced', digest: 'e'.repeat(64), count: 3, changedDuringRun: ['.env', '/etc/hosts'], notes: [] } }));
    expect(receipt.reuseEligible).toBe(false);
    expect(receipt.reasons).toEqual([{ code: 'inputs-changed-during-run', message: 'inputs changed while the check ran: .env, /etc/hosts' }]);
  });

  it('falls back to the declared inputs, with the note saying why, when the run could not be traced', () => {
    const fallback = { code: 'trace-unavailable' as const, message: 'not traced, so its declared inputs stand in: strace is not installed' };
    const { receipt } = buildReceipt(run({ inputsAfter: moved, traced: { kind: 'fallback', note: fallback } }));
    expect(receipt.evidence).toEqual({ mode: 'declared', notes: [fallback] });
    expect(receipt.manifestDigest).toBe(moved.manifest.digest);
    // The declared inputs are its evidence again, and they moved while it ran.
    expect(receipt.reasons.map((r) => r.code)).toEqual(['inputs-changed-during-run']);
  });
});
