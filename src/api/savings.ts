import type Database from 'better-sqlite3';
import { summarizeSavings, type Rerun, type SavingsReport } from '../core/savings.js';
import { ingestLedger, readLedger } from '../store/ledger.js';
import { openStore, readConsistently, withRecovery } from '../store/openStore.js';
import type { Project } from './project.js';

export interface SavingsResult {
  report: SavingsReport;
  notices: string[];
}

/**
 * The savings report over [since, now]: the spool is moved into the ledger first
 * (store/ledgerSpool.ts), then the ledger and the receipts are read from one file.
 */
export async function savings(project: Project, since: number, now: number = Date.now()): Promise<SavingsResult> {
  const store = openStore(project.stateDir);
  try {
    if (store.writable) {
      try {
        await ingestLedger(store.db, project.stateDir, project.config.ledger);
      } catch (error) {
        // The report still comes from what the table holds; the spool waits for the next try.
        store.notices.push(`the ledger spool could not be moved into the store (${(error as Error).message}); entries since the last report may be missing`);
      }
    }
    const { entries, reruns } = readConsistently(store.db, () => ({ entries: readLedger(store.db, since), reruns: rerunsSince(store.db, since) }));
    return { report: summarizeSavings(entries, reruns, since, now), notices: store.notices };
  } finally {
    store.close();
  }
}

interface ReceiptRow {
  seq: number;
  run_id: string;
  check_name: string;
  definition_digest: string;
  context_digest: string;
  manifest_digest: string;
  result: 'PASS' | 'FAIL';
  exit_code: number | null;
  started_at: number;
}

/**
 * A receipt whose only reason not to be reused is its own failure: nothing moved while it ran,
 * so its result is the answer for its inputs, PASS or FAIL (a CURRENT FAIL answers too).
 */
const SOUND = "(reuse_eligible = 1 OR NOT EXISTS (SELECT 1 FROM json_each(reasons) WHERE json_extract(value, '$.code') IS NOT 'failed'))";

/**
 * Receipts since `since` whose check had already run, soundly, on the same definition,
 * context and inputs (equal digests): the earlier receipt was CURRENT when this run
 * started, so the two results must agree. The latest such earlier receipt is the one
 * compared, as an edit and its revert make an older receipt current again.
 */
function rerunsSince(db: Database.Database, since: number): Rerun[] {
  return withRecovery(db, (live) => {
    const recent = live
      .prepare(
        `SELECT seq, run_id, check_name, definition_digest, context_digest, manifest_digest, result, exit_code, started_at FROM receipts WHERE started_at >= ? AND ${SOUND} ORDER BY seq`,
      )
      .all(since) as ReceiptRow[];
    const earlier = live.prepare(
      `SELECT run_id, result, exit_code FROM receipts WHERE check_name = ? AND seq < ? AND definition_digest = ? AND context_digest = ? AND manifest_digest = ? AND ${SOUND} ORDER BY seq DESC LIMIT 1`,
    );
    const reruns: Rerun[] = [];
    for (const row of recent) {
      const previous = earlier.get(row.check_name, row.seq, row.definition_digest, row.context_digest, row.manifest_digest) as
        | { run_id: string; result: 'PASS' | 'FAIL'; exit_code: number | null }
        | undefined;
      if (!previous) continue;
      reruns.push({
        check: row.check_name,
        runId: row.run_id,
        startedAt: row.started_at,
        result: row.result,
        exitCode: row.exit_code,
        previousRunId: previous.run_id,
        previousResult: previous.result,
        previousExitCode: previous.exit_code,
      });
    }
    return reruns;
  });
}
