import type { InputsReport } from '../api/explainInputs.js';
import { describeScriptBody } from '../core/scriptContext.js';
import { groupInputs, type InputGroup } from '../core/inputGroups.js';
import { formatCount, plural } from '../core/changeText.js';
import { formatAge } from './format.js';

/** How many directories or packages a group names before counting the rest. */
const LISTED_BUCKETS = 10;

/** `vouch explain CHECK --inputs`, for people: counts and the largest buckets; `all` adds every path. */
export function inputsText(report: InputsReport, all: boolean): string[] {
  const name = report.definition.name;
  const { receipt } = report;
  if (receipt === null) {
    return [`${name}: no receipt yet, so nothing is known about what it depends on ("vouch run ${name}" makes one)`];
  }
  const out = [`${name}: inputs of receipt ${receipt.runId} (${receipt.result}, from ${formatAge(receipt.finishedAt)}), as declared (globs observed when it ran)`];
  if (report.entries === null) {
    out.push('  its input manifest could not be read: what it depends on is not known');
  } else {
    for (const group of groupInputs(report.entries)) out.push(...groupLines(group, all));
  }
  const { context, definition } = receipt;
  out.push('context:');
  out.push(`  argv: ${JSON.stringify(context.argv)}`);
  if (context.executable) out.push(`  executable: ${context.executable.path}`);
  out.push(`  node: ${context.node.version}${context.node.executable ? ` (${context.node.executable.path})` : ''}`);
  out.push(`  platform: ${context.platform} ${context.arch}`);
  if (context.packageManager) out.push(`  package manager: ${context.packageManager.name}${context.packageManager.version ? ` ${context.packageManager.version}` : ''}`);
  const env = Object.keys(context.env).sort();
  out.push(`  env (names only): ${env.length === 0 ? '(none)' : env.map((key) => `${key}${context.env[key] === null ? ' (unset)' : ''}`).join(', ')}`);
  const scripts = context.scripts ?? [];
  if (scripts.length > 0) {
    out.push('scripts:');
    for (const script of scripts) out.push(`  ${script.name}: ${describeScriptBody(script)}`);
  }
  out.push('declared:');
  out.push(`  inputs: ${definition.inputs.join(' ')}`);
  out.push(`  installed: ${definition.installed.length === 0 ? '(none)' : definition.installed.join(' ')}`);
  if (!all && report.entries !== null && report.entries.length > 0) out.push('(--all lists every path; --json gives them all)');
  return out;
}

function groupLines(group: InputGroup, all: boolean): string[] {
  const what = group.kind === 'source' ? 'source' : 'installed';
  const header =
    group.kind === 'installed'
      ? `${what}: ${plural(group.count, 'file')} in ${plural(group.buckets.length, 'package')}`
      : `${what}: ${plural(group.count, 'file')} in ${plural(group.buckets.length, 'directory', 'directories')}`;
  const out = [header];
  const width = Math.max(0, ...group.buckets.slice(0, LISTED_BUCKETS).map((bucket) => bucket.name.length));
  for (const bucket of group.buckets.slice(0, LISTED_BUCKETS)) out.push(`  ${bucket.name.padEnd(width)}  ${formatCount(bucket.count)}`);
  const more = group.buckets.length - LISTED_BUCKETS;
  if (more > 0) out.push(`  … and ${plural(more, group.kind === 'installed' ? 'more package' : 'more directory', group.kind === 'installed' ? 'more packages' : 'more directories')}`);
  if (all) for (const path of group.paths) out.push(`    ${path}`);
  return out;
}
