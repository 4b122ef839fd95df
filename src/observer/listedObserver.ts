import { lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { processAlive, procAvailable } from '../fs/processStart.js';
import { readStateFile } from '../store/stateDir.js';

/**
 * The running observer of a config, found by listing its state dir's observer directory, not by
 * the config path's digest (observerFiles.ts): the served status (api/servedStatus.ts) then loads
 * no node:crypto. It sends the caller's whole environment, so it trusts more narrowly than
 * findObserver: the directory is this user's, not a link and closed to others, as the daemon
 * makes it; the record names this config and state dir and the socket beside it; that socket is a
 * socket of this user's (git makes none, so a repository cannot plant one); its process is alive.
 */
export function listedObserver(stateDir: string, configPath: string): { socket: string; pid: number } | null {
  const dir = join(stateDir, 'observer');
  const uid = process.getuid?.();
  if (uid === undefined || !ownPrivate(dir, uid, (stats) => stats.isDirectory())) return null;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return null;
  }
  for (const name of names) {
    if (!name.endsWith('.json')) continue;
    const text = readStateFile(join(dir, name));
    if (text === null) continue;
    let record: { pid?: unknown; processStart?: unknown; socket?: unknown; configPath?: unknown; stateDir?: unknown; schema?: unknown };
    try {
      record = JSON.parse(text);
    } catch {
      continue;
    }
    const socket = join(dir, `${name.slice(0, -'.json'.length)}.sock`);
    if (record === null || typeof record !== 'object' || record.schema !== 1 || record.configPath !== configPath || record.stateDir !== stateDir || record.socket !== socket) continue;
    const { pid, processStart } = record;
    if (typeof pid !== 'number' || !Number.isSafeInteger(pid) || pid <= 0 || (processStart !== null && typeof processStart !== 'string')) continue;
    if (processStart === null && procAvailable()) continue;
    if (!ownPrivate(socket, uid, (stats) => stats.isSocket()) || !processAlive(pid, processStart)) continue;
    return { socket, pid };
  }
  return null;
}

function ownPrivate(path: string, uid: number, kind: (stats: import('node:fs').Stats) => boolean): boolean {
  const stats = lstatSync(path, { throwIfNoEntry: false });
  return stats !== undefined && kind(stats) && stats.uid === uid && (stats.mode & 0o077) === 0;
}
