import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MemoryStatCache, type StatCacheRows } from '../../src/core/statCache.js';
import { openStore } from '../../src/store/openStore.js';
import { loadStatCache, saveStatCache } from '../../src/store/statCacheTable.js';
import { mulberry32, testSeed } from '../helpers/seed.js';

/*
 * digestsFor merges the store's rows (sorted by bytes) with a listing instead
 * of looking each path up. Whatever the listing's order and whatever the
 * characters, it must answer exactly as get() does path by path: a wrong
 * digest would be a false CURRENT.
 */

const byBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

// Characters whose JavaScript order differs from their bytes' order: U+FFFD and U+E000 sort
// after a surrogate pair in bytes, before it in UTF-16.
const ALPHABET = ['a', 'b', '-', '/', '.', '0', 'é', '\uE000', '\uFFFD', '😀', '𝄞'];

/** A whole number below `below`, from the seeded sequence (test/helpers/seed.ts's mulberry32: its 32 bits, taken modulo). */
function random(seed: number) {
  const next = mulberry32(seed);
  return (below: number) => (next() * 4294967296) % below;
}

// VOUCH_SEED=N replays (test/helpers/seed.ts); the store's round trip draws from N + 12.
const SEED = testSeed(import.meta.url, 11);

function expectedDigests(cache: MemoryStatCache, paths: readonly string[], identities: readonly (string | null)[]) {
  return paths.map((path, index) => {
    const found = identities[index] === null ? undefined : cache.get(path);
    return found !== undefined && found.identity === identities[index] ? found.digest : undefined;
  });
}

