import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { deflateRawSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/openStore.js';
import { EARLIER_RECEIPTS_LOOKED_AT, insertReceipt, latestReceipt, latestReceiptForInputs, loadManifest } from '../../src/store/receipts.js';
import { manifestLines, manifestOf, mergedManifest, type InputEntry, type PlainLines } from '../../src/core/manifest.js';
import { context, definition, observation, receipt, source } from '../helpers/model.js';

/* The store's look for an earlier receipt on given inputs: newest first, this check only, within its bound. */

describe('latestReceiptForInputs', () => {
  it('finds the newest receipt of the check on these inputs, never another check\'s, and looks no further back than its bound', () => {
    const dir = mkdtempSync(join(tmpdir(), 'vouch-earlier-'));
    const store = openStore(dir);
    try {
      const def = definition();
      const onInputs = (name: string) => observation([source('src/a.ts', name)]);
      const add = (runId: string, inputs: string, overrides = {}) => {
        const obs = onInputs(inputs);
        insertReceipt(store.db, receipt(def, context(), obs, { runId, logPath: `logs/${runId}.log`, ...overrides }), () => ({ lines: manifestLines(obs.manifest) }));
      };
      add('r1', 'A');
      add('r2', 'A', { result: 'FAIL', exitCode: 1, reuseEligible: false });
      add('other', 'A', { check: 'other' });
      add('r3', 'B');
      const A = onInputs('A').manifest.digest;
      expect(latestReceipt(store.db, def.name)?.runId).toBe('r3');
      expect(latestReceiptForInputs(store.db, def.name, A)?.runId).toBe('r2');
      expect(latestReceiptForInputs(store.db, 'other', A)?.runId).toBe('other');
      expect(latestReceiptForInputs(store.db, def.name, onInputs('C').manifest.digest)).toBeNull();

      // r2 and r3 and the rest: r2 is the oldest of the newest EARLIER_RECEIPTS_LOOKED_AT; one more, and the look stops short of it.
      for (let i = 0; i < EARLIER_RECEIPTS_LOOKED_AT - 2; i++) add(`b${i}`, 'B');
      expect(latestReceiptForInputs(store.db, def.name, A)?.runId).toBe('r2');
      add('last', 'B');
      expect(latestReceiptForInputs(store.db, def.name, A)).toBeNull();
    } finally {
      store.db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('insertReceipt', () => {
  it('makes a manifest\'s entries only when the store does not hold that digest yet', () => {
    const dir = mkdtempSync(join(tmpdir(), 'vouch-manifest-once-'));
    const store = openStore(dir);
    try {
      const def = definition();
      const obs = observation([source('src/a.ts', 'A'), source('src/b.ts', 'B')]);
      let made = 0;
      const entries = () => {
        made++;
        return { lines: manifestLines(obs.manifest) };
      };
      insertReceipt(store.db, receipt(def, context(), obs, { runId: 'r1', logPath: 'logs/r1.log' }), entries);
      expect(made).toBe(1);
      // The same inputs again (a rerun, an edit reverted): the stored manifest is this receipt's too.
      insertReceipt(store.db, receipt(def, context(), obs, { runId: 'r2', logPath: 'logs/r2.log' }), entries);
      expect(made).toBe(1);
      expect(latestReceipt(store.db, def.name)?.runId).toBe('r2');
      expect(loadManifest(store.db, obs.manifest.digest)).toEqual(obs.manifest.entries);
      const other = observation([source('src/a.ts', 'C')]);
      insertReceipt(store.db, receipt(def, context(), other, { runId: 'r3', logPath: 'logs/r3.log' }), () => {
        made++;
        return { entries: other.manifest.entries };
      });
      expect(made).toBe(2);
      expect(loadManifest(store.db, other.manifest.digest)).toEqual(other.manifest.entries);
    } finally {
      store.db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a stored manifest: its lines, or JSON entries', () => {
  const ENTRIES: InputEntry[] = [
    { path: '.gitignore', origin: 'source', type: 'file', digest: 'a'.repeat(64), executable: false },
    { path: 'bin/run me', origin: 'source', type: 'file', digest: 'b'.repeat(64), executable: true },
    { path: 'link:to', origin: 'source', type: 'symlink', target: '../a b\nc' },
    { path: 'node_modules/dep/index.js', origin: 'installed', type: 'file', identity: '1:2:3:644:1:5:6' },
    { path: 'node_modules/dep/linked.js', origin: 'installed', type: 'file', identity: '1:3:3:644:2:5:6', digest: 'c'.repeat(64) },
    { path: 'node_modules/dep/self', origin: 'installed', type: 'symlink', target: '.' },
    { path: 'src/ä 12:3\nx.ts', origin: 'source', type: 'file', digest: 'd'.repeat(64), executable: false },
  ];

  function withStore(test: (db: ReturnType<typeof openStore>['db']) => void) {
    const dir = mkdtempSync(join(tmpdir(), 'vouch-manifest-form-'));
    const store = openStore(dir);
    try {
      test(store.db);
    } finally {
      store.db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }

  it('reads back, from its lines, every kind of entry, whatever bytes its paths and targets hold', () => {
    withStore((db) => {
      const manifest = manifestOf(ENTRIES);
      const obs = { ...observation([]), manifest };
      insertReceipt(db, receipt(definition(), context(), obs, { runId: 'r1', logPath: 'logs/r1.log' }), () => ({ lines: manifestLines(manifest) }));
      expect(loadManifest(db, manifest.digest)).toEqual(ENTRIES);
    });
  });

  it('makes the lines of a manifest whose installed part the native scan rendered without an entry per line, and they hash to its digest', () => {
    const installed = ENTRIES.filter((entry) => entry.origin === 'installed' && entry.type === 'file' && entry.digest === undefined);
    const text = installed.map((entry) => `${entry.path.length}:${entry.path} i ${(entry as { identity: string }).identity} -\n`).join('');
    const lines = Buffer.from(text);
    const offsets = new Uint32Array(installed.length + 1);
    let at = 0;
    installed.forEach((entry, index) => {
      offsets[index] = at;
      at += Buffer.byteLength(`${entry.path.length}:${entry.path} i ${(entry as { identity: string }).identity} -\n`);
    });
    offsets[installed.length] = at;
    const plain: PlainLines = { lines, offsets };
    const rest = ENTRIES.filter((entry) => !installed.includes(entry));
    const merged = mergedManifest(rest, plain);
    const whole = manifestOf(ENTRIES);
    expect(merged.digest).toBe(whole.digest);
    expect(manifestLines(merged).equals(manifestLines(whole))).toBe(true);
    withStore((db) => {
      const obs = { ...observation([]), manifest: merged };
      insertReceipt(db, receipt(definition(), context(), obs, { runId: 'r1', logPath: 'logs/r1.log' }), () => ({ lines: manifestLines(merged) }));
      expect(loadManifest(db, whole.digest)).toEqual(ENTRIES);
    });
  });

  it('reads JSON entries, as stores before the lines hold them', () => {
    withStore((db) => {
      const manifest = manifestOf(ENTRIES);
      const obs = { ...observation([]), manifest };
      insertReceipt(db, receipt(definition(), context(), obs, { runId: 'r1', logPath: 'logs/r1.log' }), () => ({ entries: ENTRIES }));
      expect(loadManifest(db, manifest.digest)).toEqual(ENTRIES);
    });
  });

  it('takes no lines that do not hash to their digest, or do not parse: a store from elsewhere may hold anything', () => {
    withStore((db) => {
      const manifest = manifestOf(ENTRIES);
      const lines = manifestLines(manifest);
      const put = (digest: string, content: Buffer) => db.prepare('INSERT INTO manifests (digest, entries) VALUES (?, ?)').run(digest, deflateRawSync(content));
      put('f'.repeat(64), lines);
      expect(loadManifest(db, 'f'.repeat(64))).toBeNull();
      for (const [index, garbage] of ['12:short', '3:abc q z\n', '3:abc s d\n', '3:abc i x\n', '99999999999:x', '3:abc source l 9:x\n'].entries()) {
        const content = Buffer.from(garbage);
        const digest = manifestOfLines(content);
        put(digest, content);
        expect(loadManifest(db, digest), `garbage ${index}`).toBeNull();
      }
    });
  });
});

function manifestOfLines(content: Buffer): string {
  return createHash('sha256').update(content).digest('hex');
}
