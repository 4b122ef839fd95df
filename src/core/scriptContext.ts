import { envPatterns } from './context.js';
import { checkArgv, type CheckDefinition } from './definition.js';
import { sha256 } from './digest.js';
import { isPackageManager, scriptRun } from './packageManagerGrammar.js';

/*
 * The package.json scripts a check's command makes its package manager run:
 * part of the check's context whatever its inputs, because changing the body
 * of `typecheck` to `echo skipped` changes what the check checks. Pure: it
 * reads the scripts map the caller has read from package.json.
 *
 * What counts as run, from the check's argv on, and again in every body so
 * reached:
 * - the script a package-manager command runs, by the one grammar
 *   (packageManagerGrammar.ts): `npm run build`, `npm t`, `pnpm build`;
 * - its `pre` and `post` scripts. npm runs them
 *   (https://docs.npmjs.com/cli/using-npm/scripts#pre--post-scripts), and so
 *   does yarn 1; yarn 2+ does not
 *   (https://yarnpkg.com/advanced/lifecycle-scripts), pnpm does since v6
 *   only with `enable-pre-post-scripts`
 *   (https://pnpm.io/cli/run#differences-with-npm-run). Which of these holds
 *   depends on a version and a config this does not read, so they always
 *   count: a script that does not run can only make a check STALE, one left
 *   out could leave it falsely CURRENT;
 * - any other word after a package manager that names a script, for the
 *   forms the grammar leaves aside (`pnpm --silent build`,
 *   `npm run build --if-present`, `pnpm --filter app build`), and a pnpm
 *   `/regex/` (https://pnpm.io/cli/run#running-multiple-scripts);
 * - the patterns of npm-run-all's `run-s` and `run-p`
 *   (https://github.com/mysticatea/npm-run-all/blob/master/docs/npm-run-all.md)
 *   and concurrently's `npm:NAME` shortcut
 *   (https://github.com/open-cli-tools/concurrently#usage);
 * - a quoted word holding a command line (`concurrently "npm run a"`,
 *   `sh -c "npm run b"`) is read as one.
 * When it cannot tell (a body that does not parse, a word the shell expands
 * where a script name could stand, a chain deeper than MAX_DEPTH), every
 * script counts.
 */

/** One script the package manager will run for the check, as its receipt records it. */
export interface ScriptBody {
  name: string;
  /** The body as written, when at most SCRIPT_BODY_LIMIT characters; else null, and only the digest is kept. */
  body: string | null;
  /** sha256 of the body. */
  digest: string;
}

/** Longer bodies are kept as their digest only, so that a receipt stays small. */
export const SCRIPT_BODY_LIMIT = 1000;

/** How deep scripts may run scripts before every script counts: a bound on the walk, far above real chains. */
export const MAX_DEPTH = 16;

/**
 * Splits a command line into the words of its simple commands (null for a
 * word the shell expands), or null when it does not parse: shellWords.ts's
 * commandWords, or plainCommandWords where that is enough.
 */
export type CommandSplitter = (text: string) => (string | null)[][] | null;

/** Thrown by plainCommandWords for a line only the shell parser can split. */
export class ShellParserNeeded extends Error {
  constructor(readonly text: string) {
    super(`a command line that needs the shell parser: ${text}`);
  }
}

const PLAIN_WORD = /^[A-Za-z0-9_./:=@+,%-]+$/;
const PLAIN_OPERATORS = new Set(['&&', '||', ';', '|']);
/** Words the shell reads as syntax at the start of a command (https://pubs.opengroup.org/onlinepubs/9799919799/utilities/V3_chap02.html#tag_19_04). */
const RESERVED = new Set(['!', '{', '}', 'case', 'do', 'done', 'elif', 'else', 'esac', 'fi', 'for', 'if', 'in', 'then', 'until', 'while', 'function', 'select', 'time', '[[', ']]', 'coproc']);

/**
 * The shell parser (unbash, 200 kB) costs every process that loads it several
 * milliseconds, and nearly every command plans a context. Most script bodies
 * are plain (`tsc --noEmit`, `vitest run && tsc`): words of safe characters
 * joined by `&&`, `||`, `;` or `|`, naming no package manager, no npm-run-all
 * runner and no `npm:` shortcut. Such a line runs no script, and the parser
 * would find none in it either, so it needs no parser. Any other line throws
 * ShellParserNeeded, and the caller loads the parser
 * (test/unit/scriptContext.test.ts checks both give the same scripts).
 */
