import { VouchError } from '../core/errors.js';
import { callObserver, deadlineFrom, findObserver, ObserverUnavailable, recordAlive } from '../observer/client.js';
import { stopObserver as stopRunning } from '../observer/launch.js';
import { checkObserverDir, observerFiles, readRecord, trustedSocket } from '../observer/observerFiles.js';
import type { ObserverInfo } from '../observer/protocol.js';
import type { ProjectPlace } from './project.js';

export type { ObserverInfo };

/*
 * The client side of the observer: asking the running one about itself,
 * stopping it, and a report on it. One RPC each, so none of this loads the
 * daemon, the input scanner or SQLite; starting and serving are in
 * startObserver.ts.
 */

export async function stopObserver(project: Pick<ProjectPlace, 'stateDir' | 'configPath'>): Promise<{ pid: number } | null> {
  return stopRunning(project.stateDir, project.configPath);
}

/** The running observer's own account of itself, or null when none runs. One that does not answer is an error. */
export async function observerInfo(project: Pick<ProjectPlace, 'stateDir' | 'configPath'>, env: NodeJS.ProcessEnv): Promise<ObserverInfo | null> {
  const found = findObserver(project.stateDir, project.configPath);
  if (!found) return null;
  try {
    return await callObserver(found.record.socket, 'info', {}, deadlineFrom(env));
  } catch (error) {
    if (error instanceof ObserverUnavailable) {
      throw new VouchError('observer-unreachable', `the observer (pid ${found.record.pid}) does not answer: ${error.message}; restart it with "vouch start"`);
    }
    throw error;
  }
}

export interface ObserverHealth {
  running: boolean;
  /** The socket answered an info call within the deadline; null when none runs. */
  reachable: boolean | null;
  healthy: boolean | null;
  pid: number | null;
  socket: string | null;
  error: string | null;
}

/**
 * Whether an observer runs, answers and trusts its index, for a report that
 * must write nothing: unlike findObserver, a dead observer's files are left.
 */
export async function observerHealth(project: Pick<ProjectPlace, 'stateDir' | 'configPath'>, env: NodeJS.ProcessEnv): Promise<ObserverHealth> {
  const files = observerFiles(project.stateDir, project.configPath);
  let record;
  try {
    record = checkObserverDir(files) ? readRecord(files) : null;
  } catch (error) {
    // A linked or foreign observer dir: reported, as a report must not fail on what it reports.
    return { running: false, reachable: null, healthy: null, pid: null, socket: null, error: (error as Error).message };
  }
  if (!record || !recordAlive(record) || !trustedSocket(files, record.socket)) return { running: false, reachable: null, healthy: null, pid: null, socket: null, error: null };
  const { pid, socket } = record;
  try {
    const info = await callObserver(socket, 'info', {}, deadlineFrom(env));
    return { running: true, reachable: true, healthy: info.healthy, pid, socket, error: info.healthy ? null : info.reasons.map((reason) => reason.message).join('; ') };
  } catch (error) {
    return { running: true, reachable: false, healthy: null, pid, socket, error: `${(error as Error).message}; restart it with "vouch stop" and "vouch start"` };
  }
}
