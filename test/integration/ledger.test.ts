import Database from 'better-sqlite3';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { COMMAND_MAX, ledgerEntryFrom, truncateCommand, type LedgerEntry } from '../../src/core/ledgerEntry.js';
import { ingestLedger, readLedger } from '../../src/store/ledger.js';
import { appendLedger, retentionOf, SPOOL, SPOOL_MAX_BYTES } from '../../src/store/ledgerSpool.js';
import { MIGRATIONS } from '../../src/store/migrations.js';
import { openStore, STATE_DB } from '../../src/store/openStore.js';

/*
 * The ledger against real SQLite files and a real spool: the migration from the schema before
 * it, the spool's move into the table (exactly once, whatever is torn or malformed), retention,
 * and a table someone dropped.
 */

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function stateDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'vouch-ledger-'));
  dirs.push(dir);
  return dir;
}

function entry(overrides: Partial<LedgerEntry> = {}): LedgerEntry {
  return {
    at: Date.now(),
    source: 'hook',
    host: 'claude',
    session: 's1',
    mode: 'enforce',
    decision: 'deny',
    forced: false,
    command: 'npm test',
    checks: ['test'],
    receipts: [{ check: 'test', run_id: '20261205T000000Z-aaaaaa', duration_ms: 4000 }],
    latency_ms: 120,
    ...overrides,
  };
}

const segments = (dir: string) => readdirSync(dir).filter((name) => /^ledger-\d+-\d+\.jsonl$/.test(name));

