import { log } from '../../api/log.js';
import { loadProject } from '../../api/project.js';
import { VouchError } from '../../core/errors.js';
import type { Receipt } from '../../core/receipt.js';
import { evidenceNoteLines, evidenceText, evidenceWorthShowing, formatAge, formatDuration, tableWithLines, writeNotices } from '../format.js';
import { logJson } from '../../api/reportJson.js';
import { writeJson, type CliIo } from '../io.js';
import { parseCommand } from '../options.js';

export const help = `Usage: vouch log [CHECK] [--limit N] [--json]

Lists receipts, newest first, failures included.

Options:
  --limit N          at most N receipts (default 20; a number larger than
                     2147483647 is taken as that, i.e. all of them)
  --json             machine-readable (docs/json.md)
  --config FILE      use this config
  --state-dir DIR    where receipts are kept
  --root DIR         the project root, instead of the config's "root"

Examples:
  vouch log
  vouch log test --limit 5 --json
`;

/** SQLite's LIMIT takes a 64-bit integer; a JavaScript number above 2^53 would reach it as a float. */
const MAX_LIMIT = 2 ** 31 - 1;

export async function run(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommand('log', argv, { limit: { type: 'string', default: '20' } });
  if (positionals.length > 1) throw new VouchError('usage', 'log takes at most one check name; see "vouch log --help"');
  // Any count beyond the store's receipts lists them all, so a huge one is clamped rather than refused.
  const limit = /^\s*\d+\s*$/.test(values.limit) ? Math.min(Number(values.limit), MAX_LIMIT) : NaN;
  if (!(limit >= 1)) throw new VouchError('usage', `--limit needs a whole number of at least 1, not "${values.limit}"`);
  const project = await loadProject({ cwd: io.cwd, config: values.config, stateDir: values['state-dir'], root: values.root });
  const { receipts, notices } = await log(project, positionals[0] ?? null, limit);
  writeNotices(io.stderr, notices);
  if (values.json) {
    writeJson(io, logJson(receipts, project.stateDir, notices));
    return 0;
  }
  if (receipts.length === 0) {
    io.stdout.write('no receipts yet; "vouch run" records one\n');
    return 0;
  }
  io.stdout.write(logTable(receipts, Date.now()));
  return 0;
}

/** One row per receipt; EVIDENCE and the notes as in status, when some receipt was traced or has notes. */
export function logTable(receipts: readonly Receipt[], now: number): string {
  const evidence = receipts.some(evidenceWorthShowing);
  const rows = [['RUN', 'CHECK', 'RESULT', 'FINISHED', 'TOOK', 'EXIT', ...(evidence ? ['EVIDENCE'] : []), 'REUSABLE']];
  for (const receipt of receipts) {
    rows.push([
      receipt.runId,
      receipt.check,
      receipt.result,
      formatAge(receipt.finishedAt, now),
      formatDuration(receipt.durationMs),
      receipt.signal ?? String(receipt.exitCode),
      ...(evidence ? [evidenceText(receipt)] : []),
      receipt.reuseEligible ? 'yes' : `no: ${receipt.reasons.map((r) => r.code).join(', ') || 'failed'}`,
    ]);
  }
  return tableWithLines(rows, receipts.map(evidenceNoteLines));
}

