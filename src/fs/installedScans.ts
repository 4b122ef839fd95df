import { createHash } from 'node:crypto';
import { lstatSync } from 'node:fs';
import { join } from 'node:path';
import { comparePaths, joinPlainLines, plainLowerBound, type PlainLines } from '../core/manifest.js';
import { planInstalledWalk, type InstalledListing } from './installedFiles.js';
import { startTreeScan, type PendingTreeScan } from './nativeTreeScan.js';

/** Installed files as the native tree scan found them: plain lines, and the paths JavaScript looks at itself. */
export interface NativeInstalled extends InstalledListing {
  plain: PlainLines;
  bases: string[];
}

interface Pending {
  bases: string[];
  pending: PendingTreeScan[];
  pruned: (path: string) => boolean;
}

type State = Pending | NativeInstalled | null;

/**
 * The native walks of the install trees, one per distinct "installed" globs.
 * A walk starts as soon as its checks are known and runs on its own threads
 * while the caller opens the store and looks at the sources.
 */
export class InstalledScans {
  private readonly states = new Map<string, State>();

  constructor(
    private readonly root: string,
    /** No later than the walks' first lstat: what changed within a tick before it is racy. */
    private readonly observedAtNs: bigint,
    /** Where the walks keep directory listings between scans (the state dir); none, and every directory is read. */
    private readonly cacheDir?: string,
  ) {}

  start(globs: readonly string[]) {
    const key = JSON.stringify(globs);
    if (this.states.has(key)) return;
    const walk = planInstalledWalk(globs);
    if (!walk.wholeTrees) {
      this.states.set(key, null);
      return;
    }
    const pending: PendingTreeScan[] = [];
    for (const base of walk.bases) {
      const scan = startTreeScan(this.root, base, this.observedAtNs, this.cacheFile(base));
      if (scan === null) {
        this.states.set(key, null);
        return;
      }
      pending.push(scan);
    }
    this.states.set(key, { bases: walk.bases, pending, pruned: walk.pruned });
  }

  /**
   * The walk's answer, pruned as the JavaScript walk prunes, or null when the
   * JavaScript walk must answer: no addon, a walk the addon could not finish,
   * or a source of this check inside an install tree.
   */
  finish(globs: readonly string[], selected: readonly string[]): NativeInstalled | null {
    const key = JSON.stringify(globs);
    let state = this.states.get(key) ?? null;
    if (state !== null && 'pending' in state) {
      state = this.collect(state);
      this.states.set(key, state);
    }
    if (state === null) return null;
    const prefixes = state.bases.map((base) => base + '/');
    if (selected.some((path) => prefixes.some((prefix) => path.startsWith(prefix)))) return null;
    return state;
  }

  private cacheFile(base: string): string {
    if (this.cacheDir === undefined) return '';
    const name = createHash('sha256').update(`${this.root}\0${base}`).digest('hex').slice(0, 16);
    return join(this.cacheDir, `tree-${name}.cache`);
  }

  private collect({ bases, pending, pruned }: Pending): NativeInstalled | null {
    const runs: { plain: PlainLines; drop: [number, number][]; base: string }[] = [];
    const paths: string[] = [];
    let complete = true;
    for (const [index, scan] of pending.entries()) {
      const result = scan.finish();
      if (result === null) {
        complete = false;
        continue;
      }
      const drop: [number, number][] = [];
      const prunedDirs: string[] = [];
      for (const dir of result.dirs) {
        if (!pruned(dir) || prunedDirs.some((outer) => dir.startsWith(outer + '/'))) continue;
        prunedDirs.push(dir);
        // The paths below a directory sort together, from "dir/" up to "dir0" ("0" follows "/").
        drop.push([plainLowerBound(result, dir + '/'), plainLowerBound(result, dir + '0')]);
      }
      for (const path of result.specials) {
        if (prunedDirs.some((dir) => path.startsWith(dir + '/'))) continue;
        // A link named like a pruned directory goes with it, as in the JavaScript walk.
        if (pruned(path) && lstatSync(`${this.root}/${path}`, { throwIfNoEntry: false })?.isSymbolicLink()) continue;
        paths.push(path);
      }
      runs.push({ plain: result, drop, base: bases[index] as string });
    }
    if (!complete) return null;
    runs.sort((a, b) => comparePaths(a.base + '/', b.base + '/'));
    return { plain: joinPlainLines(runs), paths, problems: [], bases };
  }
}
