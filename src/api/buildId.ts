import { statSync } from 'node:fs';
import { PROTOCOL } from '../observer/protocol.js';

/** The vouch that runs: its version, and the identity of its entry script, so a rebuilt vouch replaces its observer. */
export interface Build {
  version: string;
  entry: string;
}

/** The entry script's size and mtime, with the protocol: an observer and a client of one build agree on it. */
export function buildId(build: Pick<Build, 'entry'>): string {
  try {
    const stats = statSync(build.entry);
    return `${PROTOCOL}:${stats.size}:${stats.mtimeMs}`;
  } catch {
    return `${PROTOCOL}`;
  }
}
