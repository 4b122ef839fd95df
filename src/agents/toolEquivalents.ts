/**
 * Argv forms a tool documents as the same run as another. A check's receipt binds the argv it
 * ran; a typed form listed here for that argv is matched to the check, so a CURRENT check denies
 * it and a stale one is rewritten to `vouch run CHECK --if-due`. A form not listed runs as typed.
 *
 * Each entry maps the tool's argv as a check runs it (no terminal on stdin: exec/spawnCheck.ts)
 * to the argvs that run the same, whatever terminal or environment they are typed in.
 */
export interface ToolEquivalence {
  tool: string;
  /** Where the tool says the forms are the same run. */
  sources: readonly string[];
  /** The other argvs that run what `argv` (which starts with `tool`) runs as a check; empty when unknown. */
  equivalents(argv: readonly string[]): string[][];
}

/**
 * vitest's commands, all of which take the first positional word as their name. A word equal to
 * one of them anywhere in the arguments could be read as that command, so such arguments are not
 * rewritten into another form. https://vitest.dev/guide/cli#commands
 */
const VITEST_COMMANDS = new Set(['run', 'watch', 'dev', 'related', 'bench', 'init', 'list', 'complete', 'typecheck']);

/**
 * Options that decide watch mode or start something other than one run: with any of these the
 * forms differ (`vitest run --watch` still watches), so none is matched to another form.
 * https://vitest.dev/guide/cli#options
 */
const VITEST_MODE_OPTION = /^(?:--(?:no-)?(?:watch|run|ui|standalone|api|open|clearCache|listTags)(?:[.=].*)?|-[a-zA-Z]*w[a-zA-Z]*|--)$/;

const vitest: ToolEquivalence = {
  tool: 'vitest',
  sources: [
    // "vitest: Start Vitest in the current directory. Will enter the watch mode in development environment
    // and run mode in CI (or non-interactive terminal) automatically." "vitest run: Perform a single run
    // without watch mode." "--run: Disable watch mode".
    'https://vitest.dev/guide/cli',
    // The default: watch only when stdin is a terminal, not in CI and not under an agent
    // (`watch: !isCI && process.stdin.isTTY && !isAgent`); `run` and `--run` both set options.run,
    // which turns watch off whatever the config says (`if (options.run) options.watch = false`).
    'https://github.com/vitest-dev/vitest/blob/main/packages/vitest/src/defaults.ts',
    'https://github.com/vitest-dev/vitest/blob/main/packages/vitest/src/node/cli/cac.ts',
    'https://github.com/vitest-dev/vitest/blob/main/packages/vitest/src/node/cli/cli-api.ts',
  ],
  equivalents(argv) {
    const [, ...args] = argv;
    // `vitest ARGS`, run as a check with no terminal on stdin, is one run: `vitest run ARGS`. The
    // other way round is not: `vitest ARGS` typed in a terminal watches, and the hook cannot tell.
    // A config that sets `watch: true` makes the check itself never end, so it has no receipt to reuse.
    if (args.every((word) => !VITEST_COMMANDS.has(word) && !VITEST_MODE_OPTION.test(word))) {
      return args.length === 0 ? [['vitest', 'run'], ['vitest', '--run']] : [['vitest', 'run', ...args]];
    }
    // `vitest run` and `vitest --run` set the same option and nothing else.
    if (args.length === 1 && args[0] === 'run') return [['vitest', '--run']];
    if (args.length === 1 && args[0] === '--run') return [['vitest', 'run']];
    return [];
  },
};

export const TOOL_EQUIVALENCES: readonly ToolEquivalence[] = [vitest];

/** The tool's argvs known to run what `tool` runs as a check (not `tool` itself). */
export function equivalentToolForms(tool: readonly string[]): string[][] {
  const entry = TOOL_EQUIVALENCES.find((candidate) => candidate.tool === tool[0]);
  return entry ? entry.equivalents(tool) : [];
}
