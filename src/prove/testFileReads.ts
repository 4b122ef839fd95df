import { promises } from 'node:fs';

type ReadFile = typeof promises.readFile;

/** Test files that exist only in memory, by absolute path, with how many inspections serve each. */
const files = new Map<string, { text: string; holders: number }>();
let original: ReadFile | undefined;

/**
 * Serves reads of a test file that exists only in memory, for as long as the
 * returned release is not called.
 *
 * Vitest 3 reads each test file from disk before its run, outside Vite and
 * so outside the overlay plugin: `groupFilesByEnv` looks for a
 * `@vitest-environment` comment with `fs.promises.readFile`
 * (https://github.com/vitest-dev/vitest/blob/v3.2.4/packages/vitest/src/utils/test-helpers.ts).
 * The runtime stage's test is never on disk, so that read failed with ENOENT
 * and the run returned no result. Vitest runs in this process and calls the
 * function through the shared `fs.promises` object, so wrapping it there
 * answers that one read; every other path goes to the real function.
 * Vitest 4 makes no such read, and needs none of this.
 */
export function serveTestFile(path: string, text: string): () => void {
  const entry = files.get(path) ?? { text, holders: 0 };
  entry.text = text;
  entry.holders += 1;
  files.set(path, entry);
  if (original === undefined) {
    const real = promises.readFile;
    original = real;
    promises.readFile = function readFile(this: unknown, ...args: Parameters<ReadFile>): ReturnType<ReadFile> {
      const served = typeof args[0] === 'string' ? files.get(args[0]) : undefined;
      if (served === undefined) return real.apply(this, args);
      const options = args[1];
      const encoding = typeof options === 'string' ? options : options?.encoding;
      return Promise.resolve(encoding ? served.text : Buffer.from(served.text)) as ReturnType<ReadFile>;
    } as ReadFile;
  }
  let released = false;
  return () => {
    if (released) return;
    released = true;
    entry.holders -= 1;
    if (entry.holders === 0 && files.get(path) === entry) files.delete(path);
    if (files.size === 0 && original !== undefined) {
      promises.readFile = original;
      original = undefined;
    }
  };
}
