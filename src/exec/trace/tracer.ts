import { spawn, spawnSync } from 'node:child_process';
import { closeSync, createReadStream, openSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import type { RunFacts } from '../../core/runFacts.js';
import { StraceLogParser } from './straceLog.js';
import { resolveExecutable } from '../resolveExecutable.js';

/**
 * Runs a command under strace(1) and reads back what its whole process tree touched.
 *
 * strace with `--seccomp-bpf` installs a seccomp filter in the traced processes, so ptrace
 * stops them only on the traced calls (file and process calls), not on every system call
 * (strace(1), "--seccomp-bpf"; seccomp(2), SECCOMP_RET_TRACE). It sees native tools (Go,
 * Rust) as well as Node, which a Node preload or LD_PRELOAD would miss.
 *
 * A trace that cannot run, or that ran and failed, is a reason, never an empty set of facts:
 * "the check read nothing" would make every receipt CURRENT forever. The reasons are this
 * module's own codes (they are not in core's ReasonCode until a receipt carries them):
 *
 * - `not-linux`: ptrace and strace are Linux's (macOS has neither);
 * - `strace-missing`: strace is not on PATH;
 * - `ptrace-refused`: the kernel said EPERM to ptrace: the process is already traced (a
 *   debugger, another strace, some sandboxes), `kernel.yama.ptrace_scope` is 3, or a
 *   container without CAP_SYS_PTRACE (ptrace(2), "EPERM"; the kernel's Yama documentation,
 *   https://www.kernel.org/doc/html/latest/admin-guide/LSM/Yama.html);
 * - `seccomp-unsupported`: strace could not install its seccomp filter (or is too old to know
 *   `--seccomp-bpf`); tracing would stop on every call and cost far more than it saves;
 * - `probe-failed`: strace failed for another reason, in its own words;
 * - `trace-failed`: a traced run left no usable log (strace died, or never started the command).
 */
export type TraceReasonCode = 'not-linux' | 'strace-missing' | 'ptrace-refused' | 'seccomp-unsupported' | 'probe-failed' | 'trace-failed';

export interface TraceRefusal {
  code: TraceReasonCode;
  message: string;
}

export type TraceAvailability = { available: true; strace: string } | ({ available: false } & TraceRefusal);

/** Where to install strace, by the package manager's name. */
export const STRACE_INSTALL_HINT = 'install strace: `apt-get install strace` (Debian, Ubuntu), `dnf install strace` (Fedora), `apk add strace` (Alpine), `pacman -S strace` (Arch)';

/**
 * The traced calls: %file (every call that takes a path), %process (fork, clone, execve, so
 * each child's working directory is known), getdents64 (directory listings; `?getdents`, the
 * old call, where the architecture has it), fchdir (a working directory from an fd),
 * io_uring_setup, which INJECT answers, and bind and connect (a unix socket to a process
 * outside the trace).
 */
export const TRACE_FILTER = 'trace=%file,%process,getdents64,?getdents,fchdir,?io_uring_setup,bind,connect';

/**
 * io_uring_setup fails with ENOSYS, as on a kernel without io_uring: file operations submitted
 * to a ring are no system calls, and no tracer of system calls would see them (io_uring(7)).
 * A runtime that gets no ring uses plain calls (libuv, under Node, does; io_uring_setup(2)).
 * strace must stop on the call to inject, so it is in TRACE_FILTER too.
 */
export const INJECT = 'inject=io_uring_setup:error=ENOSYS';

/**
 * Each exec's environment printed whole, not as a count (strace(1), -e abbrev): NODE_OPTIONS set
 * by the check's own command, for a process it starts, decides what ran in that process before
 * its script (exec/trace/straceLog.ts).
 */
export const ENVIRONMENTS = 'abbrev=!execve,execveat';

/** Long enough for any path Linux accepts (PATH_MAX, 4096): readlink's answer is printed as a string, cut at -s. */
const STRING_LIMIT = 4096;

/**
 * The command that runs `argv` traced, writing the log to `logPath`: -f follows every child,
 * -qq keeps attach and exit messages out of the log, -y prints each fd's path (and AT_FDCWD's
 * directory), -e signal=none keeps signal lines out, ENVIRONMENTS prints each exec's environment.
 * Flags as strace(1) documents them.
 */
export function tracedArgv(argv: readonly string[], logPath: string, strace = 'strace'): string[] {
  return [strace, '-f', '-qq', '--seccomp-bpf', '-y', '-s', String(STRING_LIMIT), '-e', TRACE_FILTER, '-e', INJECT, '-e', 'signal=none', '-e', ENVIRONMENTS, '-o', logPath, '--', ...argv];
}

let cached: TraceAvailability | undefined;

/**
 * Whether tracing can run in this process, and if not why. Probed once per process by
 * tracing `sh -c :` (a few milliseconds), then cached: the answer does not change while the
 * process lives.
 */
export function traceAvailability(): TraceAvailability {
  cached ??= probeTracing();
  return cached;
}

let probing: Promise<TraceAvailability> | undefined;

/**
 * The same probe, started now and not waited for: a run starts it once it knows it will trace,
 * and the probe's strace runs while the run takes its lock and opens the store. traceAvailability()
 * then takes its answer; one asked before it is in probes again, synchronously.
 */
export function probeTracingSoon(platform: NodeJS.Platform = process.platform): Promise<TraceAvailability> {
  if (cached) return Promise.resolve(cached);
  probing ??= new Promise<TraceAvailability>((resolve) => {
    if (platform !== 'linux') return resolve(notLinux(platform));
    let stderr = '';
    let done = false;
    const settle = (availability: TraceAvailability) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve((cached ??= availability));
    };
    const probe = spawn('strace', PROBE_ARGS, { stdio: ['ignore', 'ignore', 'pipe'] });
    const timer = setTimeout(() => {
      probe.kill('SIGKILL');
      settle({ available: false, code: 'probe-failed', message: 'strace could not be run: it did not finish within 10 s' });
    }, PROBE_TIMEOUT_MS);
    probe.stderr.setEncoding('utf8');
    probe.stderr.on('data', (chunk: string) => (stderr += chunk));
    probe.on('error', (error: NodeJS.ErrnoException) => settle(probeError(error)));
    probe.on('close', (status) => settle(found(classifyProbe(status, stderr))));
  });
  return probing;
}

