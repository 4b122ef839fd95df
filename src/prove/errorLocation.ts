/**
 * Where a runtime error points in the claim's files, as the runtime stage
 * reports it. Pure: it reads only the error as Vitest serialised it.
 */

/** The slice of Vitest's serialised error this reads; structural, so Vitest 3 and 4 both fill it. */
export interface RuntimeError {
  message: string;
  stacks?: ReadonlyArray<{ file: string; line: number; column: number }>;
  /** Vite's plugin error (a transform that failed), as Vitest 4 keeps it. */
  __vitest_rollup_error__?: { loc?: { file?: string; line?: number; column?: number } } | undefined;
  loc?: { file?: string; line?: number; column?: number } | undefined;
}

export interface ErrorLocation {
  /** The declared, workspace-relative path. */
  path: string;
  /** 1-based. */
  line: number;
  /** 1-based. */
  column?: number;
  /** The error's message with its location taken out and absolute paths made declared ones, when it named one. */
  message?: string;
}

/**
 * The first place in a draft or the test the error points at: a stack frame,
 * or, for an error raised before the module ran (a parse error in a draft,
 * which has no frame there), the location the transform reported. A parse
 * error is located by Vite's `loc` when Vitest kept it, else by the
 * `<file>:<line>:<column>:` esbuild and Vite print into the message
 * (https://esbuild.github.io/api/#log-limit shows the form). Their columns
 * are 0-based; the are 1-based.
 */
export function locateError(error: RuntimeError, declaredPaths: ReadonlyMap<string, string>): ErrorLocation | undefined {
  const frame = (error.stacks ?? []).find((stack) => declaredPaths.has(stack.file));
  if (frame !== undefined) return { path: declaredPaths.get(frame.file)!, line: frame.line, column: frame.column };
  const loc = error.__vitest_rollup_error__?.loc ?? error.loc;
  const fromLoc =
    loc?.file !== undefined && declaredPaths.has(loc.file) && typeof loc.line === 'number' && loc.line >= 1
      ? { file: loc.file, line: loc.line, column: typeof loc.column === 'number' ? loc.column + 1 : undefined }
      : undefined;
  const printed = printedLocation(error.message, declaredPaths);
  const at = fromLoc ?? printed;
  if (at === undefined) return undefined;
  const located: ErrorLocation = { path: declaredPaths.get(at.file)!, line: at.line };
  if (at.column !== undefined) located.column = at.column;
  const message = parseMessage(error.message, declaredPaths);
  if (message !== undefined) located.message = message;
  return located;
}

interface Printed {
  file: string;
  line: number;
  column: number | undefined;
}

/** `<absolute declared path>:<line>:<column>` anywhere in the message, for the first declared path it names. */
function printedLocation(message: string, declaredPaths: ReadonlyMap<string, string>): Printed | undefined {
  for (const file of declaredPaths.keys()) {
    const at = message.indexOf(`${file}:`);
    if (at < 0) continue;
    const match = /^:(\d+)(?::(\d+))?/.exec(message.slice(at + file.length));
    if (match === null || Number(match[1]) < 1) continue;
    return { file, line: Number(match[1]), column: match[2] === undefined ? undefined : Number(match[2]) + 1 };
  }
  return undefined;
}

/**
 * A transform's message on one line, without the location it repeats:
 * `Transform failed with 1 error:\n/abs/src/a.ts:6:20: ERROR: Unexpected ")"`
 * becomes `Transform failed with 1 error: ERROR: Unexpected ")"`. The first
 * line is what the text output shows, and it said nothing by itself. Any
 * other absolute path of a claim file is shown as its declared path.
 */
function parseMessage(message: string, declaredPaths: ReadonlyMap<string, string>): string | undefined {
  let text = message;
  for (const [file, declared] of declaredPaths) {
    text = text.replaceAll(new RegExp(`${escapeRegExp(file)}:\\d+(?::\\d+)?:?\\s*`, 'g'), '').replaceAll(file, declared);
  }
  const lines = text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
  if (lines.length === 0) return undefined;
  return lines.join(' ');
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
