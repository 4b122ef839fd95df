import { packageChangeCount, summariseChanges, type ChangeSummary, type InstalledCounts, type PackageChanges } from '../core/changeSummary.js';
import type { InputChange } from '../core/diff.js';

/** Counts as people read them: 21,914. */
export const formatCount = (value: number): string => value.toLocaleString('en-US');

const plural = (value: number, one: string, many = `${one}s`) => `${formatCount(value)} ${value === 1 ? one : many}`;

const short = (digest: string | undefined) => (digest ? digest.slice(0, 12) : '-');

/** One input change on one line. */
export function describeChange(change: InputChange): string {
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

/**
 * The lines under "inputs:". Every change gets its own line with `all`, or
 * when there are few; else source changes are listed up to a limit and
 * installed changes are counted per package.
 */
export function inputChangeLines(changes: readonly InputChange[], counts: () => InstalledCounts, all: boolean): string[] {
  const summary = summariseChanges(changes, counts);
  if (all || (summary.moreSource === 0 && summary.installed.kind === 'listed')) return changes.map(describeChange);
  return summaryLines(summary);
}

function summaryLines(summary: ChangeSummary): string[] {
  const lines = summary.source.map(describeChange);
  if (summary.moreSource > 0) lines.push(`… and ${plural(summary.moreSource, 'more source change')} (--all lists them)`);
  const installed = summary.installed;
  switch (installed.kind) {
    case 'listed':
      lines.push(...installed.changes.map(describeChange));
      break;
    case 'all-identity':
      lines.push(
        `installed: all ${plural(installed.files, 'installed file')} (${plural(installed.packages, 'package')}) changed identity (${installed.fields.join(', ')}), as a reinstall does (--all lists them)`,
      );
      break;
    case 'packages': {
      lines.push(`installed: ${plural(installed.files, 'file')} changed in ${plural(installed.packages.length, 'package')} (--all lists them)`);
      for (const entry of installed.packages.slice(0, LISTED_PACKAGES)) lines.push(`  ${packageLine(entry)}`);
      const more = installed.packages.length - LISTED_PACKAGES;
      if (more > 0) lines.push(`  … and ${plural(more, 'more package')}`);
      break;
    }
  }
  return lines;
}

/** How many packages are named one per line in a summary. */
const LISTED_PACKAGES = 20;

function packageLine(entry: PackageChanges): string {
  if (entry.state === 'added' && entry.added === packageChangeCount(entry)) return `${entry.name}: added (${plural(entry.added, 'file')})`;
  if (entry.state === 'removed' && entry.removed === packageChangeCount(entry)) return `${entry.name}: removed (${plural(entry.removed, 'file')})`;
  const identity = `changed identity (${entry.fields.join(', ')})`;
  if (entry.identity === packageChangeCount(entry)) {
    const every = entry.identity === entry.before && entry.before === entry.after ? 'all ' : '';
    return `${entry.name}: ${every}${plural(entry.identity, 'file')} ${identity}`;
  }
  const parts: string[] = [];
  if (entry.added > 0) parts.push(`${formatCount(entry.added)} added`);
  if (entry.removed > 0) parts.push(`${formatCount(entry.removed)} removed`);
  if (entry.modified > 0) parts.push(`${formatCount(entry.modified)} modified`);
  if (entry.type > 0) parts.push(`${formatCount(entry.type)} changed type`);
  if (entry.identity > 0) parts.push(`${formatCount(entry.identity)} ${identity}`);
  return `${entry.name}: ${parts.join(', ')}`;
}
