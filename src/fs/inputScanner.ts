import { lstatSync, readlinkSync, realpathSync, type BigIntStats } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { CheckDefinition } from '../core/definition.js';
import { identityOf, isRacy, nowNs, racyWindowNs } from '../core/identity.js';
import { comparePaths, manifestFromBasis, type InputEntry, type ManifestBasis } from '../core/manifest.js';
import type { Observation } from '../core/observation.js';
import { boundedReasons, reason, type Reason } from '../core/reason.js';
import { TOOL_CACHES } from '../core/toolCaches.js';
import { hashFile } from './hashFile.js';
import { lookSourceFile, lstatAt, unreadable } from './sourceLook.js';
import { listInstalledFiles, type InstalledListing } from './installedFiles.js';
import { globMatcher, noneCanMatch } from './globMatcher.js';
import { InstalledScans } from './installedScans.js';
import { startPathStats } from './nativeTreeScan.js';
import { startSourceListing, strictUtf8, type PendingPathStats, type PendingSourceListing, type SourceListing } from './sourceFiles.js';
import type { StatCache } from '../core/statCache.js';
import { isInside } from '../core/pathInside.js';

type Looked = InputEntry | Reason | null;

const SETTLE_ATTEMPTS = 5;

/**
 * Observes checks' inputs directly from the file system. One scanner serves
 * one question: files shared by several checks are listed, stat'ed and hashed
 * once. Construct a new scanner for each fresh observation.
 */
export class InputScanner {
  private readonly realRoot: string;
  private sources: SourceListing | undefined;
  private readonly installed = new Map<string, InstalledListing>();
  /** Per origin: a path can be looked at as a source by one check and as installed by another. */
  private readonly looked = { source: new Map<string, Looked>(), installed: new Map<string, Looked>() };
  private readonly observedAtNs = nowNs();

  constructor(
    private readonly root: string,
    excludedDirs: readonly string[],
    private readonly statCache: StatCache,
    /** Started early by a caller that knows the checks, so the walks overlap opening the store. */
    private readonly installedScans = new InstalledScans(root, nowNs()),
    private readonly sourceListing: PendingSourceListing = startSourceListing(root, excludedDirs),
  ) {
    this.realRoot = realpathSync.native(root);
  }

  observe(definition: CheckDefinition): Observation {
    return this.observeWithBasis(definition).observation;
  }

  /** The observation and what its manifest was made of, for an index that patches it later. */
  observeWithBasis(definition: CheckDefinition): { observation: Observation; basis: ManifestBasis; eachSourceIdentity: (visit: (path: string, identity: string) => void) => void } {
    this.installedScans.start(definition.installed);
    const sources = this.listSources();
    const problems: Reason[] = [...sources.problems];
    const selected = selectSources(sources, definition.inputs);
    if (selected.length === 0) {
      // A receipt over no source file would stay CURRENT through every edit to what the check really reads.
      problems.push(
        reason(
          'inputs-empty',
          `the check's inputs match no source file; fix its "inputs" globs (relative to the root; only files git tracks, or untracked files it does not ignore, are source files)`,
        ),
      );
    }
    // The sources first: the install trees may still be walking meanwhile.
    const sourceEntries: InputEntry[] = [];
    for (const index of selected) {
      const looked = this.lookSourceAt(index);
      if (looked === null) continue;
      if ('code' in looked) problems.push(looked);
      else sourceEntries.push(looked);
    }
    const native = this.installedScans.finish(
      definition.installed,
      selected.map((index) => sources.paths[index]!),
    );
    const installed = native ?? this.listInstalled(definition.installed);
    problems.push(...installed.problems);
    // The native walk never holds a source (it gives way to the JavaScript walk when one lies in
    // its trees); a path listed both ways stays a source.
    const isSource = native ? () => false : setOf(sourceEntries);
    const installedEntries = this.lookInstalledPaths(installed.paths, isSource, problems);
    const sorted = [...sourceEntries, ...installedEntries.values()];
    sorted.sort((a, b) => comparePaths(a.path, b.path));
    const basis: ManifestBasis = { entries: sorted, plain: native ? native.plain : null };
    const manifest = manifestFromBasis(basis);
    let identities: Map<string, string> | undefined;
    const identitiesOf = () => {
      const map = new Map<string, string>();
      this.eachIdentity(selected, (path, identity) => map.set(path, identity));
      return map;
    };
    const observation: Observation = {
      manifest,
      problems: boundedReasons(problems),
      healthy: true,
      source: 'scan',
      // Only a run compares them, before and after: a status does not pay for the map.
      get sourceIdentities() {
        identities ??= identitiesOf();
        return identities;
      },
    };
    return { observation, basis, eachSourceIdentity: (visit) => this.eachIdentity(selected, visit) };
  }

  /**
   * Why no receipt here can be trusted, whatever its inputs: a state dir git lists may hold
   * someone else's receipts. A traced receipt's evidence is looked at only without it.
   */
  trustProblems(): Reason[] {
    return this.listSources().problems.filter((problem) => problem.code === 'state-dir-in-git');
  }

