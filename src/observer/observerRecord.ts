import { lstatSync, type Stats } from 'node:fs';
import { processAlive, procAvailable } from '../fs/processStart.js';

/*
 * An observer's record and the checks made on it before anything is sent to the socket it names:
 * apart from observerFiles.ts, whose record and socket names are digests of the config path, so
 * that the served status (listedObserver.ts) reads records without loading node:crypto.
 */

/**
 * What a running observer writes about itself, so clients can find it and
 * tell it from a stale one. A repository may carry one of its own making, so
 * nothing in it is acted on unchecked: its socket must be one vouch would
 * use, and its pid is signalled only once /proc shows it is this observer.
 */
export interface ObserverRecord {
  schema: 1;
  pid: number;
  processStart: string | null;
  socket: string;
  version: string;
  build: string;
  root: string;
  configPath: string;
  stateDir: string;
  startedAt: number;
  log: string;
}

/** A record's text as a record, or null for none, a half-written one, or one that is not a record. */
export function parseRecord(text: string | null): ObserverRecord | null {
  if (text === null) return null;
  try {
    const record = JSON.parse(text) as ObserverRecord;
    const valid =
      record !== null &&
      typeof record === 'object' &&
      record.schema === 1 &&
      Number.isSafeInteger(record.pid) &&
      record.pid > 0 &&
      (record.processStart === null || typeof record.processStart === 'string') &&
      typeof record.socket === 'string';
    return valid ? record : null;
  } catch {
    return null;
  }
}

/**
 * Whether the recorded process still runs. Where /proc exists an observer
 * always records its start time, so a record without one names no observer.
 */
export function recordAlive(record: ObserverRecord): boolean {
  if (record.processStart === null && procAvailable()) return false;
  return processAlive(record.pid, record.processStart);
}

export const uid = (): number => process.getuid?.() ?? 0;

/** The kinds ownedPrivately is asked for: the observer's directory, and the socket it listens on (git can check out neither). */
export const isDirectory = (stats: Stats): boolean => stats.isDirectory();
export const isSocket = (stats: Stats): boolean => stats.isSocket();

/** A path of this user's that nobody else can use: of the kind asked (by lstat, so never a link), with no access for group or others. */
export function ownedPrivately(path: string, kind: (stats: Stats) => boolean): boolean {
  let stats: Stats | undefined;
  try {
    stats = lstatSync(path, { throwIfNoEntry: false });
  } catch {
    return false;
  }
  return stats !== undefined && kind(stats) && stats.uid === uid() && (stats.mode & 0o077) === 0;
}
