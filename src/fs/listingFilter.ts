import { readFileSync, realpathSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { dirname, join } from 'node:path';
import { includeDotNames, namesConfigLikeProgram, nodeOptionsRunCode, typescriptNames, type ListingNames } from '../core/listingNames.js';
import type { CompilerProcess, PathFacts } from '../core/runFacts.js';

/** Which of a run's listings are bound to fewer names than all, and what that rests on. */
export interface ListingFilter {
  /** Listed paths (absolute, as the facts name them) and the names each is bound to. */
  names: Map<string, ListingNames>;
  /**
   * The configs read to decide, by absolute path, with the sha256 of the bytes read: the run's
   * evidence of each must hold the same bytes, or the decision rests on a file that changed.
   */
  configs: Map<string, string>;
}

/** Past this many candidate configs (package.json files of a large install), one process is not worth the reading: its listings keep all names. */
const MAX_CONFIGS = 5000;

/** TypeScript majors whose `matchFiles` core/listingNames.ts describes. */
const KNOWN_MAJORS = new Set([3, 4, 5, 6]);

/**
 * The listings of a finished run that may be bound to the names tsc can act on: every process
 * that made one started as TypeScript's compiler (core/runFacts.ts's CompilerProcess), and each
 * of them checks out:
 * - its script is `bin/tsc` or `lib/tsc.js` of an installed `typescript` package of a known major;
 * - the first file it read past Node's start was that script, so nothing (a `--require` in
 *   NODE_OPTIONS) ran before the compiler in that process;
 * - it was not in watch mode;
 * - its command line names no file with a program extension (`-p tsconfig.app.ts`);
 * - no config it read has an `include` pattern that can match more than a few dot names it spells
 *   out (those stay bound: `.ts` for `*.ts`, `.storybook`), or extends or references a config
 *   with a program extension: tsc reads `extends: "./base.ts"` as JSON, and the strace log
 *   parser, which takes such a read for a source's, never saw it as a config.
 * And the check's NODE_OPTIONS loads no code: a preload that reads no file
 * (`--import=data:text/javascript,...`) runs in the compiler's process, and its first read is the
 * script all the same. (NODE_OPTIONS set by the check's own command, for a process it starts, is
 * not seen: strace abbreviates the environment of an exec.)
 * Anything unsure leaves a listing bound to all its names, as before.
 */
export function listingFilterOf(facts: readonly PathFacts[], compilers: readonly CompilerProcess[], env: NodeJS.ProcessEnv = {}): ListingFilter {
  const names = new Map<string, ListingNames>();
  const configs = new Map<string, string>();
  if (compilers.length === 0 || nodeOptionsRunCode(env.NODE_OPTIONS)) return { names, configs };
  const plain = compilers.map((compiler) => plainTscDotNames(compiler, configs));
  for (const fact of facts) {
    if (fact.listed === undefined || fact.listedByOther || !fact.listedBy) continue;
    if (fact.listedBy.every((index) => plain[index] !== null)) names.set(fact.path, typescriptNames(fact.listedBy.flatMap((index) => plain[index]!)));
  }
  return { names, configs };
}

/** The dot names a plain tsc process's configs spell out, or null when the process is not one. */
function plainTscDotNames(compiler: CompilerProcess, configs: Map<string, string>): string[] | null {
  if (compiler.watch || compiler.programArgument || compiler.firstRead === null || compiler.configs.length > MAX_CONFIGS) return null;
  const script = realPath(compiler.script);
  if (script === null || !/\/typescript\/(bin\/tsc|lib\/tsc\.js)$/.test(script)) return null;
  if (!isKnownTypeScript(join(dirname(dirname(script)), 'package.json'))) return null;
  if (compiler.firstRead !== script && realPath(compiler.firstRead) !== script) return null;
  const dotNames: string[] = [];
  for (const path of compiler.configs) {
    let bytes: Buffer;
    try {
      bytes = readFileSync(path);
    } catch {
      // Gone or unreadable now: what it said when tsc read it is unknown.
      return null;
    }
    configs.set(path, createHash('sha256').update(bytes).digest('hex'));
    const text = bytes.toString('utf8');
    const spelled = includeDotNames(text);
    if (spelled === null || namesConfigLikeProgram(text)) return null;
    dotNames.push(...spelled);
  }
  return dotNames;
}

function isKnownTypeScript(packageJson: string): boolean {
  try {
    const manifest = JSON.parse(readFileSync(packageJson, 'utf8')) as { name?: unknown; version?: unknown };
    if (manifest.name !== 'typescript' || typeof manifest.version !== 'string') return false;
    return KNOWN_MAJORS.has(Number(/^(\d+)\./.exec(manifest.version)?.[1]));
  } catch {
    return false;
  }
}

function realPath(path: string): string | null {
  try {
    return realpathSync.native(path);
  } catch {
    return null;
  }
}
