import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { expect } from 'vitest';
import type { Json } from './answers.js';
import { CLI, cleanEnv, type CliResult, type TempProject } from './project.js';

/*
 * Starting, asking and always ending observers in tests. An observer is a
 * detached process: a test that forgets one leaves it running after the
 * suite, so every start goes through a tracker that afterEach drains.
 */

/** A client deadline long enough that a slow observer cannot hide behind the fallback to a scan. */
export const PATIENT = '60000';

/**
 * The process state letter from /proc (R, S, T, Z...), or null when there is
 * no such process. An orphan nobody reaps stays a zombie (Z) for good: it is
 * dead, although kill(pid, 0) still finds it.
 */
export function processState(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] ?? null;
  } catch {
    return null;
  }
}

export function isRunning(pid: number): boolean {
  const state = processState(pid);
  return state !== null && state !== 'Z' && state !== 'X';
}

/** Whether pid is a vouch process; guards the kills below against a pid reused by someone else. */
export function isVouchProcess(pid: number): boolean {
  try {
    // The repo's bundle, or a copy of it (a test may run another version).
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8')
      .split('\0')
      .some((arg) => arg === CLI || arg.endsWith('/dist/bin/main.js'));
  } catch {
    return false;
  }
}

export async function until<T>(probe: () => T | null | undefined | false | Promise<T | null | undefined | false>, what: string, timeoutMs = 20_000, stepMs = 25): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await delay(stepMs);
  }
}

/** The files an observer keeps in <stateDir>/observer/: records (.json), sockets (.sock), pid files. */
export function observerDirEntries(stateDir: string): string[] {
  try {
    return readdirSync(join(stateDir, 'observer')).sort();
  } catch {
    return [];
  }
}

/** The last lines of every observer log in a state dir: what a failed expectation about an observer should show. */
export function observerLogTail(stateDir: string, lines = 40): string {
  return observerDirEntries(stateDir)
    .filter((name) => name.endsWith('.log'))
    .map((name) => `${name}:\n${readFileSync(join(stateDir, 'observer', name), 'utf8').split('\n').slice(-lines).join('\n')}`)
    .join('\n');
}

/** Records and sockets: what a stopped or cleaned-up observer must not leave behind. Logs may stay. */
export function liveFiles(stateDir: string): string[] {
  return observerDirEntries(stateDir).filter((name) => /\.(json|sock|pid)$/.test(name));
}

/** The observer records in a state dir, parsed. */
export function observerRecords(stateDir: string): { file: string; record: Json }[] {
  const out: { file: string; record: Json }[] = [];
  for (const name of observerDirEntries(stateDir)) {
    if (!name.endsWith('.json')) continue;
    const file = join(stateDir, 'observer', name);
    try {
      out.push({ file, record: JSON.parse(readFileSync(file, 'utf8')) });
    } catch {
      // Half-written or removed meanwhile: not a record.
    }
  }
  return out;
}

interface Tracked {
  p: TempProject;
  /** --config/--state-dir arguments that select this observer. */
  args: string[];
  cwd: string;
  stateDir: string;
  pids: Set<number>;
}

/**
 * Every observer a test starts, so afterEach can stop it (and kill it when
 * stopping fails): no process outlives its test.
 */
export class ObserverTracker {
  private readonly tracked: Tracked[] = [];

  /** Selects an observer by project and the arguments that name its config and state dir. */
  private entry(p: TempProject, args: string[], cwd: string): Tracked {
    const key = JSON.stringify([p.root, cwd, args]);
    let found = this.tracked.find((t) => JSON.stringify([t.p.root, t.cwd, t.args]) === key);
    if (!found) {
      found = { p, args, cwd, stateDir: stateDirOf(p, args, cwd), pids: new Set() };
      this.tracked.push(found);
    }
    return found;
  }

  /** Remembers an observer's pid, for cleanup. */
  note(p: TempProject, args: string[], pid: unknown, cwd = p.root): void {
    const entry = this.entry(p, args, cwd);
    if (typeof pid === 'number' && pid > 0) entry.pids.add(pid);
  }

  /** `vouch start --json ARGS`, tracked; returns the parsed answer and the exit code. */
  start(p: TempProject, args: string[] = [], options: { env?: NodeJS.ProcessEnv; cwd?: string; startArgs?: string[] } = {}): Json {
    const cwd = options.cwd ?? p.root;
    this.entry(p, args, cwd);
    const result = p.vouch(['start', ...(options.startArgs ?? []), ...args, '--json'], { env: options.env ?? cleanEnv(), cwd, timeout: 60_000 });
    let out: Json;
    try {
      out = JSON.parse(result.stdout);
    } catch {
      throw new Error(`vouch start ${args.join(' ')} --json printed no JSON (exit ${result.code}):\n${result.stdout}\n${result.stderr}`);
    }
    this.note(p, args, out.pid, cwd);
    expect(result.code, `vouch start: ${result.stdout}\n${result.stderr}`).toBe(0);
    return out;
  }

