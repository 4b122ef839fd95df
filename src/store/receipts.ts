import type Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import { dirname } from 'node:path';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import type { EvidenceEntry } from '../core/evidence.js';
import { parseManifestLines, type InputEntry } from '../core/manifest.js';
import type { Receipt } from '../core/receipt.js';
import { diskFull, isDiskFull } from './diskFull.js';
import { withRecovery } from './openStore.js';

interface ReceiptRow {
  seq: number;
  run_id: string;
  check_name: string;
  definition: string;
  definition_digest: string;
  context: string;
  context_digest: string;
  manifest_digest: string;
  input_count: number;
  result: 'PASS' | 'FAIL';
  exit_code: number | null;
  signal: string | null;
  started_at: number;
  finished_at: number;
  duration_ms: number;
  log_path: string;
  reuse_eligible: number;
  reasons: string;
  evidence: string;
}

function fromRow(row: ReceiptRow): Receipt {
  return {
    runId: row.run_id,
    check: row.check_name,
    definition: JSON.parse(row.definition),
    definitionDigest: row.definition_digest,
    context: JSON.parse(row.context),
    contextDigest: row.context_digest,
    manifestDigest: row.manifest_digest,
    inputCount: row.input_count,
    result: row.result,
    exitCode: row.exit_code,
    signal: row.signal,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    durationMs: row.duration_ms,
    logPath: row.log_path,
    reuseEligible: row.reuse_eligible === 1,
    reasons: JSON.parse(row.reasons),
    evidence: JSON.parse(row.evidence),
  };
}

/**
 * What a receipt's manifest is stored as: a declared manifest's lines (core/manifest.ts
 * entryLine, the bytes its digest hashes; no entry need be made of an installed file the native
 * scan rendered), or entries as JSON (a traced receipt's evidence, and the declared manifests of
 * stores before the lines).
 */
export type StoredManifest = { lines: Buffer } | { entries: readonly InputEntry[] | readonly EvidenceEntry[] };

/**
 * Records a receipt and its manifest in one transaction: a crash leaves either both or neither.
 * Manifests are stored once per digest, compressed, and never removed, so one the store holds
 * already (the same inputs again, an edit reverted) is this receipt's too: `manifest` is asked for
 * only when it is not there. A traced receipt's manifest is its evidence entries.
 */