describe('the ledger table', () => {
  it('a store at the schema before the ledger migrates, and keeps its receipts readable', () => {
    const dir = stateDir();
    const path = join(dir, STATE_DB);
    const before = new Database(path);
    for (const migration of MIGRATIONS.slice(0, 3)) before.exec(migration);
    before.pragma('user_version = 3');
    before
      .prepare(
        `INSERT INTO receipts (run_id, check_name, definition, definition_digest, context, context_digest, manifest_digest, input_count, result, exit_code, signal, started_at, finished_at, duration_ms, log_path, reuse_eligible, reasons)
         VALUES ('r1', 'test', '{}', 'd', '{}', 'c', 'm', 1, 'PASS', 0, NULL, 1, 2, 1, 'logs/r1.log', 1, '[]')`,
      )
      .run();
    before.close();

    const store = openStore(dir);
    try {
      expect(store.db.pragma('user_version', { simple: true })).toBe(MIGRATIONS.length);
      expect(MIGRATIONS.length).toBe(6);
      expect(store.db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'ledger'").pluck().get()).toBe('ledger');
      expect(store.db.prepare('SELECT run_id FROM receipts').pluck().all()).toEqual(['r1']);
      expect(readLedger(store.db, 0)).toEqual([]);
    } finally {
      store.close();
    }
  });

  it('moves the spool into the table once, dropping torn and malformed lines, and deletes it', async () => {
    const dir = stateDir();
    const first = entry({ at: 1_000_000 });
    const second = entry({ at: 1_000_001, decision: 'pass', checks: [], receipts: [], command: 'ls' });
    expect(appendLedger(dir, first)).toBe(false);
    expect(appendLedger(dir, second)).toBe(false);
    // Malformed lines: not JSON, a wrong field, and a torn last line with no newline.
    writeFileSync(join(dir, SPOOL), '{nope\n' + JSON.stringify({ ...first, decision: 'explode' }) + '\n' + JSON.stringify(first).slice(0, 40), { flag: 'a' });
    const store = openStore(dir);
    try {
      const result = await ingestLedger(store.db, dir, undefined, () => 2_000_000);
      // Both rows are from 1970: older than 90 days at any real time, but "now" is 2,000,000 ms here.
      expect(result).toEqual({ added: 2, dropped: 3, pruned: 0 });
      expect(readLedger(store.db, 0)).toEqual([first, second]);
    } finally {
      store.close();
    }
    expect(existsSync(join(dir, SPOOL))).toBe(false);
    expect(segments(dir)).toEqual([]);
  });

  it('keeps rows within the retention, and drops what is older or beyond the row count', async () => {
    const dir = stateDir();
    const now = Date.UTC(2026, 11, 5);
    const day = 86_400_000;
    for (let index = 0; index < 250; index++) appendLedger(dir, entry({ at: now - 1000 + index }));
    appendLedger(dir, entry({ at: now - 91 * day }));
    appendLedger(dir, entry({ at: now - 89 * day }));
    const store = openStore(dir);
    try {
      const defaults = await ingestLedger(store.db, dir, undefined, () => now);
      expect(defaults).toEqual({ added: 252, dropped: 0, pruned: 1 });
      expect(readLedger(store.db, 0)).toHaveLength(251);
      // A narrower config: 10 days and the newest 100 rows.
      const narrower = await ingestLedger(store.db, dir, retentionOf(JSON.stringify({ schema: 1, checks: [], ledger: { days: 10, rows: 100 } })), () => now);
      expect(narrower.pruned).toBe(151);
      const kept = readLedger(store.db, 0);
      expect(kept).toHaveLength(100);
      expect(kept.at(-1)!.at).toBe(now - 1000 + 249);
      expect(kept[0]!.at).toBe(now - 1000 + 150);
    } finally {
      store.close();
    }
    expect(existsSync(join(dir, SPOOL))).toBe(false);
    expect(segments(dir)).toEqual([]);
  });

  it('a segment already moved before a crash is not inserted again', async () => {
    const dir = stateDir();
    const now = Date.now();
    appendLedger(dir, entry({ at: now }));
    const store = openStore(dir);
    try {
      // Move it aside by hand as an ingest would, keep a copy, ingest, then put the copy back:
      // as if the process died after the commit and before the delete.
      const name = `ledger-${String(now - 1000).padStart(13, '0')}-1.jsonl`;
      copyFileSync(join(dir, SPOOL), join(dir, name));
      rmSync(join(dir, SPOOL));
      copyFileSync(join(dir, name), join(dir, 'kept'));
      store.db.prepare('INSERT INTO meta (key, value) VALUES (?, ?)').run(`ledger_segment:${name}`, '1');
      await ingestLedger(store.db, dir, undefined);
      expect(readLedger(store.db, 0)).toHaveLength(0);
      expect(segments(dir)).toEqual([]);
      expect(store.db.prepare("SELECT count(*) FROM meta WHERE key LIKE 'ledger_segment:%'").pluck().get()).toBe(0);
      // Without the mark, the same segment is inserted, once.
      copyFileSync(join(dir, 'kept'), join(dir, name));
      await ingestLedger(store.db, dir, undefined);
      await ingestLedger(store.db, dir, undefined);
      expect(readLedger(store.db, 0)).toHaveLength(1);
    } finally {
      store.close();
    }
  });

  it('a dropped ledger table is made again; a row edited by hand is skipped', async () => {
    const dir = stateDir();
    const store = openStore(dir);
    try {
      store.db.exec('DROP TABLE ledger');
      expect(readLedger(store.db, 0)).toEqual([]);
      store.db.exec('DROP TABLE ledger');
      appendLedger(dir, entry());
      await ingestLedger(store.db, dir, undefined);
      store.db.prepare("INSERT INTO ledger (at, source, mode, decision, checks, receipts) VALUES (1, 'hook', 'enforce', 'deny', 'not json', '[]')").run();
      store.db.prepare("INSERT INTO ledger (at, source, mode, decision, checks, receipts) VALUES (1, 'elsewhere', 'enforce', 'deny', '[]', '[]')").run();
      const read = readLedger(store.db, 0);
      expect(read).toHaveLength(1);
      expect(read[0]).toEqual(entry({ at: read[0]!.at }));
    } finally {
      store.close();
    }
  });

  it('a spool the store never takes stops growing at SPOOL_MAX_BYTES', () => {
    const dir = stateDir();
    writeFileSync(join(dir, SPOOL), 'x'.repeat(SPOOL_MAX_BYTES + 1));
    expect(appendLedger(dir, entry())).toBe(true);
    expect(statSync(join(dir, SPOOL)).size).toBe(SPOOL_MAX_BYTES + 1);
  });

  it('a state dir that cannot be written is skipped, never thrown', () => {
    const dir = stateDir();
    writeFileSync(join(dir, 'file'), '');
    expect(appendLedger(join(dir, 'file', 'state'), entry())).toBe(false);
  });
});

describe('a ledger entry', () => {
  it('cuts a long command to COMMAND_MAX characters, never inside a surrogate pair', () => {
    expect(truncateCommand('npm test')).toBe('npm test');
    const long = 'x'.repeat(100_000);
    expect(truncateCommand(long)).toHaveLength(COMMAND_MAX);
    const emoji = 'a'.repeat(COMMAND_MAX - 2) + '😀'.repeat(10);
    const cut = truncateCommand(emoji);
    expect(cut.length).toBeLessThanOrEqual(COMMAND_MAX);
    expect(cut).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
    expect(cut.endsWith('…')).toBe(true);
  });

  it('reads back only what is exactly an entry', () => {
    // One entry: two calls of entry() can fall on either side of a millisecond.
    const one = entry();
    expect(ledgerEntryFrom(one)).toEqual(one);
    expect(ledgerEntryFrom({ ...entry(), at: -1 })).toBeNull();
    expect(ledgerEntryFrom({ ...entry(), host: 'vim' })).toBeNull();
    expect(ledgerEntryFrom({ ...entry(), receipts: [{ check: 'test', run_id: 'r', duration_ms: 'long' }] })).toBeNull();
    expect(ledgerEntryFrom({ ...entry(), command: 'y'.repeat(5000) })!.command).toHaveLength(COMMAND_MAX);
    expect(ledgerEntryFrom(null)).toBeNull();
    expect(ledgerEntryFrom([])).toBeNull();
  });
});
