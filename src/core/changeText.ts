import { packageChangeCount, summariseEvidenceChanges, type InstalledEvidenceSummary, type InstalledSummary, type PackageChanges, type PackageEvidenceChanges } from './changeSummary.js';
import { formatCount } from './formatCount.js';
import { describeEvidenceChange, type EvidenceChange } from './evidence.js';

/*
 * The words of a summary of installed changes, shared by the CLI's explain
 * and the MCP explain tool's text block. What vouch sees, never why: "as a
 * reinstall does", not "reinstalled".
 */

export { formatCount };

export const plural = (value: number, one: string, many = `${one}s`): string => `${formatCount(value)} ${value === 1 ? one : many}`;

/** How many packages are named one per line in a summary. */
export const LISTED_PACKAGES = 20;

/**
 * The lines of a counted summary: one for all-identity; a header and one per
 * package (indented) for packages; none for listed. `more` says where the full
 * list is.
 */
export function installedSummaryLines(installed: InstalledSummary, more = ' (--all lists them)'): string[] {
  switch (installed.kind) {
    case 'listed':
      return [];
    case 'all-identity':
      return [
        `installed: all ${plural(installed.files, 'installed file')} (${plural(installed.packages, 'package')}) changed identity (${installed.fields.join(', ')}), as a reinstall does${more}`,
      ];
    case 'packages': {
      const lines = [`installed: ${plural(installed.files, 'file')} changed in ${plural(installed.packages.length, 'package')}${more}`];
      for (const entry of installed.packages.slice(0, LISTED_PACKAGES)) lines.push(`  ${packageLine(entry)}`);
      const rest = installed.packages.length - LISTED_PACKAGES;
      if (rest > 0) lines.push(`  … and ${plural(rest, 'more package')}`);
      return lines;
    }
  }
}

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

/**
 * The lines of a traced receipt's changes: every change on its own line with `all`, or when
 * there are few; else changes outside installed packages listed up to a limit, and installed
 * ones counted per package. `more` says where the full list is.
 */
export function evidenceChangeLines(
  changes: readonly EvidenceChange[],
  entriesPerPackage: () => ReadonlyMap<string, number>,
  all: boolean,
  more = ' (--all lists them)',
): string[] {
  if (all) return changes.map(describeEvidenceChange);
  const summary = summariseEvidenceChanges(changes, entriesPerPackage);
  const lines = summary.other.map(describeEvidenceChange);
  if (summary.moreOther > 0) lines.push(`… and ${plural(summary.moreOther, 'more change')}${more}`);
  lines.push(...installedEvidenceLines(summary.installed, more));
  return lines;
}

function installedEvidenceLines(installed: InstalledEvidenceSummary, more: string): string[] {
  if (installed.kind === 'listed') return installed.changes.map(describeEvidenceChange);
  const lines = [`installed: ${plural(installed.changes, 'change')} in ${plural(installed.packages.length, 'package')}${more}`];
  for (const entry of installed.packages.slice(0, LISTED_PACKAGES)) lines.push(`  ${evidencePackageLine(entry)}`);
  const rest = installed.packages.length - LISTED_PACKAGES;
  if (rest > 0) lines.push(`  … and ${plural(rest, 'more package')}`);
  return lines;
}

/** "node_modules/.pnpm/x@1: 120 files changed"; a package whose every path the run used is gone says so. */
function evidencePackageLine(entry: PackageEvidenceChanges): string {
  const noun = entry.reads ? 'file' : 'path';
  if (entry.gone === entry.changed && entry.changed === entry.entries) return `${entry.name}: gone (${plural(entry.entries, noun)} the run used, none there now)`;
  const every = entry.changed === entry.entries && entry.entries > 1 ? 'all ' : '';
  const gone = entry.gone > 0 && entry.gone < entry.changed ? ` (${formatCount(entry.gone)} now absent)` : entry.gone > 0 ? ' (now absent)' : '';
  return `${entry.name}: ${every}${plural(entry.changed, noun)} changed${gone}`;
}
