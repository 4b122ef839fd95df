import Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateRawSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../src/store/migrations.js';
import { openStore, STATE_DB } from '../../src/store/openStore.js';
import { loadManifest, storeManifest } from '../../src/store/receipts.js';
import { manifestLines } from '../../src/core/manifest.js';
import { observation, source } from '../helpers/model.js';

/*
 * The manifests table's move to rowids (migration 6), on a real SQLite file made by the schema
 * before it: every manifest and receipt kept byte for byte, and a digest found by its own index,
 * not by a walk whose every step reads a manifest's entries.
 */

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const lines = (count: number, salt: string) => manifestLines(observation(Array.from({ length: count }, (_, i) => source(`src/${salt}/file${i}.ts`, `${salt}${i}`))).manifest);
const digestOf = (content: Buffer) => createHash('sha256').update(content).digest('hex');

function storeAtSchema5(): { dir: string; manifests: Map<string, Buffer> } {
  const dir = mkdtempSync(join(tmpdir(), 'vouch-migrate-'));
  dirs.push(dir);
  const db = new Database(join(dir, STATE_DB));
  for (const migration of MIGRATIONS.slice(0, 5)) db.exec(migration);
  db.pragma('user_version = 5');
  const manifests = new Map<string, Buffer>();
  const insert = db.prepare('INSERT INTO manifests (digest, entries) VALUES (?, ?)');
  // Entries past a page, as a real project's are: in the old table they spill to overflow pages.
  for (const salt of ['a', 'b', 'c', 'd', 'e']) {
    const content = lines(2_000, salt);
    const stored = deflateRawSync(content);
    manifests.set(digestOf(content), stored);
    insert.run(digestOf(content), stored);
  }
  db.prepare(
    `INSERT INTO receipts (run_id, check_name, definition, definition_digest, context, context_digest, manifest_digest, input_count, result, exit_code, signal, started_at, finished_at, duration_ms, log_path, reuse_eligible, reasons)
     VALUES ('r1', 'test', '{}', 'd', '{}', 'c', ?, 2000, 'PASS', 0, NULL, 1, 2, 1, 'logs/r1.log', 1, '[]')`,
  ).run([...manifests.keys()][0]);
  expect(db.prepare("SELECT wr FROM pragma_table_list WHERE name = 'manifests'").pluck().get()).toBe(1);
  db.close();
  return { dir, manifests };
}

describe('migration 6: manifests with rowids', () => {
  it('keeps every manifest and receipt, and finds a digest through its own index', () => {
    const { dir, manifests } = storeAtSchema5();
    const store = openStore(dir);
    try {
      const db = store.db;
      expect(db.pragma('user_version', { simple: true })).toBe(6);
      expect(db.prepare("SELECT wr FROM pragma_table_list WHERE name = 'manifests'").pluck().get()).toBe(0);
      const plan = db.prepare('EXPLAIN QUERY PLAN SELECT 1 FROM manifests WHERE digest = ?').all('x') as Array<{ detail: string }>;
      expect(plan.map((step) => step.detail)).toEqual([expect.stringMatching(/^SEARCH manifests USING COVERING INDEX sqlite_autoindex_manifests_1 \(digest=\?\)$/)]);

      const rows = db.prepare('SELECT digest, entries FROM manifests ORDER BY digest').all() as Array<{ digest: string; entries: Buffer }>;
      expect(rows.map((row) => row.digest)).toEqual([...manifests.keys()].sort());
      for (const row of rows) expect(row.entries.equals(manifests.get(row.digest)!)).toBe(true);
      const first = [...manifests.keys()][0]!;
      expect(loadManifest(db, first)?.length).toBe(2_000);
      expect(db.prepare('SELECT run_id, manifest_digest FROM receipts').all()).toEqual([{ run_id: 'r1', manifest_digest: first }]);

      // A digest is still stored once: the primary key refuses a second row.
      expect(storeManifest(db, first, () => Buffer.from('never read'))).toBe(true);
      expect(() => db.prepare('INSERT INTO manifests (digest, entries) VALUES (?, ?)').run(first, Buffer.from('x'))).toThrow(/UNIQUE constraint failed/);
      expect(db.prepare('SELECT count(*) FROM manifests').pluck().get()).toBe(manifests.size);
    } finally {
      store.close();
    }
  });

  it('makes a new store with rowids too', () => {
    const dir = mkdtempSync(join(tmpdir(), 'vouch-migrate-'));
    dirs.push(dir);
    const store = openStore(dir);
    try {
      expect(store.db.prepare("SELECT wr FROM pragma_table_list WHERE name = 'manifests'").pluck().get()).toBe(0);
    } finally {
      store.close();
    }
  });
});
