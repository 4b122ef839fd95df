import { VouchError } from '../core/errors.js';

/**
 * Errors that mean "no room left", not "not allowed": ENOSPC and EDQUOT from the
 * file system (write(2)), SQLITE_FULL from SQLite, and SQLITE_IOERR_SHMSIZE,
 * which is how opening a WAL database fails when its -shm file cannot grow
 * (https://www.sqlite.org/rescode.html#full, #ioerr_shmsize).
 */
export function isDiskFull(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | null)?.code ?? '';
  return code === 'ENOSPC' || code === 'EDQUOT' || code.startsWith('SQLITE_FULL') || code === 'SQLITE_IOERR_SHMSIZE';
}

/** The disk holding the state dir is full: its own code and exit code (74, sysexits' EX_IOERR). */
export function diskFull(stateDir: string, error: unknown): VouchError {
  const code = (error as NodeJS.ErrnoException | null)?.code ?? String(error);
  return new VouchError(
    'disk-full',
    `the disk holding the state dir ${stateDir} is full (${code}); free some space on it, or keep state elsewhere with --state-dir DIR`,
    74,
  );
}