describe('the stat cache', () => {
  it('answers a listing in bulk exactly as path by path, in any order and with any characters', () => {
    const next = random(SEED.value);
    for (let round = 0; round < 300; round++) {
      const universe = [...new Set(Array.from({ length: 1 + next(60) }, () => Array.from({ length: 1 + next(5) }, () => ALPHABET[next(ALPHABET.length)]).join('')))];
      const cached = universe.filter(() => next(3) > 0).sort(byBytes);
      const rows: StatCacheRows = { paths: cached, identities: cached.map((path) => `id-${path}`), digests: cached.map((path) => `digest-${path}`) };
      const listed = universe.filter(() => next(4) > 0);
      // As git lists them (by bytes), or, now and then, in another order.
      if (next(4) > 0) listed.sort(byBytes);
      const identities = listed.map((path) => [null, `id-${path}`, `id-${path}`, `changed-${path}`][next(4)] ?? null);
      const bulk = new MemoryStatCache({ paths: rows.paths.slice(), identities: rows.identities, digests: rows.digests }, round % 2 === 1).digestsFor(listed, identities);
      const oneByOne = expectedDigests(new MemoryStatCache(rows), listed, identities);
      expect(bulk, `${SEED.replay()}, round ${round}: ${JSON.stringify(listed)}`).toEqual(oneByOne);
    }
  });

  it('finds a path beyond the BMP that sorts before a BMP path in JavaScript but after it in bytes', () => {
    const paths = ['\uE000', '😀', 'z/\uFFFD', 'z/😀'].sort(byBytes);
    expect(paths).toEqual(['z/\uFFFD', 'z/😀', '\uE000', '😀'].sort(byBytes));
    const rows: StatCacheRows = { paths, identities: paths.map((path) => `id-${path}`), digests: paths.map((path) => `digest-${path}`) };
    expect(new MemoryStatCache(rows).digestsFor(paths, rows.identities)).toEqual(rows.digests);
  });

  it('after a change, answers from the change, not from the rows it was loaded with', () => {
    const rows: StatCacheRows = { paths: ['a', 'b', 'c'], identities: ['1', '2', '3'], digests: ['da', 'db', 'dc'] };
    const cache = new MemoryStatCache(rows);
    expect(cache.digestsFor(['a', 'b', 'c'], ['1', '2', '3'])).toEqual(['da', 'db', 'dc']);
    cache.set('b', '9', 'db2');
    cache.delete('c');
    expect(cache.digestsFor(['a', 'b', 'c'], ['1', '2', '3'])).toEqual(['da', undefined, undefined]);
    expect(cache.digestsFor(['a', 'b', 'c'], ['1', '9', '3'])).toEqual(['da', 'db2', undefined]);
    expect([...cache.dirty].sort()).toEqual(['b', 'c']);
  });

  it('answers the same, path by path and in bulk, after its changes are folded into its rows', () => {
    const next = random(SEED.value + 7);
    for (let round = 0; round < 100; round++) {
      const word = () => Array.from({ length: 1 + next(4) }, () => ALPHABET[next(ALPHABET.length)]).join('');
      const loaded = [...new Set(Array.from({ length: next(40) }, word))].sort(byBytes);
      // Every other round as the observer keeps it, sharing its paths with each listing.
      const cache = new MemoryStatCache({ paths: loaded.slice(), identities: loaded.map((path) => `id-${path}`), digests: loaded.map((path) => `digest-${path}`) }, round % 2 === 1);
      const truth = new Map(loaded.map((path) => [path, { identity: `id-${path}`, digest: `digest-${path}` }]));
      for (let step = 0; step < 60; step++) {
        const path = word();
        const what = next(10);
        if (what < 3) {
          cache.delete(path);
          truth.delete(path);
        } else if (what < 8) {
          cache.set(path, `id-${path}-${step}`, `digest-${path}-${step}`);
          truth.set(path, { identity: `id-${path}-${step}`, digest: `digest-${path}-${step}` });
        } else {
          cache.fold(next(3));
        }
        const universe = [...new Set([...truth.keys(), ...loaded, path])].sort(byBytes);
        const identities = universe.map((each) => truth.get(each)?.identity ?? `id-${each}`);
        const where = `${SEED.replay()}, round ${round}, step ${step}`;
        expect(cache.digestsFor(universe, identities), where).toEqual(universe.map((each) => truth.get(each)?.digest));
        for (const each of universe) expect(cache.get(each), where).toEqual(truth.get(each));
      }
      expect(new Map([...cache.entries].map(([path, entry]) => [path, { ...entry }]))).toEqual(truth);
    }
  });

  it('round-trips through the store in byte order, after edits and deletes, and with two sessions saving', () => {
    const dir = mkdtempSync(join(tmpdir(), 'vouch-stat-cache-'));
    const store = openStore(dir);
    try {
      const next = random(SEED.value + 12);
      let truth = new Map<string, { identity: string; digest: string }>();
      for (let round = 0; round < 40; round++) {
        const cache = loadStatCache(store.db);
        expect(new Map([...cache.entries].map(([path, entry]) => [path, { ...entry }])), `${SEED.replay()}, round ${round}`).toEqual(truth);
        // What was saved is in byte order, so the merge with git's listing answers as lookups do.
        const listed = [...truth.keys()].sort(byBytes);
        const identities = listed.map((path) => truth.get(path)!.identity);
        expect(loadStatCache(store.db).digestsFor(listed, identities), `${SEED.replay()}, round ${round}`).toEqual(listed.map((path) => truth.get(path)!.digest));
        const changes = 1 + next(20);
        for (let change = 0; change < changes; change++) {
          const path = Array.from({ length: 1 + next(4) }, () => ALPHABET[next(ALPHABET.length)]).join('');
          if (next(4) === 0) cache.delete(path);
          else cache.set(path, `id-${round}-${change}`, `digest-${path}-${round}`);
        }
        if (round % 10 === 9) for (const path of cache.entries.keys()) cache.delete(path);
        saveStatCache(store.db, cache);
        truth = new Map([...cache.entries].map(([path, entry]) => [path, { ...entry }]));
      }
      // Two sessions at once: each writes only what it changed, so neither loses the other's.
      const first = loadStatCache(store.db);
      const second = loadStatCache(store.db);
      first.set('only-first', 'i1', 'd1');
      second.set('only-second', 'i2', 'd2');
      saveStatCache(store.db, first);
      saveStatCache(store.db, second);
      const after = loadStatCache(store.db);
      expect(after.get('only-second')).toEqual({ identity: 'i2', digest: 'd2' });
      expect(after.get('only-first')).toEqual({ identity: 'i1', digest: 'd1' });
    } finally {
      store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
