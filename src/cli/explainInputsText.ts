import { reportGroups, type InputsReport } from '../api/explainInputs.js';
import { describeScriptBody } from '../core/scriptContext.js';
import type { InputGroup } from '../core/inputGroups.js';
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
  const how = report.mode === 'traced' ? 'as traced (what its run read, listed and looked up)' : 'as declared (globs observed when it ran)';
  const out = [`${name}: inputs of receipt ${receipt.runId} (${receipt.result}, from ${formatAge(receipt.finishedAt)}), ${how}`];
  const groups = reportGroups(report);
  if (groups === null) {
    out.push(`  its ${report.mode === 'traced' ? 'evidence' : 'input manifest'} could not be read: what it depends on is not known`);
  } else {
    // A traced receipt has seven kinds, most of them often empty: only those it has are shown.
    for (const group of groups) if (report.mode === 'declared' || group.count > 0) out.push(...groupLines(group, all, report.mode === 'traced'));
  }
  const notes = receipt.evidence.notes;
  if (notes.length > 0) {
    out.push('notes:');
    for (const note of notes) out.push(`  ${note.code}: ${note.message}`);
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
  if (!all && groups !== null && groups.some((group) => group.count > 0)) out.push('(--all lists every path; --json gives them all)');
  return out;
}

/** What each group holds, and what its paths are called. */
const GROUP_WORDS: Record<InputGroup['kind'], { title: string; one: string; many?: string }> = {
  source: { title: 'source', one: 'file' },
  installed: { title: 'installed', one: 'file' },
  read: { title: 'read', one: 'file' },
  listed: { title: 'listed', one: 'directory', many: 'directories' },
  found: { title: 'looked up, found', one: 'path' },
  absent: { title: 'looked up, absent', one: 'path' },
  outside: { title: 'outside the root', one: 'path' },
  own: { title: 'its own (written by the run)', one: 'path' },
};

function groupLines(group: InputGroup, all: boolean, traced = false): string[] {
  const words = GROUP_WORDS[group.kind];
  // A traced receipt's installed paths are files read, directories listed and lookups alike.
  const one = traced && group.kind === 'installed' ? 'path' : words.one;
  const header =
    group.by === 'package'
      ? `${words.title}: ${plural(group.count, one, words.many)} in ${plural(group.buckets.length, 'package')}`
      : `${words.title}: ${plural(group.count, one, words.many)} in ${plural(group.buckets.length, 'directory', 'directories')}`;
  const out = [header];
  const width = Math.max(0, ...group.buckets.slice(0, LISTED_BUCKETS).map((bucket) => bucket.name.length));
  for (const bucket of group.buckets.slice(0, LISTED_BUCKETS)) out.push(`  ${bucket.name.padEnd(width)}  ${formatCount(bucket.count)}`);
  const more = group.buckets.length - LISTED_BUCKETS;
  if (more > 0) out.push(`  … and ${plural(more, group.by === 'package' ? 'more package' : 'more directory', group.by === 'package' ? 'more packages' : 'more directories')}`);
  if (all) for (const path of group.paths) out.push(`    ${path}`);
  return out;
}
