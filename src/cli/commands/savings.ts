import { loadProject } from '../../api/project.js';
import { VouchError } from '../../core/errors.js';
import { formatDuration } from '../../core/humanTime.js';
import type { SavingsDocument } from '../../core/json/savings.js';
import type { Avoided, SavingsReport } from '../../core/savings.js';
import { writeNotices } from '../format.js';
import { writeJson, type CliIo } from '../io.js';
import { parseCommand } from '../options.js';

export const help = `Usage: vouch savings [--since 7d] [--json]

Reports from the ledger, where the agent hooks record every decision and
"vouch run --if-due" and the MCP run tool record every skip (docs/hooks.md,
"The ledger"), over a period ending now:

  commands   the Bash commands the hooks saw, and the checks they matched
  decisions  denies, rewrites and passes; the checks --if-due skipped
  avoided    the check time avoided, by check and by session: each receipt's
             duration minus the decision's own time, never below zero
  shadow     in shadow mode, what the hooks decided and would have avoided
  forced     commands run with VOUCH_FORCE=1 that matched a check
  reruns     runs on exactly the inputs of an earlier reusable receipt; one
             whose result differs from that receipt's is flagged as a bug

Options:
  --since N  the period: a number and m (minutes), h (hours) or d (days);
             default 7d
  --json     machine-readable (docs/json.md, "vouch savings --json")
  --config FILE, --state-dir DIR, --root DIR   as for every command

Examples:
  vouch savings
  vouch savings --since 24h
  vouch savings --since 30d --json

Exit code: 0, also when a rerun differed (the report says so); 2 a usage or config error.
`;

const UNITS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000 };

/** "30m", "24h", "7d": milliseconds. Up to ten years, which no ledger keeps. */
export function parseSince(text: string): number {
  const match = /^(\d{1,7})([mhd])$/.exec(text.trim());
  const ms = match ? Number(match[1]) * UNITS[match[2]!]! : NaN;
  if (!Number.isFinite(ms) || ms <= 0 || ms > 3650 * UNITS.d!) {
    throw new VouchError('usage', `--since takes a number and m, h or d, such as 30m, 24h or 7d (at most 3650d), not "${text}". See "vouch savings --help".`);
  }
  return ms;
}

