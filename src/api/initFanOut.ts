import { isPackageManager, scriptRun } from '../core/packageManagerGrammar.js';

/*
 * Root scripts that run a script in the workspace's packages: `pnpm -r test`,
 * `npm test --workspaces`, `yarn workspaces foreach -A run test`,
 * `bun run --filter '*' test`, `turbo run lint test`, `nx run-many -t test`,
 * `lerna run test`. vouch init proposes each package's own script as a
 * PACKAGE#SCRIPT check instead. Pure.
 */

export const FAN_OUT_PROGRAMS = ['turbo', 'nx', 'lerna'] as const;

export interface FanOut {
  /** What runs them, for a reason: "pnpm -r", "turbo run". */
  runner: string;
  /** The package scripts (tasks) it runs. */
  scripts: string[];
  watch: boolean;
}

/** Options that take a value as the next word, per runner; any other option is taken as a flag. */
const VALUED: Record<string, ReadonlySet<string>> = {
  // https://pnpm.io/filtering, https://pnpm.io/cli/run
  pnpm: new Set(['--filter', '-F', '--filter-prod', '--workspace-concurrency', '--reporter', '--test-pattern', '--changed-files-ignore-pattern', '--resume-from', '-C', '--dir']),
  // https://docs.npmjs.com/cli/using-npm/workspaces
  npm: new Set(['--workspace', '-w']),
  // https://bun.sh/docs/cli/filter
  bun: new Set(['--filter', '-F']),
  // https://yarnpkg.com/cli/workspaces/foreach
  yarn: new Set(['--include', '--exclude', '--from', '-j', '--jobs']),
  // https://turborepo.com/docs/reference/run
  turbo: new Set(['--filter', '-F', '--concurrency', '--cache-dir', '--output-logs', '--log-order', '--env-mode', '--log-prefix', '--cache', '--summarize', '--graph', '--profile', '--ui', '--framework-inference']),
};

/** The argv's operands (words that are no option or an option's value). */
function operands(args: readonly string[], valued: ReadonlySet<string>): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i]!;
    if (arg === '--') break;
    if (arg.startsWith('-')) {
      if (valued.has(arg)) i += 1;
      continue;
    }
    out.push(arg);
  }
  return out;
}

/** The scripts a command line runs across workspace packages, or null when it runs none that way. */
export function fanOutScripts(program: string, args: readonly string[]): FanOut | null {
  if (isPackageManager(program)) return packageManagerFanOut(program, args);
  switch (program) {
    case 'turbo': {
      const words = operands(args, VALUED.turbo!);
      const [sub, ...tasks] = words;
      if (sub === undefined) return null;
      const watch = sub === 'watch';
      const named = sub === 'run' || watch ? tasks : ['prune', 'login', 'logout', 'link', 'unlink', 'gen', 'generate', 'daemon', 'ls', 'info', 'query', 'telemetry', 'scan', 'bin', 'boundaries', 'docs', 'completion'].includes(sub) ? [] : words;
      const scripts = named.map((task) => task.slice(task.lastIndexOf('#') + 1)).filter(Boolean);
      return scripts.length === 0 ? null : { runner: watch ? 'turbo watch' : 'turbo run', scripts, watch };
    }
    case 'nx': {
      // https://nx.dev/nx-api/nx/documents/run-many
      const [sub] = args;
      if (sub === 'run-many' || sub === 'affected') {
        const scripts: string[] = [];
        for (let i = 1; i < args.length; i += 1) {
          const arg = args[i]!;
          const inline = /^(?:-t|--targets?)=(.*)$/.exec(arg);
          if (inline) scripts.push(...inline[1]!.split(','));
          else if (arg === '-t' || arg === '--target' || arg === '--targets') {
            for (let j = i + 1; j < args.length && !args[j]!.startsWith('-'); j += 1) scripts.push(...args[j]!.split(','));
          }
        }
        const found = scripts.filter(Boolean);
        return found.length === 0 ? null : { runner: `nx ${sub}`, scripts: found, watch: false };
      }
      if (sub === 'run' && args[1] !== undefined && args[1].includes(':')) {
        const target = args[1].split(':')[1];
        return target ? { runner: 'nx run', scripts: [target], watch: false } : null;
      }
      return null;
    }
    case 'lerna': {
      // https://lerna.js.org/docs/api-reference/commands#lerna-run-script
      const [sub, ...rest] = operands(args, new Set(['--scope', '--ignore', '--concurrency', '--since']));
      return sub === 'run' && rest[0] !== undefined ? { runner: 'lerna run', scripts: [rest[0]], watch: false } : null;
    }
    default:
      return null;
  }
}

function packageManagerFanOut(program: 'npm' | 'pnpm' | 'yarn' | 'bun', args: readonly string[]): FanOut | null {
  if (program === 'yarn') {
    // Classic: `yarn workspaces run S`; berry: `yarn workspaces foreach [options] run S`; either: `yarn workspace NAME S`.
    const words = operands(args, VALUED.yarn!);
    if (words[0] === 'workspaces' && words[1] === 'run' && words[2]) return { runner: 'yarn workspaces run', scripts: [words[2]], watch: false };
    if (words[0] === 'workspaces' && words[1] === 'foreach') {
      const script = words[2] === 'run' ? words[3] : words[2] === 'exec' ? undefined : words[2];
      return script ? { runner: 'yarn workspaces foreach', scripts: [script], watch: false } : null;
    }
    if (words[0] === 'workspace' && words[1] !== undefined) {
      const script = words[2] === 'run' ? words[3] : words[2];
      return script ? { runner: `yarn workspace ${words[1]}`, scripts: [script], watch: false } : null;
    }
    return null;
  }
  const selectors: Record<string, readonly string[]> = {
    pnpm: ['-r', '--recursive', '--filter', '-F', '--filter-prod'],
    npm: ['--workspaces', '-ws', '--ws', '--workspace', '-w'],
    bun: ['--filter', '-F', '--workspaces'],
  };
  const selects = args.some((arg) => selectors[program]!.some((flag) => arg === flag || arg.startsWith(`${flag}=`)));
  if (!selects) return null;
  const valued = VALUED[program]!;
  // The same argv without the workspace options: what is left names the script, as for the root.
  const rest: string[] = [];
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i]!;
    if (arg === '--') {
      rest.push(...args.slice(i));
      break;
    }
    if (arg.startsWith('-')) {
      if (valued.has(arg)) i += 1;
      continue;
    }
    rest.push(arg);
  }
  const run = scriptRun([program, ...rest]);
  if (run === null) return null;
  const flag = args.find((arg) => selectors[program]!.some((s) => arg === s || arg.startsWith(`${s}=`)))!;
  return { runner: `${program} ${flag.split('=')[0]}`, scripts: [run.script], watch: run.args.some((arg) => arg === '--watch' || arg === '-w') };
}