export function insertReceipt(db: Database.Database, receipt: Receipt, manifest: () => StoredManifest): void {
  let blob: Buffer | null = null;
  try {
    withRecovery(db, (live) => {
      // Asked of the store in use: a damaged one may have been set aside for a fresh one meanwhile.
      const known = live.prepare('SELECT 1 FROM manifests WHERE digest = ?').get(receipt.manifestDigest) !== undefined;
      if (!known) {
        const stored = manifest();
        blob ??= deflateRawSync('lines' in stored ? stored.lines : Buffer.from(JSON.stringify(stored.entries)), { level: 1 });
      }
      const insertManifest = live.prepare('INSERT OR IGNORE INTO manifests (digest, entries) VALUES (?, ?)');
      const insert = live.prepare(`INSERT INTO receipts (
          run_id, check_name, definition, definition_digest, context, context_digest, manifest_digest, input_count,
          result, exit_code, signal, started_at, finished_at, duration_ms, log_path, reuse_eligible, reasons, evidence
        ) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
      live.transaction(() => {
        if (!known) insertManifest.run(receipt.manifestDigest, blob);
        insert.run(
          receipt.runId,
          receipt.check,
          JSON.stringify(receipt.definition),
          receipt.definitionDigest,
          JSON.stringify(receipt.context),
          receipt.contextDigest,
          receipt.manifestDigest,
          receipt.inputCount,
          receipt.result,
          receipt.exitCode,
          receipt.signal,
          receipt.startedAt,
          receipt.finishedAt,
          receipt.durationMs,
          receipt.logPath,
          receipt.reuseEligible ? 1 : 0,
          JSON.stringify(receipt.reasons),
          JSON.stringify(receipt.evidence),
        );
      }).immediate();
    });
  } catch (error) {
    // The transaction rolled back: no half receipt. Said as a full disk, not as a bug.
    if (isDiskFull(error)) throw diskFull(dirname(db.name), error);
    throw error;
  }
}

/** The latest receipt wins: the one recorded last, whatever its result. */
export function latestReceipt(db: Database.Database, check: string): Receipt | null {
  const row = withRecovery(db, (live) => live.prepare('SELECT * FROM receipts WHERE check_name = ? ORDER BY seq DESC LIMIT 1').get(check)) as
    | ReceiptRow
    | undefined;
  return row ? fromRow(row) : null;
}

/** How many of a check's newest receipts an earlier receipt is looked for among: receipts are kept forever, and a look must stay cheap. */
export const EARLIER_RECEIPTS_LOOKED_AT = 1000;

/**
 * The newest receipt of the check whose manifest digest is this one, among its newest
 * EARLIER_RECEIPTS_LOOKED_AT: the receipt that answers for inputs seen before (core/decide.ts
 * decideWithEarlier). Read on the existing (check_name, seq) index, newest first: a few ms at
 * most, where a scan of every receipt of a check run 20,000 times took 40 ms.
 */
export function latestReceiptForInputs(db: Database.Database, check: string, manifestDigest: string): Receipt | null {
  const row = withRecovery(db, (live) =>
    live
      .prepare('SELECT * FROM (SELECT * FROM receipts WHERE check_name = ? ORDER BY seq DESC LIMIT ?) WHERE manifest_digest = ? ORDER BY seq DESC LIMIT 1')
      .get(check, EARLIER_RECEIPTS_LOOKED_AT, manifestDigest),
  ) as ReceiptRow | undefined;
  return row ? fromRow(row) : null;
}

/** How many earlier traced receipts, each with evidence of its own, are looked at again: each look re-reads every path its run touched. */
export const EARLIER_TRACED_LOOKED_AT = 3;

/**
 * A traced check's earlier receipts whose evidence may answer now (core/decide.ts
 * decideWithEarlierTraced): newest first, traced, made on the definition and context digests
 * given (the current ones: no other receipt can be CURRENT; the observer, which cannot digest a
 * context, gives none), one per evidence digest (the
 * newest, which decides for that evidence), leaving out the latest receipt and its evidence,
 * which was just found changed. Among the newest
 * EARLIER_RECEIPTS_LOOKED_AT receipts, at most EARLIER_TRACED_LOOKED_AT.
 */
export function earlierTracedReceipts(db: Database.Database, latest: Receipt, current: { definitionDigest: string; contextDigest: string | null }): Receipt[] {
  const rows = withRecovery(db, (live) =>
    live
      .prepare(
        `SELECT * FROM (SELECT * FROM receipts WHERE check_name = ? ORDER BY seq DESC LIMIT ?)
         WHERE run_id <> ? AND manifest_digest <> ? AND definition_digest = ? AND (? IS NULL OR context_digest = ?) AND json_extract(evidence, '$.mode') = 'traced'
         ORDER BY seq DESC`,
      )
      .all(latest.check, EARLIER_RECEIPTS_LOOKED_AT, latest.runId, latest.manifestDigest, current.definitionDigest, current.contextDigest, current.contextDigest),
  ) as ReceiptRow[];
  const seen = new Set<string>();
  const found: Receipt[] = [];
  for (const row of rows) {
    if (seen.has(row.manifest_digest)) continue;
    seen.add(row.manifest_digest);
    found.push(fromRow(row));
    if (found.length === EARLIER_TRACED_LOOKED_AT) break;
  }
  return found;
}

export function listReceipts(db: Database.Database, check: string | null, limit: number): Receipt[] {
  const rows = withRecovery(db, (live) =>
    check === null
      ? live.prepare('SELECT * FROM receipts ORDER BY seq DESC LIMIT ?').all(limit)
      : live.prepare('SELECT * FROM receipts WHERE check_name = ? ORDER BY seq DESC LIMIT ?').all(check, limit),
  ) as ReceiptRow[];
  return rows.map(fromRow);
}

/**
 * A declared receipt's manifest entries, or null when the store lacks them. Stored lines are
 * taken only if they hash to the digest and parse: a store from elsewhere may hold anything.
 */
export function loadManifest(db: Database.Database, digest: string): InputEntry[] | null {
  const content = storedContent(db, digest);
  if (content === null) return null;
  // JSON entries begin with "[", lines with a path's length.
  if (content[0] === 0x5b) return JSON.parse(content.toString()) as InputEntry[];
  if (createHash('sha256').update(content).digest('hex') !== digest) return null;
  return parseManifestLines(content.toString());
}

/**
 * Stores a declared manifest's lines under their digest, unless the store holds it already; false
 * when it could not be written (a full disk, a busy store). A manifest no receipt names yet is
 * harmless: it is what the next receipt on these inputs names (the observer stores one after a run,
 * before its client records the receipt).
 */
export function storeManifest(db: Database.Database, digest: string, lines: () => Buffer): boolean {
  try {
    return withRecovery(db, (live) => {
      if (live.prepare('SELECT 1 FROM manifests WHERE digest = ?').get(digest) !== undefined) return true;
      live.prepare('INSERT OR IGNORE INTO manifests (digest, entries) VALUES (?, ?)').run(digest, deflateRawSync(lines(), { level: 1 }));
      return true;
    });
  } catch {
    return false;
  }
}

/** A traced receipt's evidence entries (its manifestDigest names them). */
export function loadEvidence(db: Database.Database, digest: string): EvidenceEntry[] | null {
  const content = storedContent(db, digest);
  return content === null || content[0] !== 0x5b ? null : (JSON.parse(content.toString()) as EvidenceEntry[]);
}

function storedContent(db: Database.Database, digest: string): Buffer | null {
  const row = withRecovery(db, (live) => live.prepare('SELECT entries FROM manifests WHERE digest = ?').get(digest)) as { entries: Buffer } | undefined;
  return row ? inflateRawSync(row.entries) : null;
}