export async function run(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommand('savings', argv, { since: { type: 'string', default: '7d' } });
  if (positionals.length > 0) throw new VouchError('usage', `vouch savings takes no arguments, but got ${positionals.map((p) => `"${p}"`).join(' ')}. See "vouch savings --help".`);
  const period = parseSince(values.since as string);
  const project = await loadProject({ cwd: io.cwd, config: values.config, stateDir: values['state-dir'], root: values.root });
  const { savings } = await import('../../api/savings.js');
  const now = Date.now();
  const { report, notices } = await savings(project, now - period, now);
  writeNotices(io.stderr, notices);
  if (values.json) writeJson(io, savingsJson(report, notices));
  else io.stdout.write(savingsText(report, values.since as string));
  return 0;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function avoidedJson(avoided: Avoided) {
  return {
    decisions: avoided.decisions,
    ms: avoided.ms,
    by_check: avoided.byCheck.map((row) => ({ check: row.check, count: row.count, ms: row.ms })),
    by_session: avoided.bySession.map((row) => ({ session: row.session, host: row.host, count: row.count, ms: row.ms })),
  };
}

export function savingsJson(report: SavingsReport, notices: string[]): SavingsDocument {
  return {
    schema: 1,
    since: iso(report.since),
    until: iso(report.until),
    commands: { seen: report.commands.seen, matched: report.commands.matched, checks_matched: report.commands.checksMatched, shadow: report.commands.shadow },
    decisions: { ...report.decisions },
    avoided: avoidedJson(report.avoided),
    shadow: { decisions: { ...report.shadowDecisions }, would_avoid: avoidedJson(report.wouldAvoid) },
    forced: {
      count: report.forced.count,
      by_check: report.forced.byCheck.map((row) => ({ check: row.check, count: row.count })),
      latest: report.forced.latest.map((row) => ({ at: iso(row.at), host: row.host, session: row.session, command: row.command, checks: row.checks })),
    },
    reruns: report.reruns.map((rerun) => ({
      check: rerun.check,
      run_id: rerun.runId,
      started_at: iso(rerun.startedAt),
      result: rerun.result,
      exit_code: rerun.exitCode,
      previous_run_id: rerun.previousRunId,
      previous_result: rerun.previousResult,
      previous_exit_code: rerun.previousExitCode,
      differs: rerun.differs,
      after_force: rerun.afterForce,
    })),
    differing: report.differing,
    notices,
  };
}

/** How many to list per table in text; --json has them all. */
const LISTED = 10;

export function savingsText(report: SavingsReport, since: string): string {
  const lines: string[] = [];
  // First, before anything else: a differing rerun means a skip could have been wrong.
  for (const rerun of report.reruns.filter((r) => r.differs)) {
    lines.push(
      `BUG: ${rerun.check} run ${rerun.runId} ${rerun.result} (exit ${rerun.exitCode ?? 'signal'}) on the same inputs as run ${rerun.previousRunId}, which was ${rerun.previousResult} (exit ${rerun.previousExitCode ?? 'signal'}): a flaky check, or an input vouch does not see. Please report it, with "vouch explain ${rerun.check} --inputs".`,
    );
  }
  if (lines.length > 0) lines.push('');
  lines.push(`Since ${iso(report.since)} (${since}):`);
  const c = report.commands;
  lines.push(`  commands seen by the hooks: ${c.seen}${c.shadow > 0 ? ` (${c.shadow} in shadow mode)` : ''}; ${c.matched} matched a check (${c.checksMatched} check${c.checksMatched === 1 ? '' : 's'} in all)`);
  const d = report.decisions;
  lines.push(`  enforce mode: ${d.deny} denied, ${d.rewrite} rewritten, ${d.pass} run as typed; ${d.skip} check${d.skip === 1 ? '' : 's'} skipped by --if-due`);
  lines.push(`  check time avoided: ${formatDuration(report.avoided.ms)} over ${report.avoided.decisions} decision${report.avoided.decisions === 1 ? '' : 's'}`);
  lines.push(...avoidedLines(report.avoided));
  const s = report.shadowDecisions;
  if (s.deny + s.rewrite + s.pass > 0) {
    lines.push(`  shadow mode: would have denied ${s.deny} and rewritten ${s.rewrite}; ${s.pass} would have run as typed`);
    lines.push(`  check time shadow mode would have avoided: ${formatDuration(report.wouldAvoid.ms)}`);
    lines.push(...avoidedLines(report.wouldAvoid));
  }
  const f = report.forced;
  lines.push(`  forced (VOUCH_FORCE=1): ${f.count} command${f.count === 1 ? '' : 's'}${f.byCheck.length > 0 ? ` (${f.byCheck.slice(0, LISTED).map((row) => `${row.check} ${row.count}`).join(', ')})` : ''}`);
  const same = report.reruns.length - report.differing;
  lines.push(
    `  reruns on unchanged inputs: ${report.reruns.length}, ${same} with the same result as the receipt that was CURRENT${report.differing > 0 ? `, ${report.differing} DIFFERENT (see BUG above)` : ''}`,
  );
  return lines.join('\n') + '\n';
}

function avoidedLines(avoided: Avoided): string[] {
  const lines: string[] = [];
  if (avoided.byCheck.length > 0) {
    lines.push('    by check:');
    for (const row of avoided.byCheck.slice(0, LISTED)) lines.push(`      ${row.check}: ${formatDuration(row.ms)} (${row.count} run${row.count === 1 ? '' : 's'} avoided)`);
  }
  if (avoided.bySession.length > 0) {
    lines.push('    by session:');
    for (const row of avoided.bySession.slice(0, LISTED)) {
      const who = row.session === null ? 'no session (vouch run, MCP)' : `${row.host ?? ''} ${row.session}`.trim();
      lines.push(`      ${who}: ${formatDuration(row.ms)} (${row.count} decision${row.count === 1 ? '' : 's'})`);
    }
  }
  return lines;
}
