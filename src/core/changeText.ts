import { packageChangeCount, type InstalledSummary, type PackageChanges } from './changeSummary.js';

/*
 * The words of a summary of installed changes, shared by the CLI's explain
 * and the MCP explain tool's text block. What vouch sees, never why: "as a
 * reinstall does", not "reinstalled".
 */

/** Counts as people read them: 21,914. */
export const formatCount = (value: number): string => value.toLocaleString('en-US');

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
