import type { WorkspacePackage } from '../../core/workspace.js';
import { finish, flagValue, fromRoot, unresolved, type Answer, type FanOutTarget } from './answer.js';
import { selectAll } from './filters.js';

/** turbo's own commands (https://turborepo.com/docs/reference): `turbo NAME` runs these, not a task. */
const TURBO_COMMANDS = new Set(
  'run watch prune gen generate login logout link unlink daemon bin completion telemetry scan ls query info boundaries devtools docs config help ci sso'.split(' '),
);
/** turbo run flags that do not change which tasks run (https://turborepo.com/docs/reference/run). */
const TURBO_NEUTRAL = new Set(['--force', '--no-cache', '--continue', '--no-daemon', '--only', '--parallel']);
const TURBO_VALUED_NEUTRAL = ['--output-logs', '--log-order', '--log-prefix', '--concurrency', '--ui', '--cache-workers'];

/**
 * turbo: `turbo run T` (or `turbo T`) runs T in every package whose
 * package.json has that script, in the filter's selection
 * (https://turborepo.com/docs/reference/run); the tasks in dependsOn run
 * first, and a package's own turbo.json may change the task
 * (https://turborepo.com/docs/reference/package-configurations).
 */
export function turboFanOut(args: readonly string[], target: FanOutTarget): Answer {
  const where = fromRoot(target);
  if (where) return where;
  let index = 0;
  if (args[0] === 'run') index++;
  const tasks: string[] = [];
  const filters: string[] = [];
  for (; index < args.length; index++) {
    const word = args[index]!;
    if (word === '--') return unresolved('arguments after -- go to the tasks');
    if (!word.startsWith('-')) {
      tasks.push(word);
      continue;
    }
    const filter = flagValue(args, index, ['--filter', '-F']);
    if (filter) {
      if (filter.value === undefined || filter.value.startsWith('-')) return unresolved('--filter without a selector');
      filters.push(filter.value);
      index += filter.width - 1;
      continue;
    }
    if (TURBO_NEUTRAL.has(word) || /^--continue=(?:always|never|dependencies-successful)$/.test(word)) continue;
    const valued = flagValue(args, index, TURBO_VALUED_NEUTRAL);
    if (valued) {
      if (valued.value === undefined) return unresolved(`${word} without a value`);
      index += valued.width - 1;
      continue;
    }
    return unresolved(`turbo's ${word.split('=')[0]} is not read by vouch`);
  }
  if (tasks.length !== 1) return unresolved(tasks.length === 0 ? 'no task' : 'several tasks');
  const task = tasks[0]!;
  if (args[0] !== 'run' && TURBO_COMMANDS.has(task)) return unresolved(`turbo ${task} is turbo's own command`);
  if (task.includes('#')) return unresolved('a package task (PACKAGE#TASK) through turbo');
  const config = target.turbo;
  if (config === null) return unresolved('no turbo.json at the root');
  if (config.blocked !== undefined) return unresolved(config.blocked);
  const definition = config.tasks[task];
  if (!definition) return unresolved(`turbo.json has no "${task}" task`);
  if (definition.dependsOn.length > 0) return unresolved(`turbo runs ${definition.dependsOn.join(', ')} before or beside "${task}"`);
  if (Object.hasOwn(config.tasks, `//#${task}`)) return unresolved(`turbo.json runs the root's "${task}" too (//#${task})`);
  let selected: WorkspacePackage[];
  if (filters.length === 0) {
    selected = target.workspace.packages;
  } else {
    const selection = selectAll(filters, 'turbo', target);
    if (typeof selection === 'string') return unresolved(selection);
    selected = selection.packages;
  }
  const running = selected.filter((pkg) => Object.hasOwn(pkg.scripts, task));
  const overridden = running.filter((pkg) => config.overridden.includes(pkg.name) || Object.hasOwn(config.tasks, `${pkg.name}#${task}`));
  if (overridden.length > 0) return unresolved(`${overridden.map((pkg) => pkg.name).join(', ')} configure${overridden.length === 1 ? 's' : ''} turbo's tasks otherwise`);
  return finish(selected, task, true, target.workspace);
}
