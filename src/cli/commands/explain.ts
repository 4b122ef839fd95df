import { explain } from '../../api/explain.js';
import { loadProject } from '../../api/project.js';
import { describeContextChange, type InputChange } from '../../core/diff.js';
import { VouchError } from '../../core/errors.js';
import { formatAge, writeNotices } from '../format.js';
import { explanationJson } from '../../api/reportJson.js';
import { writeJson, type CliIo } from '../io.js';
import { parseCommand } from '../options.js';

export const help = `Usage: vouch explain CHECK [--json] [--no-observer]

Says what changed since CHECK's latest receipt: inputs added, removed or
modified (with old and new digests), mode and installed-file identity changes,
context changes (environment variables by name only), definition changes, and
every reason when the answer is UNVERIFIED. The observer, when one runs,
supplies the current inputs (--no-observer looks at them directly).

Examples:
  vouch explain typecheck
  vouch explain test --json
`;

export async function run(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommand('explain', argv, { 'no-observer': { type: 'boolean', default: false } });
  if (positionals.length !== 1) throw new VouchError('usage', 'explain takes exactly one check name, e.g. "vouch explain typecheck"');
  const project = await loadProject({ cwd: io.cwd, config: values.config, stateDir: values['state-dir'], root: values.root });
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
    for (const c of result.inputChanges) out.push(`  ${describe(c)}`);
  }
  if (status.freshness === 'CURRENT' && result.inputChanges.length === 0) out.push('nothing changed since the receipt');
  io.stdout.write(out.join('\n') + '\n');
  return 0;
}

const short = (digest: string | undefined) => (digest ? digest.slice(0, 12) : '-');

function describe(change: InputChange): string {
  switch (change.change) {
    case 'added':
      return `added     ${change.path}`;
    case 'removed':
      return `removed   ${change.path}`;
    case 'modified':
      return change.old.type === 'symlink'
        ? `modified  ${change.path} (link ${change.old.target} -> ${change.new.target})`
        : `modified  ${change.path} (${short(change.old.digest)} -> ${short(change.new.digest)})`;
    case 'mode':
      return `mode      ${change.path} (executable ${change.old.executable} -> ${change.new.executable})`;
    case 'identity':
      return `identity  ${change.path} (installed; ${change.fields.join(', ')} changed)`;
    case 'type':
      return `type      ${change.path} (${change.old.type} -> ${change.new.type})`;
  }
}

