import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { readStateFile } from '../store/stateDir.js';
import { isDirectory, isSocket, ownedPrivately, parseRecord, recordAlive } from './observerRecord.js';

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
  if (!ownedPrivately(dir, isDirectory)) return null;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return null;
  }
  for (const name of names) {
    if (!name.endsWith('.json')) continue;
    const record = parseRecord(readStateFile(join(dir, name)));
    const socket = join(dir, `${name.slice(0, -'.json'.length)}.sock`);
    if (record === null || record.configPath !== configPath || record.stateDir !== stateDir || record.socket !== socket) continue;
    if (!ownedPrivately(socket, isSocket) || !recordAlive(record)) continue;
    return { socket, pid: record.pid };
  }
  return null;
}
