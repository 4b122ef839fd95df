import { describe, expect, it } from 'vitest';
import { evidenceOf, type EvidenceEntry } from '../../src/core/evidence.js';
import { AnswerLooks } from '../../src/fs/answerLooks.js';
import type { VerifiedEvidence } from '../../src/fs/verifyEvidence.js';

/* One answer's looks at traced evidence: an earlier receipt is known changed from them only where a look of the same kind found otherwise. */

const read = (path: string, digest: string, more: Partial<EvidenceEntry> = {}): EvidenceEntry => ({ path, use: 'read', type: 'file', digest, ...more });

/** A verify that finds `now` in place of each recorded entry (same order), as a look at the paths would. */
function verifyFinding(now: Map<string, EvidenceEntry>) {
  let calls = 0;
  const verify = (recorded: readonly EvidenceEntry[]): VerifiedEvidence => {
    calls++;
    const entries = recorded.map((entry) => now.get(`${entry.path} ${entry.use}`) ?? entry);
    return { entries, digest: evidenceOf(entries).digest, changes: [], problems: [] };
  };
  return { verify, calls: () => calls };
}

describe('AnswerLooks', () => {
  it('knows an earlier receipt changed when an entry it recorded was found otherwise by the same look', () => {
    const latest = [read('src/a.ts', 'A2'), read('src/b.ts', 'B1'), { path: 'src', use: 'listed', type: 'directory', digest: 'L1' } as EvidenceEntry];
    const looks = new AnswerLooks();
    const { verify, calls } = verifyFinding(new Map([['src/a.ts read', read('src/a.ts', 'A3')]]));
    looks.remembering(verify)(latest, 'x');
    expect(calls()).toBe(1);
    // Recorded A1: the look found A3.
    expect(looks.changed([read('src/a.ts', 'A1'), read('src/b.ts', 'B1')])).toBe(true);
    // Recorded A3, as found: nothing here says it changed; its full look decides.
    expect(looks.changed([read('src/a.ts', 'A3'), read('src/b.ts', 'B1')])).toBe(false);
    // A path no look here made decides nothing.
    expect(looks.changed([read('src/c.ts', 'C9')])).toBe(false);
    // The listing, found as recorded.
    expect(looks.changed([{ path: 'src', use: 'listed', type: 'directory', digest: 'L1' }])).toBe(false);
    expect(looks.changed([{ path: 'src', use: 'listed', type: 'directory', digest: 'L0' }])).toBe(true);
  });

  it('compares only looks made the same way: the run\'s own file, a lookup not timed, an executable, a filtered listing', () => {
    const looks = new AnswerLooks();
    const { verify } = verifyFinding(new Map([['bin/x lookup', { path: 'bin/x', use: 'lookup', type: 'absent' } as EvidenceEntry]]));
    looks.remembering(verify)([read('out.json', 'O1'), { path: 'bin/x', use: 'lookup', type: 'file' }, { path: 'src', use: 'listed', type: 'directory', digest: 'L1' }], 'x');
    // The same path, written by the run: another look (what the run left), so no verdict.
    expect(looks.changed([read('out.json', 'O0', { own: true })])).toBe(false);
    // Executed: the look also reads the execute bit.
    expect(looks.changed([read('out.json', 'O0', { executable: true })])).toBe(false);
    // Looked up and timed, where the remembered look asked only what is there.
    expect(looks.changed([{ path: 'bin/x', use: 'lookup', type: 'file', digest: '10:123' }])).toBe(false);
    // A listing bound to what tsc can act on, where the remembered one holds every name.
    expect(looks.changed([{ path: 'src', use: 'listed', type: 'directory', digest: 'L0', names: 'typescript' }])).toBe(false);
    // The same look: a verdict.
    expect(looks.changed([read('out.json', 'O0')])).toBe(true);
    // Looked up, not timed, as recorded: now absent.
    expect(looks.changed([{ path: 'bin/x', use: 'lookup', type: 'file' }])).toBe(true);
  });

  it('remembers no failed look: an entry it could not look at decides nothing', () => {
    const looks = new AnswerLooks();
    const { verify } = verifyFinding(new Map([['src/a.ts read', { path: 'src/a.ts', use: 'read', type: 'error', digest: 'EACCES' } as EvidenceEntry]]));
    looks.remembering(verify)([read('src/a.ts', 'A1')], 'x');
    expect(looks.changed([read('src/a.ts', 'A0')])).toBe(false);
  });

  it('knows nothing before a look', () => {
    expect(new AnswerLooks().changed([read('src/a.ts', 'A1')])).toBe(false);
  });
});