  private listSources(): SourceListing {
    this.sources ??= this.sourceListing.finish();
    return this.sources;
  }

  private listInstalled(globs: readonly string[]): InstalledListing {
    const key = JSON.stringify(globs);
    let installed = this.installed.get(key);
    if (!installed) {
      installed = listInstalledFiles(this.root, globs);
      this.installed.set(key, installed);
    }
    return installed;
  }

  private lookInstalledPaths(paths: readonly string[], isSource: (path: string) => boolean, problems: Reason[]): Map<string, InputEntry> {
    const entries = new Map<string, InputEntry>();
    const racy: string[] = [];
    for (const path of paths) {
      if (isSource(path)) continue;
      const looked = this.look(path, 'installed');
      if (looked !== null && 'code' in looked) problems.push(looked);
      else if (looked !== null) entries.set(path, looked);
      if (this.racyInstalled.has(path)) racy.push(path);
    }
    if (racy.length > 0) this.settle(racy, entries, problems);
    return entries;
  }

  /** The identity of each selected source, as sourceIdentities has it. */
  private eachIdentity(selected: readonly number[], visit: (path: string, identity: string) => void): void {
    const paths = this.listSources().paths;
    const rows = this.sourceRows;
    for (const index of selected) {
      const path = paths[index]!;
      const identity = this.sourceIdentity.get(path) ?? (rows?.digests[index] !== undefined ? rows.identities[index] : undefined);
      if (identity !== undefined && identity !== null) visit(path, identity);
    }
  }

  /** Per source (aligned with the listing): the native lstat's identity, and the cached digest it matches. */
  private sourceRows: { identities: (string | null)[]; executable: Uint8Array; digests: (string | undefined)[]; looked: (Looked | undefined)[] } | null = null;
  private sourceStats: PendingPathStats | null | undefined;

  /** Every source is lstat'ed at once on other threads, while this one selects each check's inputs. */
  private startSourceStats(paths: readonly string[]): PendingPathStats | null {
    if (paths.some((path) => path.includes('\0'))) return null;
    return startPathStats(this.root, paths);
  }

  /**
   * The common case in bulk: a regular file whose identity the native lstat
   * found unchanged since its digest was cached. Anything else is looked at here.
   */
  private lookSourceAt(index: number): Looked {
    const paths = this.listSources().paths;
    if (this.sourceStats === undefined) this.sourceStats = this.sources!.stats ?? this.startSourceStats(paths);
    if (this.sourceRows === null) {
      const stats = this.sourceStats?.finish();
      const identities = stats?.identities ?? paths.map(() => null);
      this.sourceRows = {
        identities,
        executable: stats?.executable ?? new Uint8Array(paths.length),
        digests: this.statCache.digestsFor(paths, identities),
        looked: [],
      };
    }
    const rows = this.sourceRows;
    const known = rows.looked[index];
    if (known !== undefined) return known;
    const path = paths[index]!;
    const digest = rows.digests[index];
    const looked: Looked =
      digest !== undefined ? { path, origin: 'source', type: 'file', digest, executable: rows.executable[index] === 1 } : this.look(path, 'source');
    rows.looked[index] = looked;
    return looked;
  }

  private readonly racyInstalled = new Set<string>();
  private readonly sourceIdentity = new Map<string, string>();

  /**
   * An installed file changed within a timestamp tick of this observation could
   * change again without changing its identity. Wait the tick out and look
   * again, so the recorded identity is one that any later write must change.
   */
  private settle(racy: string[], entries: Map<string, InputEntry>, problems: Reason[]) {
    for (let attempt = 0; attempt < SETTLE_ATTEMPTS && racy.length > 0; attempt++) {
      let until = 0n;
      for (const path of racy) {
        const stats = lstatSync(this.abs(path), { bigint: true, throwIfNoEntry: false });
        if (stats) {
          const end = stats.ctimeNs + racyWindowNs(stats.ctimeNs);
          if (end > until) until = end;
        }
      }
      const waitMs = Number((until - nowNs()) / 1_000_000n) + 1;
      if (waitMs > 0) sleep(waitMs);
      const now = nowNs();
      const still: string[] = [];
      for (const path of racy) {
        this.racyInstalled.delete(path);
        const looked = this.lookInstalled(path, now);
        this.looked.installed.set(path, looked);
        entries.delete(path);
        if (looked === null) continue;
        if ('code' in looked) problems.push(looked);
        else entries.set(path, looked);
        if (this.racyInstalled.has(path)) still.push(path);
      }
      racy = still;
    }
    for (const path of racy) {
      problems.push(reason('input-changing', `${path} keeps changing while vouch looks at it; wait for the install or build that writes it to finish`));
    }
  }

  private look(path: string, origin: 'source' | 'installed'): Looked {
    const memo = this.looked[origin];
    const seen = memo.get(path);
    if (seen !== undefined) return seen;
    const looked = origin === 'source' ? this.lookSource(path) : this.lookInstalled(path, this.observedAtNs);
    memo.set(path, looked);
    return looked;
  }

