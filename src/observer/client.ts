import { getSystemErrorName } from 'node:util';
import { loadAddon, type Addon } from '../fs/nativeAddon.js';
import { blockingObserverCallsAllowed } from './callMode.js';
import { checkObserverDir, observerFiles, readRecord, removeObserverFiles, trustedSocket, type ObserverFiles } from './observerFiles.js';
import { isSocket, ownedPrivately, recordAlive, type ObserverRecord } from './observerRecord.js';
import { addonDeadline, MAX_ANSWER_CHARS } from './callLimits.js';
import { localHandler } from './localCalls.js';
import type { MethodName, Methods } from './protocol.js';
import type { Handler } from './rpcServer.js';

export { DEFAULT_DEADLINE_MS, deadlineFrom } from './callLimits.js';
export { recordAlive } from './observerRecord.js';

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
 * by a dead process is removed, with its socket, so nothing stale lingers. A
 * record is untrusted (a repository may carry one): one whose socket is not
 * where vouch would put it is never connected to, and nothing it names
 * outside vouch's own files is removed. Nor is a socket path that is not a
 * socket of this user's, closed to others as the observer makes it: git can
 * check out a link there, to anyone's socket, and a record naming a process
 * that lives (pid 1 and its start time are easy to guess).
 */
export function findObserver(stateDir: string, configPath: string): FoundObserver | null {
  const files = observerFiles(stateDir, configPath);
  if (!checkObserverDir(files)) return null;
  const record = readRecord(files);
  if (record === null) return null;
  if (!recordAlive(record)) {
    removeObserverFiles(files, record.socket);
    return null;
  }
  if (!trustedSocket(files, record.socket) || !ownedPrivately(record.socket, isSocket)) return null;
  return { files, record };
}

let nextId = 1;
/** One call, one connection. A hung or dead observer costs at most the deadline. */
export async function callObserver<M extends MethodName>(
  socket: string,
  method: M,
  params: Methods[M]['params'],
  deadlineMs: number,
): Promise<Methods[M]['result']> {
  const local = localHandler(socket, method);
  if (local !== undefined) return localCall(local, method, params);
  const id = nextId++;
  const request = JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n';
  const addon = blockingObserverCallsAllowed() ? loadAddon() : null;
  const line = addon ? blockingExchange(addon, socket, method, request, deadlineMs) : await streamExchange(socket, method, request, deadlineMs);
  return answerOf<M>(line, id, method);
}

/** A call to a socket this process serves (localCalls.ts): the same handler, and JSON both ways, as over the socket. */
async function localCall<M extends MethodName>(handler: Handler, method: M, params: Methods[M]['params']): Promise<Methods[M]['result']> {
  let result: unknown;
  try {
    result = await handler(JSON.parse(JSON.stringify(params ?? {})));
  } catch (error) {
    throw new ObserverUnavailable('error', `the observer refused "${method}": ${(error as Error).message}`);
  }
  return JSON.parse(JSON.stringify(result)) as Methods[M]['result'];
}

function answerOf<M extends MethodName>(line: string, id: number, method: M): Methods[M]['result'] {
  let message: { id?: number; result?: unknown; error?: { message?: string } };
  try {
    message = JSON.parse(line);
  } catch {
    throw new ObserverUnavailable('protocol', 'the observer sent something that is not JSON');
  }
  if (message.id !== id) throw new ObserverUnavailable('protocol', 'the observer answered another request');
  if (message.error) throw new ObserverUnavailable('error', `the observer refused "${method}": ${message.error.message ?? 'unknown error'}`);
  return message.result as Methods[M]['result'];
}

const timedOut = (method: string, deadlineMs: number) => new ObserverUnavailable('timeout', `the observer did not answer "${method}" within ${deadlineMs} ms`);
const oversized = () => new ObserverUnavailable('protocol', 'the observer sent an oversized answer');
const closedEarly = (method: string) => new ObserverUnavailable('error', `the observer closed the connection before answering "${method}"`);
const unreachable = (why: 'refused' | 'error', socket: string, code: string) => new ObserverUnavailable(why, `cannot reach the observer at ${socket} (${code})`);

function blockingExchange(addon: Addon, socket: string, method: string, request: string, deadlineMs: number): string {
  const answer = addon.callObserver(socket, request, addonDeadline(deadlineMs), MAX_ANSWER_CHARS);
  switch (answer.outcome) {
    case 'answered':
      return answer.reply;
    case 'timeout':
      throw timedOut(method, deadlineMs);
    case 'oversized':
      throw oversized();
    case 'closed':
      throw closedEarly(method);
    case 'refused':
    case 'error':
      throw unreachable(answer.outcome, socket, errnoName(answer.errno));
  }
}

function errnoName(errno: number): string {
  try {
    return getSystemErrorName(-errno);
  } catch {
    return `errno ${errno}`;
  }
}

/** The first line the observer sends back, through node:net, loaded only here. */
async function streamExchange(socket: string, method: string, request: string, deadlineMs: number): Promise<string> {
  const { connect } = await import('node:net');
  return new Promise((resolve, reject) => {
    const connection = connect(socket);
    const parts: string[] = [];
    let length = 0;
    let settled = false;
    const finish = (error: ObserverUnavailable | null, line = '') => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      connection.destroy();
      if (error) reject(error);
      else resolve(line);
    };
    const timer = setTimeout(() => finish(timedOut(method, deadlineMs)), deadlineMs);
    connection.setEncoding('utf8');
    connection.on('connect', () => connection.write(request));
    connection.on('data', (chunk: string) => {
      // Only the new chunk is searched: an answer of many chunks costs linear time.
      const end = chunk.indexOf('\n');
      if (end >= 0) return finish(null, parts.join('') + chunk.slice(0, end));
      parts.push(chunk);
      length += chunk.length;
      if (length > MAX_ANSWER_CHARS) finish(oversized());
    });
    connection.on('error', (error: NodeJS.ErrnoException) => {
      finish(unreachable(error.code === 'ECONNREFUSED' || error.code === 'ENOENT' ? 'refused' : 'error', socket, error.code ?? error.message));
    });
    connection.on('close', () => finish(closedEarly(method)));
  });
}