const PROBE_ARGS = ['-f', '-qq', '--seccomp-bpf', '-e', 'trace=execve', '-o', '/dev/null', '--', 'sh', '-c', ':'];
const PROBE_TIMEOUT_MS = 10_000;

/** The probe itself, uncached: for tests. */
export function probeTracing(platform: NodeJS.Platform = process.platform): TraceAvailability {
  if (platform !== 'linux') return notLinux(platform);
  const probe = spawnSync('strace', PROBE_ARGS, { encoding: 'utf8', timeout: PROBE_TIMEOUT_MS });
  const error = probe.error as NodeJS.ErrnoException | undefined;
  if (error) return probeError(error);
  return found(classifyProbe(probe.status, probe.stderr ?? ''));
}

/**
 * The strace the probe ran, by its path: a run's tracer is the one probed, whatever the check's
 * own PATH holds, and the native client that may start it execs what it is given
 * (native/clientRun.c).
 */
function found(availability: TraceAvailability): TraceAvailability {
  if (!availability.available) return availability;
  return { ...availability, strace: resolveExecutable(availability.strace, workingDirectory(), process.env.PATH ?? '') ?? availability.strace };
}

/** Where a relative PATH entry points, as the probe's spawn found it; '/' once the directory is gone. */
function workingDirectory(): string {
  try {
    return process.cwd();
  } catch {
    return '/';
  }
}

function notLinux(platform: NodeJS.Platform): TraceAvailability {
  return { available: false, code: 'not-linux', message: `tracing needs Linux's ptrace and strace; this is ${platform}: the check falls back to its declared inputs` };
}

function probeError(error: NodeJS.ErrnoException): TraceAvailability {
  if (error.code === 'ENOENT') return { available: false, code: 'strace-missing', message: `strace is not installed: ${STRACE_INSTALL_HINT}` };
  return { available: false, code: 'probe-failed', message: `strace could not be run: ${error.message}` };
}

