import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/openStore.js';
import { EARLIER_RECEIPTS_LOOKED_AT, insertReceipt, latestReceipt, latestReceiptForInputs, loadManifest } from '../../src/store/receipts.js';
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
        insertReceipt(store.db, receipt(def, context(), obs, { runId, logPath: `logs/${runId}.log`, ...overrides }), () => obs.manifest.entries);
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
        return obs.manifest.entries;
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
        return other.manifest.entries;
      });
      expect(made).toBe(2);
      expect(loadManifest(store.db, other.manifest.digest)).toEqual(other.manifest.entries);
    } finally {
      store.db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
