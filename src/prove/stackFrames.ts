/** A stack frame: where an error passed, as Vitest's own `stacks` spell it. */
export interface StackFrame {
  file: string;
  line: number;
  column: number;
}

/** `at fn (/abs/file.ts:4:13)`, `at /abs/file.ts:4:13`, or the same with a `file://` URL. */
const FRAME = /^\s*at (?:.*? \()?(?:file:\/\/)?(\/[^()]*?):(\d+):(\d+)\)?$/;

/**
 * The frames of an error's stack text, for a Vitest that hands the runner's
 * errors over without parsed `stacks` (Vitest 3 parses them only when a
 * reporter prints them). The runner's worker installs source maps, so the
 * lines are already the source's. A path that is not a plain absolute one is
 * skipped, not guessed at.
 */
export function stackFrames(stack: string | undefined): StackFrame[] {
  const frames: StackFrame[] = [];
  for (const text of (stack ?? '').split('\n')) {
    const match = FRAME.exec(text);
    if (match === null) continue;
    let file = match[1]!;
    try {
      file = decodeURI(file);
    } catch {
      // Not percent-encoded after all: keep it as written.
    }
    frames.push({ file, line: Number(match[2]), column: Number(match[3]) });
  }
  return frames;
}
