import { describe, expect, it } from 'vitest';
import {
  comparePaths,
  entryLine,
  forgetPatchBytes,
  joinPlainLines,
  manifestOf,
  manifestSize,
  mergedManifest,
  patchedManifest,
  plainLowerBound,
  type InputEntry,
  type PlainLines,
} from '../../src/core/manifest.js';
import { testSeed } from '../helpers/seed.js';

/*
 * The native scan hands over installed files as rendered manifest lines; the
 * merge must give exactly the digest and entries manifestOf gives for all the
 * entries sorted together. Any difference is a receipt that never matches
 * again, or worse, two different trees with one digest.
 */

function random(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

// Characters around "/" in byte order ("-" and "." before it, "0" after) are where a walk's
// order and a sort's order part ways.
const SEGMENTS = ['a', 'a-b', 'a.b', 'a0', 'b', 'node_modules', '.bin', 'x y', 'k:v', '0'];

function randomPath(next: () => number): string {
  const depth = 1 + Math.floor(next() * 4);
  return Array.from({ length: depth }, () => SEGMENTS[Math.floor(next() * SEGMENTS.length)]).join('/');
}

function installed(path: string, n: number): InputEntry {
  return { path, origin: 'installed', type: 'file', identity: `2049:${n}:${n * 7}:644:1:${1_700_000_000_000_000_000 + n}:${1_700_000_000_000_000_000 + n}` };
}

function render(entries: InputEntry[]): PlainLines {
  const offsets: number[] = [];
  let text = '';
  for (const entry of entries) {
    offsets.push(text.length);
    text += entryLine(entry);
  }
  offsets.push(text.length);
  return { lines: Buffer.from(text, 'latin1'), offsets: Uint32Array.from(offsets) };
}

function scenario(seed: number) {
  const next = random(seed);
  const paths = [...new Set(Array.from({ length: 1 + Math.floor(next() * 60) }, () => randomPath(next)))];
  const all: InputEntry[] = paths.map((path, n) => {
    const kind = next();
    if (kind < 0.3) return { path, origin: 'source', type: 'file', digest: `d${n}`, executable: next() < 0.2 };
    if (kind < 0.4) return { path, origin: 'installed', type: 'symlink', target: `../t${n}` };
    return installed(path, n);
  });
  all.sort((a, b) => comparePaths(a.path, b.path));
  // Plain lines: installed files the native scan settles; everything else is looked at in JavaScript.
  const plain = all.filter((entry) => entry.origin === 'installed' && entry.type === 'file' && next() < 0.8);
  const looked = all.filter((entry) => !plain.includes(entry));
  return { all, plain, looked };
}

// 200 scenarios from the first seed on: VOUCH_SEED=N replays from scenario N (test/helpers/seed.ts).
const FIRST = testSeed(import.meta.url, 0);

describe('mergedManifest equals manifestOf over the same entries', () => {
  it.each(Array.from({ length: 200 }, (_, n) => [FIRST.value + n]))('seed %i', (seed) => {
    const { all, plain, looked } = scenario(seed);
    const merged = mergedManifest(looked, render(plain));
    const whole = manifestOf(all);
    expect(merged.digest, FIRST.replay(seed)).toBe(whole.digest);
    // The count comes without making the entries, and agrees with them.
    expect(manifestSize(merged), FIRST.replay(seed)).toBe(whole.entries.length);
    expect(merged.entries, FIRST.replay(seed)).toEqual(whole.entries);
    expect(manifestSize(whole)).toBe(whole.entries.length);
  });

  it('no plain lines, or nothing but plain lines', () => {
    const entries = ['a', 'a-b', 'a/b', 'a0'].map((path, n) => installed(path, n));
    expect(mergedManifest(entries, render([])).digest).toBe(manifestOf(entries).digest);
    expect(mergedManifest([], render(entries)).digest).toBe(manifestOf(entries).digest);
    expect(mergedManifest([], render(entries)).entries).toEqual(entries);
    expect(mergedManifest([], render([])).digest).toBe(manifestOf([]).digest);
  });

  it('a different identity in one plain line changes the digest', () => {
    const entries = ['a', 'b', 'c'].map((path, n) => installed(path, n));
    const changed = entries.map((entry, n) => (n === 1 ? installed('b', 99) : entry));
    expect(mergedManifest([], render(changed)).digest).not.toBe(mergedManifest([], render(entries)).digest);
  });
});

describe('patchedManifest: the hash resumed where a patch replaced entries, kept bytes hashed after it', () => {
  // Enough lines for many marks (one every 64 kB of entry lines), installed lines among them.
  it.each([[FIRST.value], [FIRST.value + 1], [FIRST.value + 2]])('seed %i: every patch gives the digest, lines and entries of the whole', (seed) => {
    const next = random(seed);
    const all: InputEntry[] = [];
    for (let n = 0; n < 9_000; n++) {
      const path = `${SEGMENTS[n % SEGMENTS.length]}/dir-${Math.floor(n / 50)}/file-${n}-${'x'.repeat(20 + (n % 17))}.ts`;
      all.push(next() < 0.3 ? installed(path, n) : { path, origin: 'source', type: 'file', digest: `${n}`.padStart(64, '0'), executable: false });
    }
    all.sort((a, b) => comparePaths(a.path, b.path));
    const plain = render(all.filter((entry) => entry.origin === 'installed'));
    let entries = all.filter((entry) => entry.origin === 'source');
    let manifest = mergedManifest(entries, plain);
    for (let round = 0; round < 40; round++) {
      // As the observer patches: some entries replaced in place by new objects, the rest the same objects.
      const replaced = entries.slice();
      for (let k = 0; k <= Math.floor(next() * 3); k++) {
        const at = round % 5 === 4 ? replaced.length - 1 : Math.floor(next() * replaced.length);
        const entry = replaced[at] as InputEntry & { origin: 'source'; type: 'file' };
        replaced[at] = { ...entry, digest: `${round}-${k}`.padStart(64, 'f'), executable: next() < 0.5 };
      }
      // A full scan lets go of the bytes patches kept: the next patch renders them again.
      if (round % 7 === 3) forgetPatchBytes(manifest);
      const patched = patchedManifest(manifest, { entries: replaced, plain });
      const whole = mergedManifest(replaced, plain);
      expect(patched.digest, `${FIRST.replay(seed)}, round ${round}`).toBe(whole.digest);
      expect(patched.digest).toBe(manifestOf([...replaced, ...all.filter((entry) => entry.origin === 'installed')].sort((a, b) => comparePaths(a.path, b.path))).digest);
      expect(patched.lines!().equals(whole.lines!())).toBe(true);
      if (round % 10 === 0) expect(patched.entries).toEqual(whole.entries);
      entries = replaced;
      manifest = patched;
    }
  });

  it('falls back to the whole hash for another plain, another length, or a manifest it did not make', () => {
    const sources: InputEntry[] = Array.from({ length: 3_000 }, (_, n) => ({ path: `src/${String(n).padStart(5, '0')}-${'y'.repeat(30)}.ts`, origin: 'source', type: 'file', digest: 'a'.repeat(64), executable: false }));
    const plain = render([installed('node_modules/a', 1)]);
    const manifest = mergedManifest(sources, plain);
    const otherPlain = render([installed('node_modules/b', 2)]);
    expect(patchedManifest(manifest, { entries: sources, plain: otherPlain }).digest).toBe(mergedManifest(sources, otherPlain).digest);
    const fewer = sources.slice(1);
    expect(patchedManifest(manifest, { entries: fewer, plain }).digest).toBe(mergedManifest(fewer, plain).digest);
    const made = manifestOf(sources);
    expect(patchedManifest(made, { entries: sources, plain }).digest).toBe(mergedManifest(sources, plain).digest);
    expect(patchedManifest(manifest, { entries: sources, plain: null }).digest).toBe(manifestOf(sources).digest);
  });
});

describe('joinPlainLines and plainLowerBound', () => {
  it('drops the lines below a pruned directory and joins runs in order', () => {
    const first = ['nm/.vite/vitest/a', 'nm/.vite/vitest/b', 'nm/.vite/x', 'nm/a', 'nm/vitest'].map((path, n) => installed(path, n));
    const second = ['w/nm/a', 'w/nm/b'].map((path, n) => installed(path, n + 10));
    const plain = render(first);
    const drop: [number, number][] = [[plainLowerBound(plain, 'nm/.vite/vitest/'), plainLowerBound(plain, 'nm/.vite/vitest0')]];
    expect(drop).toEqual([[0, 2]]);
    const joined = joinPlainLines([
      { plain, drop },
      { plain: render(second), drop: [] },
    ]);
    const kept = [...first.slice(2), ...second];
    expect(mergedManifest([], joined).entries).toEqual(kept);
    expect(mergedManifest([], joined).digest).toBe(manifestOf(kept).digest);
  });

  it('overlapping and empty ranges', () => {
    const entries = ['a', 'b', 'c', 'd', 'e'].map((path, n) => installed(path, n));
    const joined = joinPlainLines([{ plain: render(entries), drop: [[1, 3], [2, 4], [0, 0]] }]);
    expect(mergedManifest([], joined).entries.map((entry) => entry.path)).toEqual(['a', 'e']);
  });
});
