import { statSync } from 'node:fs';
import { sha256 } from '../core/digest.js';

/**
 * A file modified this close to the moment it was read may be written again
 * within the same mtime tick, leaving its stat unchanged; such a file is
 * re-read by content until it was read well after its last write.
 */
const GRANULARITY_MS = 2000;

interface DiskEntry {
  stat: string;
  hash: string;
  mtimeMs: number;
  readAt: number;
}

/** A disk file's content hash, and its text when it had to be read to know it. */
export interface DiskVersion {
  hash: string;
  text?: string;
}

/**
 * Content hashes of disk files, re-read only when their stat changed (or they
 * were read within the granularity window). The hash, not the stat, becomes the
 * source file's version, so a touch that restores the same bytes costs nothing.
 */
export class DiskFiles {
  readonly #entries = new Map<string, DiskEntry>();
  readonly #read: (path: string) => string | undefined;

  constructor(read: (path: string) => string | undefined) {
    this.#read = read;
  }

  current(path: string): DiskVersion | undefined {
    const stats = statSync(path, { throwIfNoEntry: false });
    if (stats === undefined || !stats.isFile()) {
      this.#entries.delete(path);
      return undefined;
    }
    const stat = `${stats.mtimeMs}:${stats.ctimeMs}:${stats.size}:${stats.ino}`;
    const entry = this.#entries.get(path);
    if (entry !== undefined && entry.stat === stat && entry.readAt - entry.mtimeMs > GRANULARITY_MS) return { hash: entry.hash };
    return this.#load(path, stat, stats.mtimeMs);
  }

  /** Reads the file now, whatever its stat says (the caller needs its text). */
  reread(path: string): DiskVersion | undefined {
    const stats = statSync(path, { throwIfNoEntry: false });
    if (stats === undefined || !stats.isFile()) return undefined;
    return this.#load(path, `${stats.mtimeMs}:${stats.ctimeMs}:${stats.size}:${stats.ino}`, stats.mtimeMs);
  }

  // Stat before read: a write in between leaves an old stat beside new text, which the next stat corrects.
  #load(path: string, stat: string, mtimeMs: number): DiskVersion | undefined {
    const readAt = Date.now();
    const text = this.#read(path);
    if (text === undefined) {
      this.#entries.delete(path);
      return undefined;
    }
    const hash = textHash(text);
    this.#entries.set(path, { stat, hash, mtimeMs, readAt });
    return { hash, text };
  }
}

export function textHash(text: string): string {
  return sha256(text).slice(0, 32);
}