export const plainCommandWords: CommandSplitter = (text) => {
  const tokens = text.trim().split(/[ \t]+/).filter((token) => token !== '');
  const commands: string[][] = [[]];
  for (const token of tokens) {
    if (PLAIN_OPERATORS.has(token)) {
      if (commands.at(-1)!.length === 0) throw new ShellParserNeeded(text);
      commands.push([]);
      continue;
    }
    const plain = PLAIN_WORD.test(token) && !RESERVED.has(token) && !mayRunScript(token);
    if (!plain) throw new ShellParserNeeded(text);
    commands.at(-1)!.push(token);
  }
  if (commands.at(-1)!.length === 0) {
    if (commands.length > 1) throw new ShellParserNeeded(text);
    commands.pop();
  }
  return commands;
};

/** A word that could make the package manager run a script, wherever it stands. */
function mayRunScript(word: string): boolean {
  const base = baseName(word);
  return isPackageManager(base) || PATTERN_RUNNERS.has(base) || SHORTCUT.test(word);
}

/** Whether the scripts argv runs can be told without the shell parser. */
export function needsShellParser(argv: readonly string[], scripts: Readonly<Record<string, unknown>> | null): boolean {
  if (scripts === null) return false;
  try {
    scriptsRun(argv, scripts, plainCommandWords);
    return false;
  } catch (error) {
    if (error instanceof ShellParserNeeded) return true;
    throw error;
  }
}

/** The programs of npm-run-all that take script-name patterns. */
const PATTERN_RUNNERS = new Set(['run-s', 'run-p', 'npm-run-all', 'npm-run-all2']);

/** concurrently's shortcut: `npm:lint` runs `npm run lint`. */
const SHORTCUT = /^(?:npm|pnpm|yarn|bun):(.+)$/;

/**
 * The scripts that running argv makes the package manager run, sorted by
 * name, with their bodies. Empty when there is no package.json or argv runs
 * no script.
 */
export function scriptBodies(argv: readonly string[], scripts: Readonly<Record<string, unknown>> | null, split: CommandSplitter): ScriptBody[] {
  if (scripts === null) return [];
  const names = scriptsRun(argv, scripts, split);
  return [...names]
    .filter((name) => Object.hasOwn(scripts, name) && typeof scripts[name] === 'string')
    .sort()
    .map((name) => scriptBody(name, scripts[name] as string));
}

export function scriptBody(name: string, body: string): ScriptBody {
  return { name, body: body.length <= SCRIPT_BODY_LIMIT ? body : null, digest: sha256(body) };
}

/** The names of the scripts argv runs, existing or not; every script's name when that cannot be told. */
export function scriptsRun(argv: readonly string[], scripts: Readonly<Record<string, unknown>>, split: CommandSplitter): Set<string> {
  const all = Object.keys(scripts);
  const found = new Set<string>();
  let everything = false;

  const reach = (name: string, depth: number) => {
    if (everything || found.has(name)) return;
    found.add(name);
    const body = Object.hasOwn(scripts, name) ? scripts[name] : undefined;
    if (typeof body === 'string') readLine(body, depth + 1);
    for (const hook of ['pre', 'post']) if (Object.hasOwn(scripts, hook + name)) reach(hook + name, depth + 1);
  };

  const readLine = (text: string, depth: number) => {
    if (depth > MAX_DEPTH) {
      everything = true;
      return;
    }
    const commands = split(text);
    if (commands === null) {
      everything = true;
      return;
    }
    for (const words of commands) readCommand(words, depth);
  };

  const reachMatching = (pattern: RegExp, depth: number) => {
    for (const name of all) if (pattern.test(name)) reach(name, depth);
  };

  const readCommand = (words: readonly (string | null)[], depth: number) => {
    if (depth > MAX_DEPTH) {
      everything = true;
      return;
    }
    const program = words[0];
    if (program === undefined) return;
    // `$npm_execpath run build` and the like: the program is not known, and could be the package manager.
    if (program === null) {
      everything = true;
      return;
    }
    const at = words.findIndex((word) => word !== null && isPackageManager(baseName(word)));
    // `run-s` may stand behind a runner too: `npx run-s lint:*`.
    const patterns = words.findIndex((word) => word !== null && PATTERN_RUNNERS.has(baseName(word)));
    if ((at >= 0 || patterns >= 0) && words.includes(null)) {
      everything = true;
      return;
    }
    const known = words as readonly string[];
    if (at >= 0) {
      const run = scriptRun([baseName(known[at]!), ...known.slice(at + 1)], scripts as Record<string, string>);
      if (run !== null) reach(run.script, depth);
      for (const word of known.slice(at + 1)) {
        if (Object.hasOwn(scripts, word)) reach(word, depth);
        const regex = pnpmRegex(word);
        if (regex === 'invalid') everything = true;
        else if (regex !== null) reachMatching(regex, depth);
      }
    }
    if (patterns >= 0) {
      for (const word of known.slice(patterns + 1)) if (!word.startsWith('-')) reachMatching(globPattern(word), depth);
    }
    for (const word of known) {
      const shortcut = SHORTCUT.exec(word);
      if (shortcut) reachMatching(globPattern(shortcut[1]!.split(' ')[0]!), depth);
      // A quoted command line; one that does not parse is taken for text, not a command.
      if (/\s/.test(word) && split(word) !== null) readLine(word, depth + 1);
    }
  };

  readCommand(argv, 0);
  return everything ? new Set(all) : found;
}