  /** Stops every tracked observer; kills what does not stop. Never throws before everything is ended. */
  async cleanup(): Promise<string[]> {
    const problems: string[] = [];
    for (const t of this.tracked.splice(0)) {
      for (const { record } of observerRecords(t.stateDir)) if (typeof record.pid === 'number') t.pids.add(record.pid);
      // A stopped (SIGSTOP) observer would never hear the stop.
      for (const pid of t.pids) if (isRunning(pid) && isVouchProcess(pid)) process.kill(pid, 'SIGCONT');
      if ([...t.pids].some((pid) => isRunning(pid))) {
        // Asynchronously: a --foreground observer is this process's child, and is reaped only while its event loop runs.
        const stopped = await vouchAsync(t.cwd, ['stop', ...t.args, '--json'], 20_000);
        if (stopped.code !== 0) problems.push(`vouch stop exited ${stopped.code}: ${stopped.output}`);
      }
      for (const pid of t.pids) {
        const gone = await waitGone(pid, 3_000);
        if (!gone && isVouchProcess(pid)) {
          problems.push(`observer ${pid} outlived vouch stop; killed`);
          process.kill(pid, 'SIGKILL');
          await waitGone(pid, 3_000);
        }
      }
    }
    return problems;
  }
}

/** Runs the vouch CLI without blocking this process's event loop; kills it past the timeout. */
export function vouchAsync(cwd: string, args: string[], timeoutMs: number, env: NodeJS.ProcessEnv = cleanEnv()): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const timer = setTimeout(() => {
      output += `\n(killed after ${timeoutMs} ms)`;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

export async function waitGone(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (isRunning(pid)) {
    if (Date.now() > deadline) return false;
    await delay(20);
  }
  return true;
}

/** The state dir vouch uses for these arguments: --state-dir, or .vouch at the root. */
function stateDirOf(p: TempProject, args: string[], cwd: string): string {
  const at = args.indexOf('--state-dir');
  const value = at >= 0 ? args[at + 1] : undefined;
  if (value === undefined) return join(p.root, '.vouch');
  return value.startsWith('/') ? value : join(cwd, value);
}

/** A check's answer, reduced to what an observed and a scanned answer must share. */
export interface Answer {
  name: string;
  freshness: string;
  result: string | null;
  reuse_eligible: boolean;
  run_id: string | null;
}

export function answersOf(status: Json): Answer[] {
  return status.checks.map((c: Json) => ({
    name: c.name,
    freshness: c.freshness,
    result: c.result,
    reuse_eligible: c.reuse_eligible,
    run_id: c.receipt?.run_id ?? null,
  }));
}

/** `vouch status --json ARGS` with its wall time. */
export function timedStatus(p: TempProject, args: string[], env: NodeJS.ProcessEnv = cleanEnv(), cwd = p.root): TimedStatus {
  const started = performance.now();
  const result = p.vouch(['status', ...args, '--json'], { env, cwd, timeout: 120_000 });
  return timedStatusOf(args, result, performance.now() - started);
}

export interface TimedStatus {
  out: Json;
  ms: number;
  code: number | null;
  stderr: string;
}

/** A `vouch status --json ARGS` result that took `ms`, its JSON parsed; a failure names what it printed. */
export function timedStatusOf(args: string[], result: CliResult, ms: number): TimedStatus {
  let out: Json;
  try {
    out = JSON.parse(result.stdout);
  } catch {
    throw new Error(`vouch status ${args.join(' ')} --json printed no JSON (exit ${result.code}):\n${result.stdout}\n${result.stderr}`);
  }
  return { out, ms, code: result.code, stderr: result.stderr };
}

/**
 * One newline-delimited JSON-RPC exchange over the observer's socket. Sends
 * the line as given (so malformed requests can be sent too) and resolves with
 * the first line back, parsed, or null when the observer closed without one.
 */
export function rpcExchange(socket: string, line: string, timeoutMs = 5_000): Promise<Json | null> {
  return new Promise((resolve, reject) => {
    const connection = connect(socket);
    let buffer = '';
    const timer = setTimeout(() => {
      connection.destroy();
      reject(new Error(`no answer over ${socket} within ${timeoutMs} ms to ${line.slice(0, 200)}`));
    }, timeoutMs);
    const finish = (value: Json | null) => {
      clearTimeout(timer);
      connection.destroy();
      resolve(value);
    };
    connection.setEncoding('utf8');
    connection.on('connect', () => connection.write(line));
    connection.on('data', (chunk: string) => {
      buffer += chunk;
      const end = buffer.indexOf('\n');
      if (end < 0) return;
      try {
        finish(JSON.parse(buffer.slice(0, end)));
      } catch {
        clearTimeout(timer);
        connection.destroy();
        reject(new Error(`the observer answered with something that is not JSON: ${buffer.slice(0, 200)}`));
      }
    });
    connection.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    connection.on('close', () => finish(null));
  });
}
