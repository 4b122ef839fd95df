import { spawn } from 'node:child_process';
import { closeSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { VouchError, type VouchErrorCode } from '../core/errors.js';
import { processAlive } from '../fs/processStart.js';
import { readStateFile } from '../store/stateDir.js';
import { callObserver, findObserver } from './client.js';
import { ensureObserverDir, observerIdentity, openObserverLog, removeObserverFiles, type ObserverFiles } from './observerFiles.js';
import type { ObserverReady } from './daemon.js';

export interface LaunchRequest {
  files: ObserverFiles;
  /** The vouch entry script and the arguments of its hidden daemon command. */
  entry: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
}

/**
 * V8's young generation at 1 MB a semi-space, not Node 20's 16: the observer's garbage is a scan's
 * short-lived strings, and each rescan grew the process by the young generation's high-water mark.
 * Measured at 100k sources + 50k installed files after three rescans: 276 MB RSS against 343, at
 * the same scan time within the noise (docs/benchmarks.md). --expose-gc: the daemon collects after
 * each full scan (daemon.ts). --heap-growing-percent=20: after each full collection V8 lets the old
 * generation grow by a fifth before the next, not by a factor it picks itself (up to 4): a scan's
 * garbage is then collected while it runs, and three rescans peaked at 198 MB against 222.
 */
const DAEMON_FLAGS = ['--max-semi-space-size=1', '--expose-gc', '--heap-growing-percent=20'];

/**
 * glibc's malloc raises its mmap threshold to the size of each large block freed, up to 32 MB, so
 * after the first scan its multi-MB buffers (git's listing, the stat cache's columns, the installed
 * lines) come from the heap, and what they leave free there stays in the process's RSS. A fixed
 * threshold turns that adjustment off (mallopt(3), M_MMAP_THRESHOLD): blocks of 128 kB or more are
 * mapped and given back when freed. Measured at 100k sources + 50k installed files: 157 MB RSS at
 * ready against 187, and 30 to 50 MB less after rescans (docs/benchmarks.md). Other C libraries
 * ignore the variable; a threshold the user set is left alone.
 * https://man7.org/linux/man-pages/man3/mallopt.3.html
 */
export function daemonEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const tunables = env.GLIBC_TUNABLES ?? '';
  if (env.MALLOC_MMAP_THRESHOLD_ !== undefined || tunables.includes('glibc.malloc.mmap_threshold')) return env;
  const threshold = 'glibc.malloc.mmap_threshold=131072';
  return { ...env, GLIBC_TUNABLES: tunables === '' ? threshold : `${tunables}:${threshold}` };
}

/** What the daemon reports on the readiness pipe (fd 3), once: on a failure, its VouchError's own code. */
export type ReadyLine = { ready: ObserverReady } | { error: { code: VouchErrorCode; message: string } };

/**
 * Starts the observer fully detached (its own session, no terminal, output to
 * its log) and waits for its first index. The daemon's cwd is "/", so it holds
 * no directory of the project open.
 */
export async function launchObserver(request: LaunchRequest): Promise<ObserverReady> {
  ensureObserverDir(request.files);
  const log = openObserverLog(request.files);
  const child = spawn(process.execPath, [...DAEMON_FLAGS, request.entry, ...request.args], {
    cwd: '/',
    detached: true,
    env: daemonEnv(request.env),
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
  const lines = (readStateFile(path) ?? '').trimEnd().split('\n');
  return lines.slice(-5).join('\n') || 'no output';
}

/**
 * Asks the observer to stop, and makes sure it did: one that does not exit
 * within the grace period is killed. Either way its files are removed. A
 * signal goes only to a process that /proc shows is this observer: the record
 * may be a repository's, naming any pid.
 */
export async function stopObserver(stateDir: string, configPath: string, graceMs = 5_000): Promise<{ pid: number } | null> {
  const found = findObserver(stateDir, configPath);
  if (!found) return null;
  const { record, files } = found;
  const identity = observerIdentity(record, files);
  if (identity === 'not-it') {
    // A reused pid, or a planted record: whatever runs there is left alone, and the record goes.
    removeObserverFiles(files, record.socket);
    return null;
  }
  const asked = await callObserver(record.socket, 'stop', {}, Math.min(graceMs, 2_000)).then(
    () => true,
    () => false,
  );
  if (!asked) {
    if (identity !== 'verified') throw unverified(record.pid, files, 'does not answer');
    process.kill(record.pid, 'SIGTERM');
  }
  const until = Date.now() + graceMs;
  while (processAlive(record.pid, record.processStart) && Date.now() < until) await delay(20);
  if (processAlive(record.pid, record.processStart)) {
    if (observerIdentity(record, files) !== 'verified') throw unverified(record.pid, files, `did not exit within ${graceMs} ms`);
    process.kill(record.pid, 'SIGKILL');
    while (processAlive(record.pid, record.processStart)) await delay(10);
  }
  removeObserverFiles(files, record.socket);
  return { pid: record.pid };
}

function unverified(pid: number, files: ObserverFiles, what: string): VouchError {
  return new VouchError(
    'observer-unverified',
    `the observer (pid ${pid}) ${what}, and without /proc vouch cannot tell that pid is really the observer, so it sends no signal; if it is, end it yourself (kill ${pid}) and remove ${files.record}`,
  );
}