function baseName(word: string): string {
  return word.split('/').pop() ?? word;
}

/** pnpm's `/regex/` form: a RegExp, 'invalid' when pnpm's regex would not compile here, or null for any other word. */
function pnpmRegex(word: string): RegExp | 'invalid' | null {
  if (word.length < 3 || !word.startsWith('/') || !word.endsWith('/')) return null;
  try {
    return new RegExp(word.slice(1, -1));
  } catch {
    return 'invalid';
  }
}

/**
 * npm-run-all's glob (`lint:*`, `build:**`) as a RegExp. `*` is taken to
 * match any characters, `:` included, so the pattern covers at least what
 * npm-run-all would run.
 */
function globPattern(glob: string): RegExp {
  const source = glob
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${source}$`);
}

/** The scripts whose recorded body differs between two contexts, sorted by name; a script that appears or goes counts. */
export function changedScripts(old: readonly ScriptBody[] | undefined, now: readonly ScriptBody[] | undefined): { name: string; old: ScriptBody | null; new: ScriptBody | null }[] {
  const before = new Map((old ?? []).map((entry) => [entry.name, entry]));
  const after = new Map((now ?? []).map((entry) => [entry.name, entry]));
  const names = [...new Set([...before.keys(), ...after.keys()])].sort();
  const changes: { name: string; old: ScriptBody | null; new: ScriptBody | null }[] = [];
  for (const name of names) {
    const a = before.get(name) ?? null;
    const b = after.get(name) ?? null;
    if (a?.digest !== b?.digest) changes.push({ name, old: a, new: b });
  }
  return changes;
}

/** A recorded body for people: the text in backquotes, its digest when too long to keep, or "(not run)" when the check did not run it. */
export function describeScriptBody(entry: Pick<ScriptBody, 'body' | 'digest'> | null): string {
  if (entry === null) return '(not run)';
  if (entry.body === null) return `(sha256 ${entry.digest.slice(0, 12)}…, longer than ${SCRIPT_BODY_LIMIT} characters)`;
  return `\`${entry.body}\``;
}

/**
 * The environment names and prefixes a check's context records: the defaults,
 * its declared names, and the prefix of every tool its command line names or
 * any script it makes the package manager run names (`test` running
 * `npm run unit`, which runs vitest, depends on VITEST_*). The run (exec/
 * checkPlan.ts) and the hook's matcher both take them from here.
 */
export function contextEnvPatterns(definition: CheckDefinition, scripts: Readonly<Record<string, unknown>> | null, split: CommandSplitter): string[] {
  const argv = checkArgv(definition);
  const own = definition.script !== null ? scriptText(scripts, definition.script) : argv.join(' ');
  const ran = scripts === null ? [] : [...scriptsRun(argv, scripts, split)].map((name) => scriptText(scripts, name));
  return envPatterns(definition.env, [own, ...ran].join('\n'));
}

function scriptText(scripts: Readonly<Record<string, unknown>> | null, name: string): string {
  const body = scripts !== null && Object.hasOwn(scripts, name) ? scripts[name] : undefined;
  return typeof body === 'string' ? body : '';
}
