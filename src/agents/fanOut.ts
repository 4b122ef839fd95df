import { unresolved, wrongManager, type FanOut, type FanOutTarget } from './fanout/answer.js';
import { bunFanOut } from './fanout/bun.js';
import { npmFanOut } from './fanout/npm.js';
import { nxFanOut } from './fanout/nx.js';
import { pnpmFanOut } from './fanout/pnpm.js';
import { turboFanOut } from './fanout/turbo.js';
import { yarnFanOut } from './fanout/yarn.js';

export type { FanOut, FanOutTarget } from './fanout/answer.js';
export type { TaskRunnerConfig } from '../core/taskRunners.js';

/*
 * Which workspace packages' scripts a command line runs: `pnpm -r test`,
 * `npm test -w a`, `yarn workspace a test`, `turbo run test --filter=./packages/*`,
 * `nx run-many -t test`, `bun --filter '*' test`, or a plain script form in a
 * package's directory. Pure: argv is static words, and everything the tools
 * would read is in the target.
 *
 * Each answer must be exact: a command whose meaning is not certain is
 * `unresolved` and runs as typed, because a wrong list of packages could
 * deny a run that was needed. Unknown flags, arguments after the script, a
 * selector that matches nothing or that depends on git, a task runner that
 * would run other tasks first, and any form run outside the workspace root
 * (where the tools scope or resolve selectors by the directory) are all
 * unresolved.
 */

export function fanOutOf(argv: readonly string[], target: FanOutTarget): FanOut {
  const [program, ...args] = argv;
  if (program === undefined) return null;
  const runner = taskRunnerCall(argv, target);
  if (runner !== null) {
    if ('why' in runner) return unresolved(runner.why);
    return runner.tool === 'turbo' ? turboFanOut(runner.args, target) : nxFanOut(runner.args, target);
  }
  switch (program) {
    case 'pnpm':
      return pnpmFanOut(args, target);
    case 'npm':
      return npmFanOut(args, target);
    case 'yarn':
      return yarnFanOut(args, target);
    case 'bun':
      return bunFanOut(args, target);
    default:
      return null;
  }
}

type RunnerCall = { tool: 'turbo' | 'nx'; args: readonly string[] } | { why: string };

/**
 * turbo or nx, alone or through a runner that runs the project's own binary:
 * `npx` (https://docs.npmjs.com/cli/commands/npx), `pnpm exec`
 * (https://pnpm.io/cli/exec), and `pnpm turbo` / `yarn turbo`, which run a
 * root script named "turbo" when there is one (https://pnpm.io/cli/run,
 * https://classic.yarnpkg.com/en/docs/cli/run). Null when argv is neither.
 */
function taskRunnerCall(argv: readonly string[], target: FanOutTarget): RunnerCall | null {
  const tool = (word: string | undefined) => (word === 'turbo' || word === 'nx' ? word : null);
  const direct = tool(argv[0]);
  if (direct) return { tool: direct, args: argv.slice(1) };
  const [program, first, second] = argv;
  if (program === 'npx' && tool(first)) return { tool: tool(first)!, args: argv.slice(2) };
  if (program === 'pnpm' && first === 'exec' && tool(second)) {
    const wrong = wrongManager('pnpm', target);
    if (wrong) return { why: (wrong as { why: string }).why };
    return { tool: tool(second)!, args: argv.slice(3) };
  }
  if ((program === 'pnpm' || program === 'yarn') && tool(first)) {
    const wrong = wrongManager(program, target);
    if (wrong) return { why: (wrong as { why: string }).why };
    if (target.root === undefined) return { why: `${program} ${first} runs a root script named "${first}" if there is one, and the root's scripts are not known` };
    if (Object.hasOwn(target.root.scripts, first!)) return { why: `${program} ${first} runs the root's "${first}" script` };
    return { tool: tool(first)!, args: argv.slice(2) };
  }
  const runners = [['npx'], ['pnpm', 'exec'], ['pnpm', 'dlx'], ['pnpx'], ['npm', 'exec'], ['npm', 'x'], ['yarn', 'exec'], ['yarn', 'dlx'], ['bunx'], ['bun', 'x']];
  for (const words of runners) {
    if (!words.every((word, index) => argv[index] === word)) continue;
    const after = argv.slice(words.length);
    if (after.some((word) => tool(word)) && (after[0]?.startsWith('-') || tool(after[0]))) return { why: `${words.join(' ')} with turbo or nx is not a form vouch reads` };
  }
  return null;
}
