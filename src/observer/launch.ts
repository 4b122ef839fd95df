import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { VouchError } from '../core/errors.js';
import { processAlive } from '../fs/processStart.js';
import { callObserver, findObserver } from './client.js';
import { ensureObserverDir, removeObserverFiles, type ObserverFiles } from './observerFiles.js';
import type { ObserverReady } from './daemon.js';

export interface LaunchRequest {
  files: ObserverFiles;
  /** The vouch entry script and the arguments of its hidden daemon command. */
  entry: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
}

/** What the daemon reports on the readiness pipe (fd 3), once. */
export type ReadyLine = { ready: ObserverReady } | { error: { code: string; message: string } };

/**
 * Starts the observer fully detached (its own session, no terminal, output to
 * its log) and waits for its first index. The daemon's cwd is "/", so it holds
 * no directory of the project open.
 */
export async function launchObserver(request: LaunchRequest): Promise<ObserverReady> {
  ensureObserverDir(request.files);
  const log = openSync(request.files.log, 'a', 0o600);
  const child = spawn(process.execPath, [request.entry, ...request.args], {
    cwd: '/',
    detached: true,
    env: request.env,
    stdio: ['ignore', log, log, 'pipe'],
  });
  closeSync(log);
  const pipe = child.stdio[3] as NodeJS.ReadableStream;
  pipe.setEncoding('utf8');
  try {
    const line = await new Promise<ReadyLine>((resolve, reject) => {
      let buffer = '';
      const timer = setTimeout(() => reject(new VouchError('observer-start-timeout', `the observer did not finish its first index within ${request.timeoutMs} ms; see ${request.files.log}`)), request.timeoutMs);
      pipe.on('data', (chunk: string) => {
        buffer += chunk;
        const end = buffer.indexOf('\n');
        if (end < 0) return;
        clearTimeout(timer);
        try {
          resolve(JSON.parse(buffer.slice(0, end)) as ReadyLine);
        } catch {
          reject(new VouchError('observer-start-failed', `the observer said something unexpected on start; see ${request.files.log}`));
        }
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new VouchError('observer-start-failed', `the observer exited on start (${signal ?? `code ${code}`}): ${logTail(request.files.log)}`));
      });
      child.once('error', (error) => {
        clearTimeout(timer);
        reject(new VouchError('observer-start-failed', `cannot start the observer: ${error.message}`));
      });
    });
    if ('error' in line) throw new VouchError(line.error.code, line.error.message);
    return line.ready;
  } catch (error) {
    if (child.exitCode === null) child.kill('SIGKILL');
    throw error;
  } finally {
    pipe.removeAllListeners();
    (pipe as unknown as { destroy(): void }).destroy();
    child.removeAllListeners();
    child.unref();
  }
}

function logTail(path: string): string {
  try {
    const lines = readFileSync(path, 'utf8').trimEnd().split('\n');
    return lines.slice(-5).join('\n') || 'no output';
  } catch {
    return 'no output';
  }
}

/**
 * Asks the observer to stop, and makes sure it did: one that does not exit
 * within the grace period is killed. Either way its files are removed.
 */
export async function stopObserver(stateDir: string, configPath: string, graceMs = 5_000): Promise<{ pid: number } | null> {
  const found = findObserver(stateDir, configPath);
  if (!found) return null;
  const { record, files } = found;
  await callObserver(record.socket, 'stop', {}, Math.min(graceMs, 2_000)).catch(() => process.kill(record.pid, 'SIGTERM'));
  const until = Date.now() + graceMs;
  while (processAlive(record.pid, record.processStart) && Date.now() < until) await delay(20);
  if (processAlive(record.pid, record.processStart)) {
    process.kill(record.pid, 'SIGKILL');
    while (processAlive(record.pid, record.processStart)) await delay(10);
  }
  removeObserverFiles(files, record.socket);
  return { pid: record.pid };
}
