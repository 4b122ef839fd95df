import { closeSync, openSync, readdirSync, readFileSync, readSync } from 'node:fs';

/**
 * A traced check's leftovers. strace(1) with -f waits for every process it traces, so a process
 * the check started in the background and left running (a daemon it spawned detached) would keep
 * the run from ending for as long as that process lives. It could not live on usefully anyway:
 * its seccomp filter stays after its tracer is gone, and the calls the filter names then fail
 * with ENOSYS (seccomp(2), SECCOMP_RET_TRACE: "If there is no tracer present, the system call is
 * not executed and returns a failure status with errno set to ENOSYS").
 *
 * So once the check's own process has ended, and a grace period after it, what the tracer still
 * traces is ended, and the run ends with the check's own exit status, which strace keeps.
 */
export interface LeftoverWatch {
  stop(): void;
}

const POLL_MS = 100;

export function endLeftovers(tracerPid: number, logPath: string, graceMs: number, ended: (count: number) => void): LeftoverWatch {
  let main: number | null = null;
  let exitedAt: number | null = null;
  const timer = setInterval(() => {
    // The check's own process is the one whose execve the log begins with; strace forked it.
    main ??= firstPid(logPath);
    if (main === null) return;
    const children = childrenOf(tracerPid);
    if (children === null || children.includes(main)) return;
    exitedAt ??= Date.now();
    if (Date.now() - exitedAt < graceMs) return;
    const left = tracedBy(tracerPid);
    for (const pid of left) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
    if (left.length > 0) ended(left.length);
    clearInterval(timer);
  }, POLL_MS);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

/** The pid a strace -f log's first line begins with, once it is written. */
function firstPid(logPath: string): number | null {
  let fd: number;
  try {
    fd = openSync(logPath, 'r');
  } catch {
    return null;
  }
  try {
    const head = Buffer.alloc(32);
    const read = readSync(fd, head, 0, head.length, 0);
    const pid = /^(\d+) /.exec(head.toString('latin1', 0, read))?.[1];
    return pid === undefined ? null : Number(pid);
  } finally {
    closeSync(fd);
  }
}

/** The direct children of a process (proc(5), /proc/PID/task/TID/children); null when that cannot be read. */
function childrenOf(pid: number): number[] | null {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return null;
  }
}

/** Every process whose tracer is `tracerPid` (proc(5), "TracerPid"). */
function tracedBy(tracerPid: number): number[] {
  const traced: number[] = [];
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return traced;
  }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const tracer = /^TracerPid:\s*(\d+)/m.exec(readFileSync(`/proc/${name}/status`, 'utf8'))?.[1];
      if (tracer !== undefined && Number(tracer) === tracerPid) traced.push(Number(name));
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return traced;
}
