import { availableParallelism } from 'node:os';
import type { PlainLines } from '../core/manifest.js';
import { loadAddon } from './nativeAddon.js';

/**
 * The native tree scan (native/treeScan.c): walks an install tree on several
 * threads and renders each plain file's manifest line, where Node's own lstat
 * costs more than twice the system call. Everything it cannot settle alone
 * (links, hard links, racy files) it names for the JavaScript scanner, which
 * is also the whole fallback when the addon was not built.
 */
export interface TreeScanResult extends PlainLines {
  /** Root-relative paths the caller must look at itself. */
  specials: string[];
  /** Every directory walked, for pruning by glob afterwards. */
  dirs: string[];
}

/** For each path given: its identity (core/identity.ts) if it is a regular file, else null. */
export interface PathStatsResult {
  identities: (string | null)[];
  executable: Uint8Array;
}

/** git's listing of the sources, and an lstat of each path it wrote (sourceList.h). */
export interface NativeSourceList extends PathStatsResult {
  /** The errno name when git could not be started at all. */
  spawnError: string | null;
  status: number | null;
  signal: number | null;
  /** NUL-terminated paths; identities and executable hold one item per path, in this order. */
  stdout: Buffer;
  stderr: string;
}

export interface PendingTreeScan {
  /** null when the walk met something only the JavaScript walk explains (an unreadable directory, a non-ASCII name). */
  finish(): TreeScanResult | null;
}

export function nativeTreeScanAvailable(): boolean {
  return loadAddon() !== null;
}

/**
 * Starts walking root/base at once, on threads of its own; finish() waits for it. cacheFile
 * keeps directory listings between walks (native/dirCache.h); '' reads every directory.
 */
export function startTreeScan(root: string, base: string, observedAtNs: bigint, cacheFile: string): PendingTreeScan | null {
  const native = loadAddon();
  if (native === null) return null;
  const handle = native.start(root, base, observedAtNs, threads(), cacheFile);
  let result: TreeScanResult | null | undefined;
  return {
    finish() {
      if (result === undefined) {
        const finished = native.finish(handle);
        result = finished.failure === null ? finished : null;
      }
      return result;
    },
  };
}

/** Starts lstat'ing root-relative paths (none holding a NUL) on threads of its own; finish() waits. */
export function startPathStats(root: string, paths: readonly string[]): { finish(): PathStatsResult } | null {
  const native = loadAddon();
  if (native === null) return null;
  const handle = native.startStats(root, paths.join('\0'), paths.length, threads());
  let result: PathStatsResult | undefined;
  return {
    finish() {
      result ??= native.finishStats(handle);
      return result;
    },
  };
}

/** Starts git's listing of root's sources, then an lstat of each, on threads of its own; finish() waits. */
export function startSourceList(root: string): { finish(): NativeSourceList } | null {
  const native = loadAddon();
  if (native === null) return null;
  // One thread fewer than the walks: both run at once, and on two cores a second lstat thread
  // only took time from the walk (about 5 % of a status).
  const handle = native.startSources(root, Math.max(1, threads() - 1));
  let result: NativeSourceList | undefined;
  return {
    finish() {
      result ??= native.finishSources(handle);
      return result;
    },
  };
}

function threads(): number {
  return Math.max(1, Math.min(4, availableParallelism()));
}