  /** Root-relative paths are "/"-separated and normalised already; path.join would normalise them again. */
  private abs(path: string): string {
    return `${this.root}/${path}`;
  }

  private lstat(path: string): BigIntStats | Reason | null {
    return lstatAt(this.abs(path), path);
  }

  private lookSource(path: string): Looked {
    const looked = lookSourceFile(this.root, path, this.statCache, this.observedAtNs);
    if (looked === null || 'code' in looked) return looked;
    if ('entry' in looked) {
      this.sourceIdentity.set(path, looked.identity);
      return looked.entry;
    }
    return looked.isSymbolicLink() ? this.link(path, 'source') : unsupported(path, looked);
  }

  private lookInstalled(path: string, observedAtNs: bigint): Looked {
    const stats = this.lstat(path);
    if (stats === null || 'code' in stats) return stats;
    if (stats.isSymbolicLink()) return this.link(path, 'installed');
    if (!stats.isFile()) return unsupported(path, stats);
    const identity = identityOf(stats);
    if (isRacy(stats, observedAtNs)) this.racyInstalled.add(path);
    if (stats.nlink === 1n) return { path, origin: 'installed', type: 'file', identity };
    // A hard-linked file (a pnpm store) is bound by content as well as identity.
    const cached = this.statCache.get(path);
    let digest = cached?.identity === identity ? cached.digest : undefined;
    if (digest === undefined) {
      try {
        digest = hashFile(this.abs(path), Number(stats.size));
      } catch (error) {
        return unreadable(path, error);
      }
      if (!isRacy(stats, observedAtNs)) this.statCache.set(path, identity, digest);
    }
    return { path, origin: 'installed', type: 'file', identity, digest };
  }

  private link(path: string, origin: 'source' | 'installed'): Looked {
    const abs = this.abs(path);
    let target: string;
    try {
      const bytes = readlinkSync(abs, { encoding: 'buffer' });
      target = strictUtf8.decode(bytes);
    } catch (error) {
      // Decoded lossily, two different targets could read the same: a retarget would go unseen.
      if (error instanceof TypeError) return notUtf8Target(path, origin);
      return unreadable(path, error);
    }
    const lexical = resolve(dirname(abs), target);
    if (!isInside(this.root, lexical) && !isInside(this.realRoot, lexical)) return outside(path, target);
    try {
      if (!isInside(this.realRoot, realpathSync.native(abs))) return outside(path, target);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ELOOP') {
        return reason('input-symlink-loop', `${path} is a link that loops back on itself (${target}); a tool that reads it fails. Fix or remove the link, or exclude it with "!${path}"`);
      }
      // A dangling link inside the root is recorded as a link: that is all a tool can see of it.
    }
    return { path, origin, type: 'symlink', target };
  }
}

/** The indexes of the paths the globs select. Tool caches are never inputs, even in a project that does not ignore node_modules. */
function selectSources({ paths, text }: SourceListing, globs: readonly string[]): number[] {
  const positive = globs.filter((glob) => !glob.startsWith('!'));
  const negative = [...globs.filter((glob) => glob.startsWith('!')).map((glob) => glob.slice(1)), ...TOOL_CACHES];
  const everything = positive.length === 1 && positive[0] === '**';
  const selected: number[] = [];
  if (everything && noneCanMatch(negative, text)) {
    for (let index = 0; index < paths.length; index++) selected.push(index);
    return selected;
  }
  const selects = everything ? () => true : globMatcher(positive);
  const excludes = globMatcher(negative);
  for (let index = 0; index < paths.length; index++) {
    const path = paths[index]!;
    if (selects(path) && !excludes(path)) selected.push(index);
  }
  return selected;
}

function setOf(entries: readonly InputEntry[]): (path: string) => boolean {
  let paths: Set<string> | undefined;
  return (path) => (paths ??= new Set(entries.map((entry) => entry.path))).has(path);
}

function outside(path: string, target: string): Reason {
  return reason('input-outside-root', `${path} is a link to ${target}, outside the project root; vouch cannot observe what a check reads there. Point it inside the root, or exclude it with "!${path}"`);
}

function notUtf8Target(path: string, origin: 'source' | 'installed'): Reason {
  return reason(
    'input-name-not-utf8',
    `${path} is a link whose target is not valid UTF-8, so it cannot be recorded exactly; point it at a UTF-8 path, or exclude it with "!${path}" in the check's ${origin === 'source' ? 'inputs' : '"installed" globs'}`,
  );
}

function unsupported(path: string, stats: BigIntStats): Reason {
  const what = stats.isDirectory() ? 'a directory (a git submodule?)' : stats.isFIFO() ? 'a named pipe' : stats.isSocket() ? 'a socket' : 'a device';
  return reason('input-unsupported-type', `${path} is ${what}, which vouch cannot record; exclude it with "!${path}" in the check's inputs`);
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));
function sleep(ms: number) {
  Atomics.wait(sleeper, 0, 0, Math.min(ms, 5_000));
}
