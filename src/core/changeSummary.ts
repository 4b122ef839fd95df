import type { InputChange } from './diff.js';
import type { EvidenceChange, EvidenceEntry } from './evidence.js';
import { IDENTITY_FIELDS } from './identity.js';
import { evidencePackageOf, installedBucketOf } from './inputGroups.js';

/*
 * Input changes summarised for people. Source changes are listed one per line
 * up to a limit; installed changes, past the limit, are counted per package.
 * vouch sees identities change, not why: the summary says what it sees (every
 * installed file changed identity, "as a reinstall does"), never that a
 * reinstall happened.
 */

/** How many changes of one origin are listed one per line before the rest is counted. */
export const LISTED_CHANGES = 20;

export type IdentityField = (typeof IDENTITY_FIELDS)[number];

/** The installed changes of one package, counted by kind. */
export interface PackageChanges {
  name: string;
  /** added: no file of it was an input of the receipt; removed: none is an input now. */
  state: 'added' | 'removed' | 'changed';
  /** Its files in the receipt and now. */
  before: number;
  after: number;
  added: number;
  removed: number;
  modified: number;
  identity: number;
  /** Other changes: file <-> symlink, source <-> installed. */
  type: number;
  /** The identity fields that differ, over all its identity changes, in IDENTITY_FIELDS order. */
  fields: IdentityField[];
}

export type InstalledSummary =
  /** Few enough to list one per line. */
  | { kind: 'listed'; changes: InputChange[] }
  /** Every installed file, in the receipt and now the same paths, changed identity and nothing else. */
  | { kind: 'all-identity'; files: number; packages: number; fields: IdentityField[] }
  /** Counted per package, sorted by how many files changed (most first), then by name. */
  | { kind: 'packages'; files: number; packages: PackageChanges[] };

export interface ChangeSummary {
  /** The first LISTED_CHANGES source changes, and how many more there are. */
  source: InputChange[];
  moreSource: number;
  installed: InstalledSummary;
}

/** Installed files per package (installedBucketOf), in the receipt and now. */
export interface InstalledCounts {
  before: ReadonlyMap<string, number>;
  after: ReadonlyMap<string, number>;
}

export function packageChangeCount(entry: PackageChanges): number {
  return entry.added + entry.removed + entry.modified + entry.identity + entry.type;
}

/** `counts` is asked for only when installed changes are many: counting every installed file is not free. */
export function summariseChanges(changes: readonly InputChange[], counts: () => InstalledCounts, limit = LISTED_CHANGES): ChangeSummary {
  const source = changes.filter((change) => change.origin === 'source');
  const installed = changes.filter((change) => change.origin === 'installed');
  return { source: source.slice(0, limit), moreSource: Math.max(0, source.length - limit), installed: summariseInstalled(installed, counts, limit) };
}

