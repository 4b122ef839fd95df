import { readFileSync } from 'node:fs';

/** The fields of /proc/<pid>/stat after the command name, which may hold spaces and parentheses. */
function statFields(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** The kernel's start time of a process, so a reused pid is not mistaken for the one recorded. */
export function processStart(pid: number): string | null {
  return statFields(pid)?.[19] ?? null;
}

/**
 * Whether the process recorded as (pid, start) still runs. A zombie does not:
 * where nobody reaps orphans it keeps its pid for good, and kill(pid, 0) still
 * finds it. Without /proc, a live pid is taken as it.
 */
export function processAlive(pid: number, start: string | null): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  return aliveByStat(statFields(pid), start, procAvailable);
}

/**
 * The decision once kill(pid, 0) found the pid: by its /proc/<pid>/stat fields (null when there
 * are none to read). No fields where this system has a /proc means the process ended between the
 * kill and the read; only without a /proc is a live pid taken as the process.
 */
export function aliveByStat(fields: string[] | null, start: string | null, hasProc: () => boolean): boolean {
  if (fields === null) return !hasProc();
  if (fields[0] === 'Z' || fields[0] === 'X') return false;
  return start === null || fields[19] === start;
}

/** A process's argv, from /proc/<pid>/cmdline; null where there is no /proc or no such process. */
export function processArgv(pid: number): string[] | null {
  try {
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return cmdline.length === 0 ? null : cmdline.replace(/\0$/, '').split('\0');
  } catch {
    return null;
  }
}

/** Whether this system has a /proc to tell processes apart by (Linux does; macOS does not). */
export function procAvailable(): boolean {
  return processStart(process.pid) !== null;
}

let cachedBootId: string | null | undefined;

/**
 * This boot's random id (proc(5), /proc/sys/kernel/random/boot_id): a record
 * that names it was written on this machine since it booted, not shipped in a
 * repository, which cannot know it. Null where there is no /proc.
 */
export function bootId(): string | null {
  if (cachedBootId === undefined) {
    try {
      cachedBootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || null;
    } catch {
      cachedBootId = null;
    }
  }
  return cachedBootId;
}
