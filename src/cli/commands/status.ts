import { loadProject } from '../../api/project.js';
import { ObserverDidNotAnswer, status } from '../../api/status.js';
import type { CheckStatus } from '../../core/decide.js';
import type { CheckDefinition } from '../../core/definition.js';
import type { Workspace } from '../../core/workspace.js';
import { evidenceNoteLines, evidenceText, evidenceWorthShowing, formatAge, formatDuration, tableWithLines, writeNotices } from '../format.js';
import { statusReportJson } from '../../api/reportJson.js';
import { writeJson, type CliIo } from '../io.js';
import { observerChoice, parseCommand, STATUS_OPTIONS } from '../options.js';

export const help = `Usage: vouch status [CHECK...] [--json] [--short] [--sync | --cached] [--no-observer]

Says, for each check, whether its latest receipt still applies:
  CURRENT     a fresh look at its inputs, tools and definition equals the receipt
  STALE       something changed since; "vouch explain CHECK" says what
  UNVERIFIED  no answer can be had (never run, an input that cannot be observed)
RESULT is the receipt's own outcome (PASS or FAIL), kept apart from freshness.

When an observer runs ("vouch start"), it answers from its warm index;
otherwise vouch looks at the inputs directly. Both give the same answer.

Options:
  --short            one line per check
  --sync             (default) the observer first takes in every change made
                     before the question, and rechecks what it has not
                     confirmed since: a decision-grade answer
  --cached           the observer answers from its index as it stands; a write
                     made in the last few milliseconds may not be in it yet
  --no-observer      look at the inputs directly, even when an observer runs
  --json             machine-readable (docs/json.md)
  --config FILE      use this config
  --state-dir DIR    where receipts are kept
  --root DIR         the project root, instead of the config's "root"

Examples:
  vouch status
  vouch status typecheck --json

Exit code 0 means answered, whatever the answer; 2 is a usage or config error.
`;

export function run(argv: string[], io: CliIo): Promise<number> {
  return answer(argv, io, false);
}

/**
 * The same command inside the observer, for a caller (cli/statusServer.ts): answered from the
 * observer's index or not at all (ObserverDidNotAnswer), never by a scan in the observer's process.
 */
export function runServed(argv: string[], io: CliIo): Promise<number> {
  return answer(argv, io, true);
}

async function answer(argv: string[], io: CliIo, served: boolean): Promise<number> {
  const { values, positionals } = parseCommand('status', argv, STATUS_OPTIONS);
  const choice = observerChoice(values);
  if (served && choice.observer === 'off') throw new ObserverDidNotAnswer('--no-observer asks for a direct look');
  const project = await loadProject({ cwd: io.cwd, config: values.config, stateDir: values['state-dir'], root: values.root });
  const report = await status(project, positionals, io.env, served ? { ...choice, observer: 'only' } : { ...choice, ...(io.observerUnavailable !== undefined ? { unavailable: io.observerUnavailable } : {}) });
  writeNotices(io.stderr, report.notices);
  if (values.json) {
    writeJson(io, statusReportJson(project, report));
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
  io.stdout.write(statusTable(report.checks, now, packagesOf(project.definitions, project.workspace)));
  return 0;
}

/**
 * One row per check. An EVIDENCE column appears when some receipt was traced or has notes
 * (a traced check that fell back), and each note follows its check's row on a line of its own.
 */
export function statusTable(unordered: readonly CheckStatus[], now: number, packages: ReadonlyMap<string, string> = new Map()): string {
  const checks = groupedByPackage(unordered, packages);
  const evidence = checks.some((check) => evidenceWorthShowing(check.receipt));
  const rows = [['CHECK', 'FRESHNESS', 'RESULT', 'LAST RUN', 'TOOK', ...(evidence ? ['EVIDENCE'] : []), 'REASON']];
  for (const check of checks) {
    const receipt = check.receipt;
    rows.push([
      check.name,
      check.freshness,
      check.result ?? '-',
      receipt ? formatAge(receipt.finishedAt, now) : '-',
      receipt ? formatDuration(receipt.durationMs) : '-',
      ...(evidence ? [receipt ? evidenceText(receipt) : '-'] : []),
      check.freshness === 'CURRENT' && check.reuseEligible ? '' : check.reasons.map((r) => r.message).join('; '),
    ]);
  }
  const after = checks.map((check) => evidenceNoteLines(check.receipt));
  // A package's checks follow a line naming it; the root's come first, with none.
  const headed = checks.map((check, index) => {
    const group = packages.get(check.name);
    return group !== undefined && (index === 0 || packages.get(checks[index - 1]!.name) !== group) ? group : null;
  });
  return tableWithLines(rows, after).split('\n').reduce<string[]>((lines, line, index) => {
    // Line 0 is the header; each check's row is followed by its notes.
    const row = rowIndex(index, after);
    const head = row === null ? null : headed[row];
    if (head !== null && head !== undefined) lines.push(`${head}:`);
    lines.push(line);
    return lines;
  }, []).join('\n');
}

/** Which check a line of tableWithLines's output is the row of, or null for the header and note lines. */
function rowIndex(line: number, after: readonly (readonly string[])[]): number | null {
  let at = 1;
  for (let row = 0; row < after.length; row += 1) {
    if (at === line) return row;
    at += 1 + after[row]!.length;
  }
  return null;
}

/** Root checks first, as asked; then each package's checks together, packages in the order first met. */
function groupedByPackage(checks: readonly CheckStatus[], packages: ReadonlyMap<string, string>): CheckStatus[] {
  if (packages.size === 0) return [...checks];
  const groups = new Map<string, CheckStatus[]>();
  for (const check of checks) {
    const key = packages.get(check.name) ?? '';
    groups.set(key, [...(groups.get(key) ?? []), check]);
  }
  return [...(groups.get('') ?? []), ...[...groups.entries()].filter(([key]) => key !== '').flatMap(([, group]) => group)];
}

/** Each package check's name, to "NAME (DIR)" of its package. */
export function packagesOf(definitions: readonly CheckDefinition[], workspace: Workspace | null): Map<string, string> {
  const packages = new Map<string, string>();
  for (const definition of definitions) {
    if (definition.package === undefined) continue;
    const name = workspace?.packages.find((pkg) => pkg.dir === definition.package)?.name;
    packages.set(definition.name, name === undefined || name === definition.package ? definition.package : `${name} (${definition.package})`);
  }
  return packages;
}

