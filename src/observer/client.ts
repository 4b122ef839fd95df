import { connect } from 'node:net';
import { processAlive } from '../fs/processStart.js';
import { observerFiles, readRecord, removeObserverFiles, type ObserverFiles, type ObserverRecord } from './observerFiles.js';
import { MAX_LINE_BYTES, type MethodName, type Methods } from './protocol.js';

export const DEFAULT_DEADLINE_MS = 5_000;

/** Why a call got no answer. The caller falls back to observing directly. */
export class ObserverUnavailable extends Error {
  constructor(
    readonly why: 'not-running' | 'timeout' | 'refused' | 'protocol' | 'error',
    message: string,
  ) {
    super(message);
  }
}

export interface FoundObserver {
  files: ObserverFiles;
  record: ObserverRecord;
}

/**
 * The running observer for this state dir and config, if any. A record left
 * by a dead process is removed, with its socket, so nothing stale lingers.
 */
export function findObserver(stateDir: string, configPath: string): FoundObserver | null {
  const files = observerFiles(stateDir, configPath);
  const record = readRecord(files);
  if (record === null) return null;
  if (!processAlive(record.pid, record.processStart)) {
    removeObserverFiles(files, record.socket);
    return null;
  }
  return { files, record };
}

export function deadlineFrom(env: NodeJS.ProcessEnv): number {
  const value = Number(env.VOUCH_OBSERVER_TIMEOUT_MS);
  return Number.isFinite(value) && value > 0 ? value : DEFAULT_DEADLINE_MS;
}

let nextId = 1;

/** One call, one connection. A hung or dead observer costs at most the deadline. */
export function callObserver<M extends MethodName>(
  socket: string,
  method: M,
  params: Methods[M]['params'],
  deadlineMs: number,
): Promise<Methods[M]['result']> {
  return new Promise((resolve, reject) => {
    const id = nextId++;
    const connection = connect(socket);
    let buffer = '';
    let settled = false;
    const finish = (error: ObserverUnavailable | null, result?: Methods[M]['result']) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      connection.destroy();
      if (error) reject(error);
      else resolve(result as Methods[M]['result']);
    };
    const timer = setTimeout(() => finish(new ObserverUnavailable('timeout', `the observer did not answer "${method}" within ${deadlineMs} ms`)), deadlineMs);
    connection.setEncoding('utf8');
    connection.on('connect', () => connection.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n'));
    connection.on('data', (chunk: string) => {
      buffer += chunk;
      if (buffer.length > 64 * MAX_LINE_BYTES) return finish(new ObserverUnavailable('protocol', 'the observer sent an oversized answer'));
      const end = buffer.indexOf('\n');
      if (end < 0) return;
      let message: { id?: number; result?: unknown; error?: { message?: string } };
      try {
        message = JSON.parse(buffer.slice(0, end));
      } catch {
        return finish(new ObserverUnavailable('protocol', 'the observer sent something that is not JSON'));
      }
      if (message.id !== id) return finish(new ObserverUnavailable('protocol', 'the observer answered another request'));
      if (message.error) return finish(new ObserverUnavailable('error', `the observer refused "${method}": ${message.error.message ?? 'unknown error'}`));
      finish(null, message.result as Methods[M]['result']);
    });
    connection.on('error', (error: NodeJS.ErrnoException) => {
      const why = error.code === 'ECONNREFUSED' || error.code === 'ENOENT' ? 'refused' : 'error';
      finish(new ObserverUnavailable(why, `cannot reach the observer at ${socket} (${error.code ?? error.message})`));
    });
    connection.on('close', () => finish(new ObserverUnavailable('error', `the observer closed the connection before answering "${method}"`)));
  });
}
