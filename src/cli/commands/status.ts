import { loadProject } from '../../api/project.js';
import { status } from '../../api/status.js';
import { formatAge, formatDuration, iso, statusJson, table, writeNotices } from '../format.js';
import { writeJson, type CliIo } from '../io.js';
import { parseCommand } from '../options.js';

export const help = `Usage: vouch status [CHECK...] [--json] [--short]

Says, for each check, whether its latest receipt still applies:
  CURRENT     a fresh look at its inputs, tools and definition equals the receipt
  STALE       something changed since; "vouch explain CHECK" says what
  UNVERIFIED  no answer can be had (never run, an input that cannot be observed)
RESULT is the receipt's own outcome (PASS or FAIL), kept apart from freshness.

Options:
  --short            one line per check
  --json             machine-readable (docs/json.md)
  --config FILE      use this config
  --state-dir DIR    where receipts are kept

Examples:
  vouch status
  vouch status typecheck --json

Exit code 0 means answered, whatever the answer; 2 is a usage or config error.
`;

export async function run(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommand('status', argv, { short: { type: 'boolean', default: false } });
  const project = await loadProject({ cwd: io.cwd, config: values.config, stateDir: values['state-dir'] });
  const report = await status(project, positionals, io.env);
  writeNotices(io.stderr, report.notices);
  if (values.json) {
    writeJson(io, {
      schema: 1,
      root: project.root,
      config_path: project.configPath,
      observation: {
        healthy: report.observation.healthy,
        source: report.observation.source,
        observed_at: iso(report.observation.observedAt),
        duration_ms: report.observation.durationMs,
      },
      checks: report.checks.map(statusJson),
    });
    return 0;
  }
  const now = Date.now();
  if (values.short) {
    for (const check of report.checks) {
      const why = check.freshness === 'CURRENT' && check.reuseEligible ? '' : ` ${check.reasons[0]?.code ?? ''}`;
      io.stdout.write(`${check.name} ${check.freshness} ${check.result ?? '-'}${why}`.trimEnd() + '\n');
    }
    return 0;
  }
  const rows = [['CHECK', 'FRESHNESS', 'RESULT', 'LAST RUN', 'TOOK', 'REASON']];
  for (const check of report.checks) {
    const receipt = check.receipt;
    rows.push([
      check.name,
      check.freshness,
      check.result ?? '-',
      receipt ? formatAge(receipt.finishedAt, now) : '-',
      receipt ? formatDuration(receipt.durationMs) : '-',
      check.freshness === 'CURRENT' && check.reuseEligible ? '' : check.reasons.map((r) => r.message).join('; '),
    ]);
  }
  io.stdout.write(table(rows));
  return 0;
}
