import { closeSync, fstatSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { LedgerRetention } from '../core/config.js';
import type { LedgerEntry } from '../core/ledgerEntry.js';
import { checkStateDir, ensureStateDir, openStateFile } from './stateDir.js';

/*
 * The ledger is written in two steps, so that recording never slows the hook. This module
 * is the first, and loads no SQLite; store/ledger.ts is the second.
 *
 * 1. An entry is one JSON line appended to ledger.jsonl in the state dir: one write(2) with
 *    O_APPEND, so concurrent hooks never interleave within a line
 *    (https://pubs.opengroup.org/onlinepubs/9799919799/functions/write.html, "O_APPEND").
 *    Opening the SQLite store instead would load the native module, open the database,
 *    commit and checkpoint on close: 15 to 35 ms measured per hook call, against a hook of
 *    about 60 ms in all for a command that is not a check.
 * 2. The spool is moved into the store's ledger table by `vouch savings`, or by the writer
 *    that finds it past SPOOL_INGEST_BYTES. It is renamed aside first (new entries go to a
 *    fresh spool), and each renamed segment is inserted in one transaction together with its
 *    name in `meta`, so a crash at any point neither loses nor doubles a segment: a segment
 *    whose name is already in `meta` is only deleted.
 *
 * A crash mid-append leaves at most one torn last line, which is not a whole entry and is
 * dropped. A lost entry costs a statistic, never a decision.
 */

export const SPOOL = 'ledger.jsonl';
/** Past this, the writer moves the spool into the store itself: about 4,000 hook entries. */
export const SPOOL_INGEST_BYTES = 1024 * 1024;
/** Past this (a store that cannot take the spool), entries are dropped rather than grow it further. */
export const SPOOL_MAX_BYTES = 16 * 1024 * 1024;

/**
 * Appends one entry. Never throws: a ledger that cannot be written is skipped. Returns
 * whether the spool has grown past SPOOL_INGEST_BYTES, for the caller to ingest it.
 */
export function appendLedger(stateDir: string, entry: LedgerEntry): boolean {
  try {
    if (!checkStateDir(stateDir)) ensureStateDir(stateDir);
    const fd = openStateFile(join(stateDir, SPOOL), 'append', stateDir);
    try {
      if (fstatSync(fd).size > SPOOL_MAX_BYTES) return true;
      writeSync(fd, JSON.stringify(entry) + '\n');
      return fstatSync(fd).size > SPOOL_INGEST_BYTES;
    } finally {
      closeSync(fd);
    }
  } catch {
    return false;
  }
}

/** The config's "ledger" retention, read leniently from its text: a hook never fails on it. */
export function retentionOf(configText: string | undefined): LedgerRetention | undefined {
  try {
    const ledger = (JSON.parse(configText ?? '') as { ledger?: unknown }).ledger;
    if (typeof ledger !== 'object' || ledger === null) return undefined;
    const { days, rows } = ledger as Record<string, unknown>;
    return {
      ...(Number.isSafeInteger(days) && (days as number) >= 1 ? { days: days as number } : {}),
      ...(Number.isSafeInteger(rows) && (rows as number) >= 100 ? { rows: rows as number } : {}),
    };
  } catch {
    return undefined;
  }
}

/**
 * Records one entry, and moves the spool into the store when it has grown past
 * SPOOL_INGEST_BYTES. Never throws and never fails its caller: the ledger is a record
 * of decisions, not part of them.
 */
export async function recordLedger(stateDir: string, entry: LedgerEntry, retention: LedgerRetention | undefined): Promise<void> {
  if (!appendLedger(stateDir, entry)) return;
  try {
    const { openStore } = await import('./openStore.js');
    const store = openStore(stateDir, { readWhenFull: false });
    try {
      const { ingestLedger } = await import('./ledger.js');
      await ingestLedger(store.db, stateDir, retention);
    } finally {
      store.close();
    }
  } catch {
    // the spool stays; the next writer or `vouch savings` moves it
  }
}
