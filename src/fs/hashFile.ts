import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import { createHash } from 'node:crypto';

const CHUNK = 1 << 20;
let chunk: Buffer | undefined;

/**
 * sha256 of a file's bytes. Large files are streamed through a fixed buffer,
 * so a file of several GB costs time, never memory.
 */
export function hashFile(path: string, size: number): string {
  if (size < CHUNK) return createHash('sha256').update(readFileSync(path)).digest('hex');
  chunk ??= Buffer.allocUnsafe(CHUNK);
  const hash = createHash('sha256');
  const fd = openSync(path, 'r');
  try {
    for (;;) {
      const read = readSync(fd, chunk, 0, CHUNK, null);
      if (read === 0) break;
      hash.update(chunk.subarray(0, read));
    }
  } finally {
    closeSync(fd);
  }
  return hash.digest('hex');
}