/** What strace's exit status and its own messages say about tracing here. */
export function classifyProbe(status: number | null, stderr: string): TraceAvailability {
  const said = stderr.trim().split('\n').filter(Boolean).slice(0, 3).join('; ');
  if (/Operation not permitted|EPERM/.test(stderr)) {
    const scope = yamaScope();
    const tracer = tracerPid();
    const why = tracer ? `this process is already traced (TracerPid ${tracer}), and a process has one tracer at most` : scope === '3' ? 'kernel.yama.ptrace_scope is 3, which forbids ptrace' : 'a sandbox or container refuses ptrace (it needs CAP_SYS_PTRACE or a seccomp profile that allows it)';
    return { available: false, code: 'ptrace-refused', message: `ptrace was refused: ${why} (strace: ${said})` };
  }
  if (/seccomp/i.test(stderr) || /unrecognized option/.test(stderr)) return { available: false, code: 'seccomp-unsupported', message: `strace could not filter with seccomp-bpf, and tracing every call costs too much (strace: ${said})` };
  if (status !== 0) return { available: false, code: 'probe-failed', message: `strace failed with status ${status} (strace: ${said || 'no message'})` };
  return { available: true, strace: 'strace' };
}

function yamaScope(): string | null {
  try {
    return readFileSync('/proc/sys/kernel/yama/ptrace_scope', 'utf8').trim();
  } catch {
    return null;
  }
}

/** The pid tracing this process, from /proc/self/status (proc(5), "TracerPid"); null when none. */
function tracerPid(): string | null {
  try {
    const pid = /^TracerPid:\s*(\d+)/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
    return pid && pid !== '0' ? pid : null;
  } catch {
    return null;
  }
}

export interface TracedRunOptions {
  argv: readonly string[];
  cwd: string;
  /** A directory the caller owns: the log is created in it with O_EXCL, so no other file is ever overwritten. */
  logDir: string;
  env?: NodeJS.ProcessEnv;
  /** The cap on distinct paths (core/runFacts.ts). */
  cap?: number;
}

export type TracedRun =
  | { traced: true; exitCode: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string; facts: RunFacts; logPath: string }
  | { traced: false; refusal: TraceRefusal; exitCode: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string };

let logSerial = 0;

/**
 * Runs a command traced and returns its run facts: for the tests and the benchmark (the
 * check runner will stream its output instead of collecting it). A command that could not be
 * traced is not run at all, and the answer says why.
 */
export async function runTraced(options: TracedRunOptions): Promise<TracedRun> {
  const availability = traceAvailability();
  if (!availability.available) return { traced: false, refusal: { code: availability.code, message: availability.message }, exitCode: null, signal: null, stdout: '', stderr: '' };
  const logPath = join(options.logDir, `trace-${process.pid}-${++logSerial}.log`);
  // O_EXCL: the log is a new file of ours; strace then reopens it by name to write.
  closeSync(openSync(logPath, 'wx', 0o600));
  const [program, ...args] = tracedArgv(options.argv, logPath, availability.strace);
  const child = spawn(program!, args, { cwd: options.cwd, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const { exitCode, signal } = await new Promise<{ exitCode: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, sig) => resolve({ exitCode: code, signal: sig }));
  });
  // The kernel's view of the directory (links resolved), as strace prints AT_FDCWD's.
  const read = await readTraceLog(logPath, realpathSync(options.cwd), options.cap);
  if (!read.started) {
    const said = stderr.split('\n').filter((line) => line.startsWith('strace: ')).slice(0, 3).join('; ');
    return { traced: false, refusal: { code: 'trace-failed', message: `strace did not start the command (${said || `exit ${exitCode ?? signal}`})` }, exitCode, signal, stdout, stderr };
  }
  return { traced: true, exitCode, signal, stdout, stderr, facts: read.facts, logPath };
}

/**
 * Reads a finished log line by line. `started` says whether the log shows the command's own
 * successful execve first: without it strace never ran the command, and its facts would be
 * an empty set that means nothing.
 */
export async function readTraceLog(logPath: string, cwd: string, cap?: number): Promise<{ started: boolean; facts: RunFacts }> {
  const parser = new StraceLogParser({ cwd, cap });
  let first: string | null = null;
  let rest = '';
  // Split by hand: readline costs several times the parse on a log of tens of thousands of lines.
  for await (const chunk of createReadStream(logPath, { encoding: 'utf8', highWaterMark: 1 << 20 })) {
    const lines = (rest + (chunk as string)).split('\n');
    rest = lines.pop()!;
    for (const line of lines) {
      first ??= line;
      parser.line(line);
    }
  }
  if (rest !== '') {
    first ??= rest;
    parser.line(rest);
  }
  const started = first !== null && /^\d+ +execve\(.*\) = 0$/.test(first);
  return { started, facts: parser.finish() };
}
