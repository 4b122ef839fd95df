import { describe, expect, it } from 'vitest';
import { logTable } from '../../src/cli/commands/log.js';
import { statusTable } from '../../src/cli/commands/status.js';
import { evidenceNoteLines, evidenceText } from '../../src/cli/format.js';
import type { CheckStatus } from '../../src/core/decide.js';
import type { Receipt } from '../../src/core/receipt.js';
import { context, definition, observation, receipt, why } from '../helpers/model.js';

/* A receipt's evidence in the text of status and log (run's line uses the same words). */

const NOW = 100_000;

function made(name: string, overrides: Partial<Receipt> = {}): Receipt {
  return receipt(definition({ name }), context(), observation(), { runId: `20261202T18324${name.length}Z-0fccc0`, finishedAt: NOW - 60_000, durationMs: 1_200, ...overrides });
}

const current = (of: Receipt): CheckStatus => ({ name: of.check, kind: 'test', freshness: 'CURRENT', result: 'PASS', reuseEligible: true, reasons: [], receipt: of });

const traced = made('test', {
  inputCount: 4_120,
  evidence: { mode: 'traced', notes: [why('read-outside-inputs', 'read 2 files outside the declared inputs: .env.test, ../shared/base.json')] },
});
const fellBack = made('lint', { evidence: { mode: 'declared', notes: [why('trace-unavailable', 'strace is not installed; the declared inputs stood in')] } });
const declared = made('typecheck');

describe("a receipt's evidence in text", () => {
  it('says the mode in a few words, and each note on a line with its code', () => {
    expect(evidenceText(traced)).toBe('traced, 4,120 paths');
    expect(evidenceText(made('one', { inputCount: 1, evidence: { mode: 'traced', notes: [] } }))).toBe('traced, 1 path');
    expect(evidenceText(fellBack)).toBe('declared');
    expect(evidenceNoteLines(fellBack)).toEqual(['note: strace is not installed; the declared inputs stood in [trace-unavailable]']);
    expect(evidenceNoteLines(declared)).toEqual([]);
    expect(evidenceNoteLines(null)).toEqual([]);
  });

  it('status: an EVIDENCE column and the notes under their check, only when some receipt was traced or noted', () => {
    const never: CheckStatus = { name: 'build', kind: 'build', freshness: 'UNVERIFIED', result: null, reuseEligible: false, reasons: [why('never-run', 'no receipt yet')], receipt: null };
    const lines = statusTable([current(declared), current(traced), current(fellBack), never], NOW).trimEnd().split('\n');
    expect(lines[0]).toMatch(/^CHECK\s+FRESHNESS\s+RESULT\s+LAST RUN\s+TOOK\s+EVIDENCE\s+REASON$/);
    expect(lines[1]).toMatch(/^typecheck\s+CURRENT\s+PASS\s+1m ago\s+1\.2s\s+declared\s*$/);
    expect(lines[2]).toMatch(/^test\s+CURRENT\s+PASS\s+1m ago\s+1\.2s\s+traced, 4,120 paths\s*$/);
    expect(lines[3]).toBe('  note: read 2 files outside the declared inputs: .env.test, ../shared/base.json [read-outside-inputs]');
    expect(lines[4]).toMatch(/^lint\s+CURRENT\s+PASS\s+1m ago\s+1\.2s\s+declared\s*$/);
    expect(lines[5]).toBe('  note: strace is not installed; the declared inputs stood in [trace-unavailable]');
    expect(lines[6]).toMatch(/^build\s+UNVERIFIED\s+-\s+-\s+-\s+-\s+no receipt yet$/);
    expect(lines).toHaveLength(7);
  });

  it('status and log of declared receipts look as they always did', () => {
    expect(statusTable([current(declared)], NOW)).toMatch(/^CHECK\s+FRESHNESS\s+RESULT\s+LAST RUN\s+TOOK\s+REASON\ntypecheck\s+CURRENT\s+PASS\s+1m ago\s+1\.2s\s*\n$/);
    expect(logTable([declared], NOW)).not.toContain('EVIDENCE');
  });

  it('log: the same column and notes, row by row', () => {
    const lines = logTable([traced, declared], NOW).trimEnd().split('\n');
    expect(lines[0]).toMatch(/^RUN\s+CHECK\s+RESULT\s+FINISHED\s+TOOK\s+EXIT\s+EVIDENCE\s+REUSABLE$/);
    expect(lines[1]).toMatch(/\s+test\s+PASS\s+1m ago\s+1\.2s\s+0\s+traced, 4,120 paths\s+yes$/);
    expect(lines[2]).toMatch(/^  note: read 2 files outside/);
    expect(lines[3]).toMatch(/\s+typecheck\s+PASS\s+.*\s+declared\s+yes$/);
    expect(lines).toHaveLength(4);
  });
});
