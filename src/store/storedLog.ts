import { closeSync, constants, fstatSync, lstatSync, openSync, readSync } from 'node:fs';
import { isAbsolute, join, normalize, sep } from 'node:path';
import type { StoredLog } from '../core/replay.js';

/** A log up to this size can be read whole (grep needs all of it); a larger one only at one end. */
export const WHOLE_LOG_BYTES = 16 * 1024 * 1024;
/** What tail, head and a tool's summary need: the end shown, far more than the 8 KB a replay keeps. */
export const WINDOW_BYTES = 1024 * 1024;

/**
 * A run's stored log (logs/RUN_ID.log in the state dir), read for replay:
 * never through a link, only a regular file under logs/, and null when it is
 * missing or unreadable. `from`: the last or first WINDOW_BYTES, or the whole
 * log up to WHOLE_LOG_BYTES (beyond, its last WINDOW_BYTES).
 */
export function readStoredLog(stateDir: string, logPath: string, from: 'start' | 'end' | 'whole'): StoredLog | null {
  const relative = normalize(logPath);
  if (isAbsolute(relative) || !relative.startsWith(`logs${sep}`) || relative.split(sep).includes('..')) return null;
  let fd: number;
  try {
    // Its directory too is vouch's own, never a link: a replay reads nothing outside the state dir.
    const dir = lstatSync(join(stateDir, 'logs'));
    const uid = process.getuid?.();
    if (!dir.isDirectory() || (uid !== undefined && dir.uid !== uid)) return null;
    fd = openSync(join(stateDir, relative), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) return null;
    const size = stats.size;
    const limit = from === 'whole' ? WHOLE_LOG_BYTES : WINDOW_BYTES;
    const length = size <= limit ? size : WINDOW_BYTES;
    const offset = size <= limit || from === 'start' ? 0 : size - WINDOW_BYTES;
    const bytes = Buffer.alloc(length);
    let read = 0;
    while (read < length) {
      const count = readSync(fd, bytes, read, length - read, offset + read);
      if (count === 0) break;
      read += count;
    }
    return { bytes: bytes.subarray(0, read), offset, size: Math.max(size, offset + read) };
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}
