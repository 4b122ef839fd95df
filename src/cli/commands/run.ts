import { loadProject } from '../../api/project.js';
import { run as runChecks } from '../../api/run.js';
import { evidenceNoteLines, evidenceText, evidenceWorthShowing, formatAge, formatDuration, writeNotices } from '../format.js';
import { runReportJson } from '../../api/reportJson.js';
import { writeJson, type CliIo } from '../io.js';
import { parseCommand } from '../options.js';
import { VouchError } from '../../core/errors.js';
import { replayHeader, type Replay } from '../../core/replay.js';
import { savedMs } from '../../core/runSummary.js';

export const help = `Usage: vouch run [CHECK...] [--if-due [--replay]] [--json] [--no-observer] [--concurrency N]

Runs checks (all of them, in config order, when none is named) and records a
receipt of each: what it read, how it ran, and how it ended. Output streams
live and is kept in .vouch/logs/RUN_ID.log.

In a workspace, a name without "#" also runs every package check of that name:
"vouch run test" runs "test" and every "PACKAGE#test". Package checks run side
by side, each after those of the packages it depends on; the output of each is
shown whole when it ends, never interleaved. Root checks run one at a time.

Options:
  --if-due           skip a check whose receipt is CURRENT, PASS and reusable
                     (decided by the observer when one runs); a skip prints the
                     receipt's summary: result, exit code, duration, run id, and
                     the test or error counts its tools printed, and is
                     recorded in the ledger ("vouch savings" reports it)
  --replay           with --if-due, a skip also prints the last 40 lines of the
                     skipped run's stored output (at most 8 KB and 200 lines)
  --no-observer      decide --if-due by looking at the inputs directly
  --concurrency N    package checks run at once (default: the core count)
  --json             machine-readable report on stdout; the checks' own output goes to stderr
  --config FILE      use this config
  --state-dir DIR    where receipts are kept
  --root DIR         the project root, instead of the config's "root"

Examples:
  vouch run
  vouch run typecheck test --if-due
  vouch run test                    # every package's test, in dependency order
  vouch run @scope/a#test --if-due

Exit code: the first failing check's own code (128+N when killed by signal N),
0 when every check passed or was skipped; 2 is a usage or config error; 74 means
the disk holding the state dir was full before a check could start.
`;

export async function run(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommand('run', argv, {
    'if-due': { type: 'boolean', default: false },
    'no-observer': { type: 'boolean', default: false },
    replay: { type: 'boolean', default: false },
    concurrency: { type: 'string' },
    // Not in the help: from the native client (native/hookClient.c) when it found no resident server
    // for this environment; one is started for the next run.
    serve: { type: 'string' },
  });
  if (values.replay && !values['if-due']) throw new VouchError('usage', '--replay shows what a skip relied on, so it needs --if-due');
  const concurrency = values.concurrency === undefined ? undefined : Number(values.concurrency);
  if (concurrency !== undefined && !(Number.isInteger(concurrency) && concurrency >= 1 && concurrency <= 256)) {
    throw new VouchError('usage', `--concurrency takes a whole number from 1 to 256, not ${JSON.stringify(values.concurrency)}`);
  }
  const project = await loadProject({ cwd: io.cwd, config: values.config, stateDir: values['state-dir'], root: values.root });
  const say = (line: string) => io.stderr.write(`vouch: ${line}\n`);
  const report = await runChecks(project, {
    names: positionals,
    ifDue: values['if-due'] === true,
    ...(concurrency !== undefined ? { concurrency } : {}),
    observer: values['no-observer'] ? 'off' : 'auto',
    // A skip's own time counts from the process start: Node's start-up is part of what it cost.
    startedAt: io.startedAt ?? performance.timeOrigin,
    ...(io.spawnCheck ? { spawn: io.spawnCheck } : {}),
    replay: values.replay === true,
    env: io.env,
    // With --json, stdout carries only the report.
    stdout: values.json ? io.stderr : io.stdout,
    stderr: io.stderr,
    onWait: (holder) =>
      say(`waiting for ${holder.check}: run ${holder.runId} (pid ${holder.pid}) has held its lock since ${formatAge(holder.startedAt)}`),
    onStart: (check, runId, argv) => say(`running ${check}: ${argv.join(' ')} (run ${runId})`),
    onSkip: (status, elapsedMs, stored) => {
      const receipt = status.receipt;
      if (!receipt) return;
      // Saved: what the run took, less what this skip took itself (never below zero).
      const lines = [`skipped ${status.name}: CURRENT PASS, receipt ${receipt.runId} from ${formatAge(receipt.finishedAt)}, saved ${formatDuration(savedMs(receipt.durationMs, elapsedMs))}`];
      if (stored) lines.push(stored.summary);
      const text = lines.map((line) => `vouch: ${line}\n`).join('');
      const out = values.json ? io.stderr : io.stdout;
      out.write(text);
      if (stored?.replay) out.write(replayText(stored.replay, receipt.runId));
      else if (values.replay && stored && !stored.logRead) out.write(`vouch: the stored output of run ${receipt.runId} could not be read\n`);
    },
    onFinish: (receipt, error) => {
      const how = receipt.signal ? `killed by ${receipt.signal}` : `exit ${receipt.exitCode}`;
      const reuse = receipt.reuseEligible ? '' : ` (not reusable: ${receipt.reasons.map((r) => r.message).join('; ')})`;
      const evidence = evidenceWorthShowing(receipt) ? ` (${evidenceText(receipt)})` : '';
      say(`${receipt.check} ${receipt.result} (${how}) in ${formatDuration(receipt.durationMs)}, receipt ${receipt.runId}${evidence}${reuse}`);
      for (const note of evidenceNoteLines(receipt)) say(`  ${note}`);
      if (error) say(`${error.message} [${error.code}]`);
    },
  });
  writeNotices(io.stderr, report.notices);
  if (values.json) {
    writeJson(io, runReportJson(report, project.stateDir));
  }
  if (values.serve !== undefined) (await import('../../agents/startHookServer.js')).startHookServer(values.serve, io.env, process.argv[1]);
  return report.exitCode;
}


/** A replay as the CLI prints it: its header and notes, then the stored lines between markers. */
function replayText(replay: Replay, runId: string): string {
  const lines = [`vouch: ${replayHeader(replay)}`, ...replay.notes.map((note) => `vouch: (note: ${note})`), `--- output of run ${runId} ---`];
  const body = replay.text === '' ? '' : replay.text.endsWith('\n') ? replay.text : `${replay.text}\n`;
  return `${lines.join('\n')}\n${body}--- end of output ---\n`;
}
