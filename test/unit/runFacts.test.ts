import { describe, expect, it } from 'vitest';
import { normalizeRunPath, runFactsOf, type Access, type PathFacts } from '../../src/core/runFacts.js';

/*
 * The run facts model: one fact per absolute path, with the order that decides whether a
 * read is an input (before the run wrote the path) or the run's own cache (after), and a
 * cap past which the result is an overflow, never a partial set.
 */

function factsOf(accesses: Access[]): Map<string, PathFacts> {
  const facts = runFactsOf(accesses);
  if (facts.kind !== 'facts') throw new Error(`overflow: ${facts.detail}`);
  return new Map(facts.paths.map((fact) => [fact.path, fact]));
}

describe('run facts', () => {
  it('a read before the run wrote the file is an input; a read after its own write is its cache', () => {
    const facts = factsOf([
      { op: 'read', path: '/p/input.json' },
      { op: 'write', path: '/p/input.json' },
      { op: 'write', path: '/p/.cache' },
      { op: 'read', path: '/p/.cache' },
    ]);
    expect(facts.get('/p/input.json')).toEqual({ path: '/p/input.json', read: 'before-write', written: true });
    expect(facts.get('/p/.cache')).toEqual({ path: '/p/.cache', read: 'after-own-write', written: true });
  });

  it('a file read before and again after its write stays an input, and says it was read again', () => {
    const facts = factsOf([
      { op: 'read', path: '/p/tsconfig.tsbuildinfo' },
      { op: 'write', path: '/p/tsconfig.tsbuildinfo' },
      { op: 'read', path: '/p/tsconfig.tsbuildinfo' },
    ]);
    expect(facts.get('/p/tsconfig.tsbuildinfo')).toEqual({ path: '/p/tsconfig.tsbuildinfo', read: 'before-write', written: true, readAgainAfterWrite: true });
  });

  it('keeps the first lookup answer, and classes it by the writes before it', () => {
    const facts = factsOf([
      { op: 'lookup', path: '/p/node_modules/x/index.ts', answer: { kind: 'absent' } },
      { op: 'lookup', path: '/p/node_modules/x/index.ts', answer: { kind: 'file' } },
      { op: 'create', path: '/p/out/a.js' },
      { op: 'lookup', path: '/p/out/a.js', answer: { kind: 'file' } },
    ]);
    expect(facts.get('/p/node_modules/x/index.ts')!.lookup).toEqual({ answer: { kind: 'absent' }, order: 'before-write' });
    expect(facts.get('/p/out/a.js')!.lookup).toEqual({ answer: { kind: 'file' }, order: 'after-own-write' });
  });

  it("a created or removed entry writes its directory's listing; a listing before that is an input", () => {
    const facts = factsOf([
      { op: 'list', path: '/p/src' },
      { op: 'create', path: '/p/out/a.js' },
      { op: 'list', path: '/p/out' },
      { op: 'remove', path: '/p/src/old.ts' },
    ]);
    expect(facts.get('/p/src')).toEqual({ path: '/p/src', listed: 'before-write', listedByOther: true, written: true });
    expect(facts.get('/p/out')).toEqual({ path: '/p/out', written: true, listed: 'after-own-write', listedByOther: true });
    expect(facts.get('/p/src/old.ts')).toEqual({ path: '/p/src/old.ts', written: true });
  });

  it('a listing keeps which compiler processes made it, and whether any other program did', () => {
    const facts = factsOf([
      { op: 'list', path: '/p/a', by: 0 },
      { op: 'list', path: '/p/a', by: 1 },
      { op: 'list', path: '/p/a', by: 0 },
      { op: 'list', path: '/p/b', by: 1 },
      { op: 'list', path: '/p/b' },
    ]);
    expect(facts.get('/p/a')).toEqual({ path: '/p/a', listed: 'before-write', listedBy: [0, 1] });
    expect(facts.get('/p/b')).toEqual({ path: '/p/b', listed: 'before-write', listedBy: [1], listedByOther: true });
  });

  it('a readlink gives the lookup its link target; an exec is a read', () => {
    const facts = factsOf([
      { op: 'lookup', path: '/p/link', answer: { kind: 'link' } },
      { op: 'readlink', path: '/p/link', target: '../target' },
      { op: 'exec', path: '/usr/bin/sh' },
    ]);
    expect(facts.get('/p/link')).toEqual({ path: '/p/link', lookup: { answer: { kind: 'link', target: '../target' }, order: 'before-write' }, linkTarget: { target: '../target', order: 'before-write' } });
    expect(facts.get('/usr/bin/sh')).toEqual({ path: '/usr/bin/sh', read: 'before-write', executed: true });
  });

  it('normalises slashes and `.` but keeps `..`, which a symbolic link makes differ from its lexical parent', () => {
    expect(normalizeRunPath('/p//src/./a.ts/')).toBe('/p/src/a.ts');
    expect(normalizeRunPath('/p/link/../b')).toBe('/p/link/../b');
    expect(normalizeRunPath('relative/a')).toBeNull();
    expect([...factsOf([{ op: 'read', path: '/p/./a' }, { op: 'read', path: '/p//a' }]).keys()]).toEqual(['/p/a']);
  });

  it('past the cap the result is an overflow, not the first paths', () => {
    const accesses: Access[] = [0, 1, 2].map((n) => ({ op: 'read', path: `/p/${n}` }));
    expect(runFactsOf(accesses, 3).kind).toBe('facts');
    expect(runFactsOf([...accesses, { op: 'read', path: '/p/1' }], 3).kind).toBe('facts');
    expect(runFactsOf([...accesses, { op: 'lookup', path: '/p/3', answer: { kind: 'absent' } }], 3)).toEqual({ kind: 'overflow', reason: 'cap', detail: 'more than 3 paths' });
  });

  it('a relative path makes the whole set unusable', () => {
    expect(runFactsOf([{ op: 'read', path: '/p/a' }, { op: 'read', path: 'b' }])).toMatchObject({ kind: 'overflow', reason: 'unknown-path' });
  });
});
