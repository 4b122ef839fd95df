import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/openStore.js';
import { EARLIER_RECEIPTS_LOOKED_AT, insertReceipt, latestReceipt, latestReceiptForInputs } from '../../src/store/receipts.js';
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
        insertReceipt(store.db, receipt(def, context(), obs, { runId, logPath: `logs/${runId}.log`, ...overrides }), obs.manifest.entries);
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
