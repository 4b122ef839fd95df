import { writeSync } from 'node:fs';
import type { Output } from '../core/output.js';

const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * Writes straight to a file descriptor, as process.stdout does on Linux for
 * files, pipes and terminals, without loading net and streams for it.
 * A reader that went away (`vouch log | head`) ends the output quietly;
 * a descriptor left non-blocking by the parent is waited on, not dropped.
 */
export function fdOutput(fd: number): Output {
  let closed = false;
  return {
    write(chunk) {
      if (closed) return false;
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      for (let offset = 0; offset < bytes.length; ) {
        try {
          offset += writeSync(fd, bytes, offset, bytes.length - offset);
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code;
          if (code === 'EAGAIN') {
            Atomics.wait(pause, 0, 0, 1);
            continue;
          }
          // EPIPE, EBADF (closed by the parent): nobody reads this any more.
          closed = true;
          return false;
        }
      }
      return true;
    },
  };
}
