import { comparePaths, patchedManifest, plainLineCount, plainLowerBound, plainPathAt, type InputEntry, type ManifestBasis } from '../core/manifest.js';
import type { Observation } from '../core/observation.js';
import type { StatCache } from '../core/statCache.js';
import { globMatcher } from '../fs/globMatcher.js';
import { lookSourceFile, lstatAt } from '../fs/sourceLook.js';
import type { ObservedInputs } from './protocol.js';

/** One tracked check as the index holds it: its observation and what the manifest was made of. */
export interface IndexedCheck {
  check: ObservedInputs;
  observation: Observation;
  basis: ManifestBasis;
}

/** The checks after a patch, and the new identities of the files it looked at again. */
export interface Patched {
  checks: Map<string, IndexedCheck>;
  identities: Map<string, string>;
}

/** Why only a full scan can tell what the changed paths did. */
export interface Unpatchable {
  full: string;
}

/**
 * The index after `changed` (root-relative paths that events named), without
 * a scan: when every path is either a source file already in the index whose
 * content changed, or a path that is no input of any check and cannot become
 * one. Anything else needs a full scan, which is the answer whenever the
 * index cannot prove it: a path created, deleted or replaced among the
 * inputs, an installed file, a directory, a link, git's rule files.
 *
 * Membership in a check's inputs depends on the path, the check's globs and
 * git (tracked, or untracked and not ignored). A content change moves none of
 * them: the path is still there, still a regular file, and what git tracks or
 * ignores changes only through files this sends to a full scan (.git/, any
 * .gitignore); the rule files outside the root are checked on every question.
 * A link's look depends on the paths it resolves through, but a path that
 * stays a regular file or goes away cannot make a link loop or leave the
 * root; it can only end such a problem, and an index with problems is
 * never patched.
 */
export function patchIndex(root: string, checks: ReadonlyMap<string, IndexedCheck>, changed: Iterable<string>, statCache: StatCache, observedAtNs: bigint): Patched | Unpatchable {
  // A problem may rest on other paths than its own (a link that loops, or leaves the root, through a
  // path that then becomes a file): an index with any is brought up to date by a scan only.
  for (const { observation } of checks.values()) if (observation.problems.length > 0) return { full: 'the index holds inputs with problems' };
  const replaced = new Map<string, Map<number, InputEntry>>();
  const identities = new Map<string, string>();
  const selects = new Map<string, (path: string) => boolean>();
  for (const [key, { check }] of checks) selects.set(key, globMatcher([...check.inputs, ...check.installed].filter((glob) => !glob.startsWith('!'))));
  for (const path of changed) {
    if (decidesTracking(path)) return { full: `${path} decides what git tracks or ignores` };
    const hits: [string, number][] = [];
    for (const [key, { basis }] of checks) {
      const at = entryIndex(basis.entries, path);
      if (at >= 0) hits.push([key, at]);
      else if (basis.plain !== null && plainHas(basis, path)) return { full: `${path} is an installed input` };
    }
    if (hits.length > 0) {
      for (const [key, at] of hits) {
        const entry = checks.get(key)!.basis.entries[at]!;
        if (entry.origin !== 'source' || entry.type !== 'file') return { full: `${path} is an installed input or a link` };
      }
      const looked = lookSourceFile(root, path, statCache, observedAtNs);
      if (looked === null || !('entry' in looked)) return { full: `${path} is no longer a readable regular file` };
      identities.set(path, looked.identity);
      for (const [key, at] of hits) {
        let entries = replaced.get(key);
        if (!entries) replaced.set(key, (entries = new Map()));
        entries.set(at, looked.entry);
      }
      continue;
    }
    const stats = lstatAt(`${root}/${path}`, path);
    if (stats !== null && 'code' in stats) return { full: `${path} cannot be looked at` };
    if (stats === null) {
      // Gone and never an input: only a directory that held inputs matters.
      for (const { basis } of checks.values()) if (holdsBelow(basis, path)) return { full: `${path} held inputs` };
      continue;
    }
    if (!stats.isFile()) return { full: `${path} is a directory or a link` };
    for (const matches of selects.values()) if (matches(path)) return { full: `${path} may be a new input` };
  }
  const next = new Map<string, IndexedCheck>();
  for (const [key, indexed] of checks) {
    const entries = replaced.get(key);
    next.set(key, entries === undefined ? indexed : patchedCheck(indexed, entries));
  }
  return { checks: next, identities };
}

const NO_IDENTITIES: ReadonlyMap<string, string> = new Map();

function patchedCheck(indexed: IndexedCheck, replaced: Map<number, InputEntry>): IndexedCheck {
  const entries = indexed.basis.entries.slice();
  for (const [at, entry] of replaced) entries[at] = entry;
  const basis: ManifestBasis = { entries, plain: indexed.basis.plain };
  const before = indexed.observation;
  // The index keeps no source identities (warmIndex.ts keeps the hard-linked ones apart); the new identities are the patch's.
  const observation: Observation = { manifest: patchedManifest(before.manifest, basis), problems: before.problems, healthy: before.healthy, source: before.source, sourceIdentities: NO_IDENTITIES };
  return { check: indexed.check, observation, basis };
}

/**
 * Files whose change can add or take away sources without an event on them:
 * git's own directory (its index, info/exclude, config) and any .gitignore.
 */
function decidesTracking(path: string): boolean {
  const segments = path.split('/');
  return segments.includes('.git') || segments[segments.length - 1] === '.gitignore';
}

function entryIndex(entries: readonly InputEntry[], path: string): number {
  const at = lowerBound(entries, path);
  return at < entries.length && entries[at]!.path === path ? at : -1;
}

function lowerBound(entries: readonly InputEntry[], path: string): number {
  let low = 0;
  let high = entries.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (comparePaths(entries[middle]!.path, path) < 0) low = middle + 1;
    else high = middle;
  }
  return low;
}

function plainHas({ plain }: ManifestBasis, path: string): boolean {
  const at = plainLowerBound(plain!, path);
  return at < plainLineCount(plain!) && plainPathAt(plain!, at) === path;
}

/** Whether any entry lies below `path` as a directory: its paths sort from "path/" to "path0". */
function holdsBelow(basis: ManifestBasis, path: string): boolean {
  const prefix = `${path}/`;
  const at = lowerBound(basis.entries, prefix);
  if (at < basis.entries.length && basis.entries[at]!.path.startsWith(prefix)) return true;
  if (basis.plain === null) return false;
  const line = plainLowerBound(basis.plain, prefix);
  return line < plainLineCount(basis.plain) && plainPathAt(basis.plain, line).startsWith(prefix);
}
