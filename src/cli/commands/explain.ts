import { explain } from '../../api/explain.js';
import { loadProject, type Project } from '../../api/project.js';
import { evidenceChangeLines } from '../../core/changeText.js';
import { describeContextChange } from '../../core/diff.js';
import { VouchError } from '../../core/errors.js';
import { inputChangeLines } from '../explainChanges.js';
import { formatAge, writeNotices } from '../format.js';
import { explanationJson } from '../../api/reportJson.js';
import { writeJson, type CliIo } from '../io.js';
import { parseCommand } from '../options.js';

export const help = `Usage: vouch explain CHECK [--all] [--json] [--no-observer]
       vouch explain CHECK --inputs [--all] [--json]

Says what changed since CHECK's latest receipt: inputs added, removed or
modified (with old and new digests), mode and installed-file identity changes,
context changes (environment variables by name only), definition changes, and
every reason when the answer is UNVERIFIED. The observer, when one runs,
supplies the current inputs (--no-observer looks at them directly).

Many changes are summarised: source changes are listed up to 20, installed
changes are counted per package (after a reinstall, one line says that every
installed file changed identity). --all lists every change; --json always
gives the full list.

A traced receipt (a check with "mode": "traced") is checked against what its
run read, listed and looked up: each such path is looked at again, and the
ones that differ are named ("src/a.ts: content changed"), installed ones
counted per package when there are many. The receipt's notes say how it was
made (e.g. trace-unavailable: the declared inputs stood in).

--inputs says what the latest receipt depends on, as it recorded it: source
files by top-level directory, installed files by package, its context (argv,
executable, Node, package manager, environment variable names, the scripts it
runs) and the inputs and installed globs it declared. For a traced receipt:
files read (by top-level directory), directories listed, paths looked up and
found, paths looked up and absent, installed packages, paths outside the root,
and the run's own (paths it wrote, then used). Nothing is observed.
--all lists every path; --json gives them all. Without a receipt, nothing is
known, and it says so.

Options:
  --all          list every change (or, with --inputs, every path)
  --inputs       what the latest receipt depends on, not what changed
  --json         the full answer as JSON (docs/json.md)
  --no-observer  look at the inputs directly, not through the observer

Examples:
  vouch explain typecheck
  vouch explain test --all
  vouch explain test --json
  vouch explain test --inputs
  vouch explain test --inputs --json
`;

export async function run(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommand('explain', argv, {
    'no-observer': { type: 'boolean', default: false },
    inputs: { type: 'boolean', default: false },
    all: { type: 'boolean', default: false },
  });
  if (positionals.length !== 1) throw new VouchError('usage', 'explain takes exactly one check name, e.g. "vouch explain typecheck"');
  const project = await loadProject({ cwd: io.cwd, config: values.config, stateDir: values['state-dir'], root: values.root });
  if (values.inputs) return runInputs(project, positionals[0] ?? '', values, io);
  const result = await explain(project, positionals[0] ?? '', io.env, values['no-observer'] ? 'off' : 'auto');
  writeNotices(io.stderr, result.notices);
  if (values.json) {
    writeJson(io, explanationJson(result));
    return 0;
  }
  const { status } = result;
  const out: string[] = [];
  const receipt = status.receipt;
  out.push(`${status.name}: ${status.freshness}, result ${status.result ?? '-'}${receipt ? `, receipt ${receipt.runId} from ${formatAge(receipt.finishedAt)}` : ''}`);
  for (const r of status.reasons) out.push(`  ${r.code}: ${r.message}`);
  const evidence = result.evidence;
  if (evidence && evidence.notes.length > 0) {
    out.push(`notes (how receipt ${receipt?.runId ?? '-'} was made):`);
    for (const note of evidence.notes) out.push(`  ${note.code}: ${note.message}`);
  }
  if (result.definitionChanges.length > 0) {
    out.push('definition:');
    for (const c of result.definitionChanges) out.push(`  ${c.field}: ${JSON.stringify(c.old)} -> ${JSON.stringify(c.new)}`);
  }
  if (result.contextChanges.length > 0) {
    out.push('context:');
    for (const c of result.contextChanges) out.push(`  ${describeContextChange(c)}`);
  }
  if (result.inputChanges.length > 0) {
    out.push('inputs:');
    for (const line of inputChangeLines(result.inputChanges, result.installedCounts, values.all)) out.push(`  ${line}`);
  }
  if (evidence && evidence.changes.length > 0) {
    out.push('inputs:');
    for (const line of evidenceChangeLines(evidence.changes, evidence.entriesPerPackage, values.all)) out.push(`  ${line}`);
  }
  if (status.freshness === 'CURRENT' && result.inputChanges.length === 0 && (evidence?.changes.length ?? 0) === 0) out.push('nothing changed since the receipt');
  io.stdout.write(out.join('\n') + '\n');
  return 0;
}

async function runInputs(project: Project, name: string, values: { json: boolean; all: boolean }, io: CliIo): Promise<number> {
  const [{ explainInputs }, { explainInputsJson }, { inputsText }] = await Promise.all([
    import('../../api/explainInputs.js'),
    import('../../api/explainInputsJson.js'),
    import('../explainInputsText.js'),
  ]);
  const report = await explainInputs(project, name, io.env);
  writeNotices(io.stderr, report.notices);
  if (values.json) writeJson(io, explainInputsJson(report, project.stateDir));
  else io.stdout.write(inputsText(report, values.all).join('\n') + '\n');
  return 0;
}
