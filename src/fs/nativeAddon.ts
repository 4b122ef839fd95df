import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { NativeSourceList, PathStatsResult, TreeScanResult } from './nativeTreeScan.js';

/** How native/observerCall.h ended; `errno` is set for every outcome but an answer. */
export type NativeCallReply =
  | { outcome: 'answered'; reply: string }
  | { outcome: 'refused' | 'timeout' | 'closed' | 'oversized' | 'error'; errno: number };

/** The native addon (native/, binding.gyp). Everything it does has a JavaScript fallback. */
export interface Addon {
  start(root: string, base: string, observedAtNs: bigint, threads: number, cacheFile: string): object;
  finish(handle: object): ({ failure: null } & TreeScanResult) | { failure: string };
  startStats(root: string, paths: string, count: number, threads: number): object;
  finishStats(handle: object): PathStatsResult;
  startSources(root: string, threads: number): object;
  finishSources(handle: object): NativeSourceList;
  callObserver(socketPath: string, request: string, deadlineMs: number, maxBytes: number): NativeCallReply;
  /** The pid at the other end of a Unix socket (SO_PEERCRED), or -1. Absent from an addon built before it. */
  peerPid?(fd: number): number;
  /** Absent from an addon built before it: the observer then scans in full on every change. */
  queueWatch?(fds: number[], intervalNs: number, maxGapNs: number, limitBytes: number): number;
  queueWatchTake?(): QueueWindow;
  /** Linux only (native/treeWatch.c): a recursive inotify watch of a tree, each batch handed on at once. */
  treeWatch?(root: string, callback: (kind: 'events' | 'ready' | 'error' | 'overflow', events: { path: string; type: 'create' | 'update' | 'delete' }[], message: string | undefined, errno: number) => void): object;
  treeWatchStop?(handle: object): void;
}

/** What one window of sampling the inotify queues saw (native/queueWatch.h). */
export interface QueueWindow {
  samples: number;
  gaps: number;
  over: number;
  failures: number;
  maxBytes: number;
  idleNs: number;
  /** The longest time between two rounds, the wait since the last one included. */
  longestGapNs: number;
  fds: number;
}

let addon: Addon | null | undefined;

/**
 * The addon, or null when it was not built, does not load, or VOUCH_NATIVE=0
 * asks for the JavaScript paths. VOUCH_NATIVE is read on every call, so one
 * process can serve commands either way. Both src/fs/ and the bundle's
 * dist/bin/ are two levels below the package root.
 *
 * process.dlopen, not a require: a status loads it first thing, and neither node:module (about
 * 0.6 ms to load on Node 20) nor the loader's resolution of the path is needed for a file named
 * exactly (https://nodejs.org/api/process.html#processdlopenmodule-filename-flags). In the
 * bundle, import.meta.dirname is __dirname; the fallback is for Node before 20.11.
 */
export function loadAddon(): Addon | null {
  if (process.env.VOUCH_NATIVE === '0' || process.platform === 'win32') return null;
  if (addon !== undefined) return addon;
  addon = null;
  try {
    const here = (import.meta.dirname as string | undefined) ?? dirname(fileURLToPath(import.meta.url));
    const module = { exports: {} as Addon };
    process.dlopen(module, join(here, '..', '..', 'build', 'Release', 'vouch_scan.node'));
    addon = module.exports;
  } catch {
    addon = null;
  }
  return addon;
}
