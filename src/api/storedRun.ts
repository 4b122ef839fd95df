import { replayOutput, type Replay } from '../core/replay.js';
import type { Receipt } from '../core/receipt.js';
import { summaryLine, toolCounts, type ToolCount } from '../core/runSummary.js';
import { readStoredLog } from '../store/storedLog.js';

/** What a skip says about the run it relied on: the summary line, the counts its tools printed, and its output when asked. */
export interface StoredRun {
  summary: string;
  counts: ToolCount[];
  /** The last 40 lines of its stored output, bounded (core/replay.ts); null when not asked for, or the log cannot be read. */
  replay: Replay | null;
  /** Whether the stored log could be read. */
  logRead: boolean;
}

export function storedRunOf(stateDir: string, receipt: Receipt, withReplay: boolean, now = Date.now()): StoredRun {
  const log = readStoredLog(stateDir, receipt.logPath, 'end');
  const counts = log ? toolCounts(Buffer.from(log.bytes.buffer, log.bytes.byteOffset, log.bytes.byteLength).toString('utf8')) : [];
  const summary = summaryLine(
    { check: receipt.check, result: receipt.result, exitCode: receipt.exitCode, signal: receipt.signal, durationMs: receipt.durationMs, finishedAt: receipt.finishedAt, runId: receipt.runId },
    counts,
    now,
  );
  return { summary, counts, replay: withReplay && log ? replayOutput(log, null, true) : null, logRead: log !== null };
}
