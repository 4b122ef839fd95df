import { summariseChanges, type InstalledCounts } from '../core/changeSummary.js';
import { installedSummaryLines, plural } from '../core/changeText.js';
import type { InputChange } from '../core/diff.js';

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
  const lines = summary.source.map(describeChange);
  if (summary.moreSource > 0) lines.push(`… and ${plural(summary.moreSource, 'more source change')} (--all lists them)`);
  if (summary.installed.kind === 'listed') lines.push(...summary.installed.changes.map(describeChange));
  else lines.push(...installedSummaryLines(summary.installed));
  return lines;
}
