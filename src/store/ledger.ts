import type Database from 'better-sqlite3';
import { readdirSync, renameSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { LEDGER_DEFAULTS, type LedgerRetention } from '../core/config.js';
import { ledgerEntryFrom, type LedgerEntry } from '../core/ledgerEntry.js';
import { LEDGER_SCHEMA } from './migrations.js';
import { SPOOL } from './ledgerSpool.js';
import { withRecovery } from './openStore.js';
import { readStateFile } from './stateDir.js';

/* The ledger table: filled from the spool (how, and why a spool: store/ledgerSpool.ts), pruned, read. */

const SEGMENT = /^ledger-(\d{13})-(\d+)\.jsonl$/;
/** A segment larger than this was not written by vouch: it is deleted unread. */
const SEGMENT_MAX_BYTES = 64 * 1024 * 1024;
/**
 * A writer that opened the spool just before it was renamed still writes into the renamed
 * file: a segment is read only once it is this old, by its name's stamp.
 */
export const SEGMENT_SETTLE_MS = 100;
const SEGMENT_KEY = 'ledger_segment:';

export interface IngestResult {
  /** Entries moved into the table. */
  added: number;
  /** Lines that were not whole entries, dropped. */
  dropped: number;
  /** Rows removed by retention. */
  pruned: number;
}

/**
 * Moves the spool into the ledger table and applies retention. Waits up to
 * SEGMENT_SETTLE_MS for a segment it has just renamed. Throws only what the store
 * throws (a full disk, a damaged file the caller's recovery handles).
 */
export async function ingestLedger(db: Database.Database, stateDir: string, retention: LedgerRetention | undefined, now: () => number = Date.now): Promise<IngestResult> {
  const result: IngestResult = { added: 0, dropped: 0, pruned: 0 };
  const renamedAt = now();
  try {
    renameSync(join(stateDir, SPOOL), join(stateDir, `ledger-${String(renamedAt).padStart(13, '0')}-${process.pid}.jsonl`));
  } catch {
    // no spool (ENOENT), or another process renamed it first
  }
  const segments = readdirSync(stateDir)
    .filter((name) => SEGMENT.test(name))
    .sort();
  const youngest = Math.max(0, ...segments.map((name) => Number(SEGMENT.exec(name)![1])));
  const wait = youngest + SEGMENT_SETTLE_MS - now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(wait, SEGMENT_SETTLE_MS)));
  withRecovery(db, (live) => {
    live.exec(LEDGER_SCHEMA);
    const seen = live.prepare('SELECT 1 FROM meta WHERE key = ?').pluck();
    const mark = live.prepare('INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)');
    const unmark = live.prepare('DELETE FROM meta WHERE key = ?');
    const insert = live.prepare(
      'INSERT INTO ledger (at, source, host, session, mode, decision, forced, command, checks, receipts, latency_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    );
    for (const name of segments) {
      const path = join(stateDir, name);
      const { entries, dropped } = readSegment(path);
      live.transaction(() => {
        if (seen.get(SEGMENT_KEY + name) !== undefined) return;
        for (const e of entries) {
          insert.run(e.at, e.source, e.host, e.session, e.mode, e.decision, e.forced ? 1 : 0, e.command, JSON.stringify(e.checks), JSON.stringify(e.receipts), e.latency_ms);
        }
        mark.run(SEGMENT_KEY + name, String(entries.length));
        result.added += entries.length;
        result.dropped += dropped;
      }).immediate();
      try {
        unlinkSync(path);
      } catch {
        // another ingest deleted it
      }
      unmark.run(SEGMENT_KEY + name);
    }
    // Marks whose segment is gone: a crash between the delete and the unmark.
    const present = new Set(segments);
    for (const key of live.prepare("SELECT key FROM meta WHERE key LIKE 'ledger_segment:%'").pluck().all() as string[]) {
      if (!present.has(key.slice(SEGMENT_KEY.length)) && !existsIn(stateDir, key.slice(SEGMENT_KEY.length))) unmark.run(key);
    }
    result.pruned = pruneLedger(live, retention, now());
  });
  return result;
}

function existsIn(stateDir: string, name: string): boolean {
  return readdirSync(stateDir).includes(name);
}

function readSegment(path: string): { entries: LedgerEntry[]; dropped: number } {
  const entries: LedgerEntry[] = [];
  let dropped = 0;
  const text = readStateFile(path);
  if (text === null || text.length > SEGMENT_MAX_BYTES) return { entries, dropped: text === null ? 0 : 1 };
  const lines = text.split('\n');
  // After the last newline: '' or a line torn by a crash.
  if (lines.pop() !== '') dropped++;
  for (const line of lines) {
    let entry: LedgerEntry | null = null;
    try {
      entry = ledgerEntryFrom(JSON.parse(line));
    } catch {
      entry = null;
    }
    if (entry) entries.push(entry);
    else dropped++;
  }
  return { entries, dropped };
}

/** Drops rows past the configured age and count (defaults: LEDGER_DEFAULTS). Returns how many. */
export function pruneLedger(db: Database.Database, retention: LedgerRetention | undefined, now: number): number {
  const days = retention?.days ?? LEDGER_DEFAULTS.days;
  const rows = retention?.rows ?? LEDGER_DEFAULTS.rows;
  const byAge = db.prepare('DELETE FROM ledger WHERE at < ?').run(now - days * 86_400_000).changes;
  const byCount = db.prepare('DELETE FROM ledger WHERE seq <= (SELECT seq FROM ledger ORDER BY seq DESC LIMIT 1 OFFSET ?)').run(rows).changes;
  return byAge + byCount;
}

interface LedgerRow {
  at: number;
  source: string;
  host: string | null;
  session: string | null;
  mode: string;
  decision: string;
  forced: number;
  command: string | null;
  checks: string;
  receipts: string;
  latency_ms: number | null;
}

/** The entries since `since` (ms), oldest first. A row that does not read back as an entry is skipped. */
export function readLedger(db: Database.Database, since: number): LedgerEntry[] {
  const rows = withRecovery(db, (live) => {
    live.exec(LEDGER_SCHEMA);
    return live.prepare('SELECT at, source, host, session, mode, decision, forced, command, checks, receipts, latency_ms FROM ledger WHERE at >= ? ORDER BY seq').all(since);
  }) as LedgerRow[];
  const entries: LedgerEntry[] = [];
  for (const row of rows) {
    try {
      const entry = ledgerEntryFrom({ ...row, forced: row.forced === 1, checks: JSON.parse(row.checks), receipts: JSON.parse(row.receipts) });
      if (entry) entries.push(entry);
    } catch {
      // a row someone edited by hand
    }
  }
  return entries;
}