function summariseInstalled(changes: InputChange[], countsOf: () => InstalledCounts, limit: number): InstalledSummary {
  if (changes.length <= limit) return { kind: 'listed', changes };
  const counts = countsOf();
  const total = (map: ReadonlyMap<string, number>) => [...map.values()].reduce((sum, count) => sum + count, 0);
  const before = total(counts.before);
  const packages = new Map<string, PackageChanges>();
  for (const change of changes) {
    const name = installedBucketOf(change.path);
    let entry = packages.get(name);
    if (!entry) {
      const had = counts.before.get(name) ?? 0;
      const has = counts.after.get(name) ?? 0;
      entry = { name, state: had === 0 ? 'added' : has === 0 ? 'removed' : 'changed', before: had, after: has, added: 0, removed: 0, modified: 0, identity: 0, type: 0, fields: [] };
      packages.set(name, entry);
    }
    entry[change.change === 'mode' ? 'modified' : change.change] += 1;
    if (change.change === 'identity') for (const field of change.fields) if (!entry.fields.includes(field)) entry.fields.push(field);
  }
  for (const entry of packages.values()) entry.fields = IDENTITY_FIELDS.filter((field) => entry.fields.includes(field));
  const list = [...packages.values()];
  // Every file the receipt had, and no other, changed identity: the same paths, new files under them.
  const everyFile =
    changes.length === before &&
    before === total(counts.after) &&
    counts.before.size === counts.after.size &&
    changes.every((change) => change.change === 'identity') &&
    [...counts.before].every(([name, count]) => counts.after.get(name) === count);
  if (everyFile) {
    return { kind: 'all-identity', files: changes.length, packages: counts.after.size, fields: IDENTITY_FIELDS.filter((field) => list.some((entry) => entry.fields.includes(field))) };
  }
  list.sort((a, b) => packageChangeCount(b) - packageChangeCount(a) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { kind: 'packages', files: changes.length, packages: list };
}

/*
 * A traced receipt's changes (core/evidence.ts's EvidenceChange), summarised the same way:
 * changes outside any installed package listed up to a limit, changes under node_modules
 * counted per package once they are many. A reinstall of the same bytes is no change to a
 * traced receipt; a version change is, and shows as the old package's paths gone.
 */

/** The changes under one installed package (installedPackageOf). */
export interface PackageEvidenceChanges {
  name: string;
  /** The receipt's entries in it. */
  entries: number;
  changed: number;
  /** Changed entries that are absent now. */
  gone: number;
  /** Every changed entry was one the run read (a file's content), so "files" says it. */
  reads: boolean;
}

export type InstalledEvidenceSummary =
  | { kind: 'listed'; changes: EvidenceChange[] }
  /** Counted per package, sorted by how many entries changed (most first), then by name. */
  | { kind: 'packages'; changes: number; packages: PackageEvidenceChanges[] };

export interface EvidenceChangeSummary {
  /** The first `limit` changes under no installed package (or of the run's own), and how many more there are. */
  other: EvidenceChange[];
  moreOther: number;
  installed: InstalledEvidenceSummary;
}

/**
 * `entriesPerPackage` (the receipt's evidence entries per installed package) is asked for only
 * when installed changes are many.
 */
export function summariseEvidenceChanges(
  changes: readonly EvidenceChange[],
  entriesPerPackage: () => ReadonlyMap<string, number>,
  limit = LISTED_CHANGES,
): EvidenceChangeSummary {
  const other: EvidenceChange[] = [];
  const installed: EvidenceChange[] = [];
  // The run's own entries are few and say something else (its cache, changed by someone else): never counted away.
  for (const change of changes) (change.before.own || evidencePackageOf(change.before) === null ? other : installed).push(change);
  return { other: other.slice(0, limit), moreOther: Math.max(0, other.length - limit), installed: summariseInstalledEvidence(installed, entriesPerPackage, limit) };
}

function summariseInstalledEvidence(changes: EvidenceChange[], entriesPerPackage: () => ReadonlyMap<string, number>, limit: number): InstalledEvidenceSummary {
  if (changes.length <= limit) return { kind: 'listed', changes };
  const counts = entriesPerPackage();
  const packages = new Map<string, PackageEvidenceChanges>();
  for (const change of changes) {
    const name = evidencePackageOf(change.before) as string;
    let entry = packages.get(name);
    if (!entry) {
      entry = { name, entries: counts.get(name) ?? 0, changed: 0, gone: 0, reads: true };
      packages.set(name, entry);
    }
    entry.changed += 1;
    if (change.now.type === 'absent') entry.gone += 1;
    if (change.use !== 'read') entry.reads = false;
  }
  const list = [...packages.values()].sort((a, b) => b.changed - a.changed || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { kind: 'packages', changes: changes.length, packages: list };
}

/** The receipt's evidence entries per installed package, for summariseEvidenceChanges. */
export function evidencePerPackage(entries: readonly Pick<EvidenceEntry, 'path' | 'type'>[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const entry of entries) {
    const name = evidencePackageOf(entry);
    if (name !== null) counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  return counts;
}
