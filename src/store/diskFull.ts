import { VouchError } from '../core/errors.js';

/** The exit code agreed for a full disk (sysexits' EX_IOERR). */
export const DISK_FULL_EXIT = 74;

/**
 * Whether an error means the disk (or the user's quota on it) has no room. SQLite reports a
 * write that found no space as SQLITE_FULL; growing the WAL index (-shm), which it does with
 * ftruncate and a write per page, reports SQLITE_IOERR_SHMSIZE, the only way that step fails
 * once the directory is writable (https://www.sqlite.org/rescode.html#ioerr_shmsize).
 */
export function isDiskFull(error: unknown): boolean {
  if (error instanceof VouchError) return error.code === 'disk-full';
  const code = (error as NodeJS.ErrnoException | null)?.code ?? '';
  return code === 'ENOSPC' || code === 'EDQUOT' || code.startsWith('SQLITE_FULL') || code === 'SQLITE_IOERR_SHMSIZE';
}

export function diskFull(stateDir: string, error: unknown): VouchError {
  if (error instanceof VouchError && error.code === 'disk-full') return error;
  const code = (error as NodeJS.ErrnoException | null)?.code ?? String(error);
  return new VouchError(
    'disk-full',
    `the disk holding the state dir ${stateDir} is full (${code}); free space on it, or keep state elsewhere with --state-dir DIR`,
    DISK_FULL_EXIT,
  );
}

/** Said by a command that still answered: what it read is sound, what it would have written is not there. */
export function diskFullNotice(stateDir: string): string {
  return `the disk holding the state dir ${stateDir} is full: this answer comes from the receipts already there, and nothing from this command was saved; free space on it, or keep state elsewhere with --state-dir DIR`;
}

/** Adds a notice once, however many writes were skipped. */
export function noteOnce(notices: string[], notice: string): void {
  if (!notices.includes(notice)) notices.push(notice);
}
