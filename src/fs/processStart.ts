import { readFileSync } from 'node:fs';

/** The kernel's start time of a process, so a reused pid is not mistaken for the one recorded. */
export function processStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 22; the command name (field 2) may hold spaces, so count from its closing parenthesis.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

/** Whether the process recorded as (pid, start) still runs. Without /proc, a live pid is taken as it. */
export function processAlive(pid: number, start: string | null): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const now = processStart(pid);
  return start === null || now === null || now === start;
}
