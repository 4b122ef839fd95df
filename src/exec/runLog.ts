import { closeSync, constants, ftruncateSync, openSync, writeSync } from 'node:fs';
import { openStateFile } from '../store/stateDir.js';

/** What a log keeps of itself when it cannot be written to the end: enough to see how the check began. */
export const LOG_KEPT_BYTES = 64 * 1024;

export interface RunLog {
  write(chunk: Buffer | string): void;
  /** Closes the log; says why it is incomplete, or null when every byte was written. */
  close(): string | null;
}

/**
 * Opens a run's log in the state dir, empty, owner-only and through no link
 * (state-dir-unsafe). Throws the open error: the caller decides whether the run can start.
 */
export function openRunLog(path: string, stateDir: string): RunLog {
  const fd = openStateFile(path, 'truncate', stateDir);
  let written = 0;
  let failure: string | null = null;
  let open = true;
  const stop = (error: unknown) => {
    failure = (error as NodeJS.ErrnoException).code ?? String(error);
    // Gives the space back, so the receipt can still be saved on a full disk; the head stays readable.
    try {
      ftruncateSync(fd, Math.min(written, LOG_KEPT_BYTES));
    } catch {
      // the log stays as it is; the receipt says it is incomplete either way
    }
    closeQuietly();
  };
  const closeQuietly = () => {
    if (!open) return;
    open = false;
    try {
      closeSync(fd);
    } catch (error) {
      // close(2) can report a deferred write error (ENOSPC on NFS): the log is then incomplete.
      failure ??= (error as NodeJS.ErrnoException).code ?? String(error);
    }
  };
  return {
    write(chunk) {
      if (!open) return;
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      try {
        // Written synchronously: an error lands here, not as an unhandled stream event, and
        // the check's pipe waits for a slow disk instead of its output piling up in memory.
        let offset = 0;
        while (offset < bytes.length) {
          const count = writeSync(fd, bytes, offset, bytes.length - offset);
          offset += count;
          written += count;
        }
      } catch (error) {
        stop(error);
      }
    },
    close() {
      closeQuietly();
      return failure;
    },
  };
}

/** Empties a closed log, through no link, to give its space back. */
export function emptyRunLog(path: string): boolean {
  try {
    closeSync(openSync(path, constants.O_WRONLY | constants.O_TRUNC | constants.O_NOFOLLOW));
    return true;
  } catch {
    return false;
  }
}
