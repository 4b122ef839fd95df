import { describe, expect, it } from 'vitest';
import { BaselineCache, splitByBaseline, takeBaseline } from '../../src/prove/lintBaseline.js';
import type { Finding } from '../../src/prove/residentLinter.js';

// The matching rule alone: which of a draft's findings the disk text already had.

/** A rule that flags every line holding `==`, as a linter would: code, message, 1-based line. */
function eqeqeq(text: string): Finding[] {
  return text.split('\n').flatMap((line, index) => (line.includes('==') ? [{ level: 'error' as const, message: 'Expected ===', code: 'eqeqeq', line: index + 1, column: line.indexOf('==') + 1 }] : []));
}

const DISK = 'export function same(a: number, b: number) {\n  return a == b;\n}\n';

function split(draft: string, disk = DISK) {
  const { old, added } = splitByBaseline(eqeqeq(draft), draft, takeBaseline(eqeqeq(disk), disk, false));
  return { old: old.map((finding) => finding.line), added: added.map((finding) => finding.line) };
}

describe('lint baseline matching', () => {
  it('matches an old finding on an unchanged line, wherever the draft moved it, and however it is indented', () => {
    expect(split(DISK)).toEqual({ old: [2], added: [] });
    expect(split(`// a comment\n// and another\n${DISK}export const x = 1;\n`)).toEqual({ old: [4], added: [] });
    expect(split('export function same(a: number, b: number) {\n  if (true) {\n      return a == b;\n  }\n}\n')).toEqual({ old: [3], added: [] });
  });

  it('counts multiplicity: a second identical violation is new, and only one of the two is excused', () => {
    expect(split('export function same(a: number, b: number) {\n  return a == b;\n}\nexport function again(a: number, b: number) {\n  return a == b;\n}\n')).toEqual({ old: [2], added: [5] });
  });

  it('calls a finding new when its line changed, or when the old one was fixed and another added', () => {
    expect(split('export function same(a: number, c: number) {\n  return a == c;\n}\n')).toEqual({ old: [], added: [2] });
    expect(split('export function same(a: number, b: number) {\n  return Object.is(a, b);\n}\nexport const odd = (n: number) => n % 2 == 1;\n')).toEqual({ old: [], added: [4] });
  });

  it('matches on the rule and message too, not the line alone', () => {
    const other: Finding[] = [{ level: 'error', message: 'Unexpected debugger', code: 'no-debugger', line: 2 }];
    const { old, added } = splitByBaseline(other, DISK, takeBaseline(eqeqeq(DISK), DISK, false));
    expect([old.length, added.length]).toEqual([0, 1]);
  });

  it('has no baseline for a disk text that did not parse: everything on the draft is new', () => {
    const { old, added } = splitByBaseline(eqeqeq(DISK), DISK, takeBaseline(eqeqeq(DISK), DISK, true));
    expect([old.length, added.length]).toEqual([0, 1]);
  });
});

describe('baseline cache', () => {
  it('lints a (path, digest) once, shares a lint in flight, forgets a failed one, and drops all on clear', async () => {
    const cache = new BaselineCache();
    let lints = 0;
    const lint = async () => {
      lints += 1;
      return new Map([['k', 1]]);
    };
    await Promise.all([cache.take('a.ts', 'd1', lint), cache.take('a.ts', 'd1', lint)]);
    expect(lints).toBe(1);
    await cache.take('a.ts', 'd2', lint);
    await cache.take('b.ts', 'd1', lint);
    expect(lints).toBe(3);
    await expect(cache.take('c.ts', 'd1', () => Promise.reject(new Error('no answer')))).rejects.toThrow('no answer');
    await cache.take('c.ts', 'd1', lint);
    expect(lints).toBe(4);
    cache.clear();
    await cache.take('a.ts', 'd1', lint);
    expect(lints).toBe(5);
  });

  it('keeps a bounded number of baselines, dropping the oldest', async () => {
    const cache = new BaselineCache();
    for (let i = 0; i < 300; i++) await cache.take(`f${i}.ts`, 'd', async () => new Map());
    expect(cache.size).toBe(256);
  });
});
