import type { WorkspacePackage } from '../../core/workspace.js';
import { finish, flagValue, fromRoot, rootMayRun, unresolved, type Answer, type FanOutTarget } from './answer.js';
import { isPlain } from './patterns.js';

/** nx's own commands (https://nx.dev/reference/nx-commands): `nx NAME` runs these, not a target. */
const NX_COMMANDS = new Set(
  'run run-many affected exec graph dep-graph show list report reset init generate g migrate format format:check format:write release watch sync sync:check connect connect-to-nx-cloud view-logs add import repair daemon login logout mcp configure-ai-agents print-affected affected:graph help'.split(' '),
);
/** nx flags that do not change which tasks run (https://nx.dev/reference/nx-commands#run-many). */
const NX_NEUTRAL = /^(?:--skip-nx-cache|--skipNxCache|--skip-remote-cache|--parallel(?:=\d+)?|--verbose|--nx-bail|--nxBail|--output-style=(?:dynamic|static|stream|stream-without-prefixes|tui))$/;

/**
 * nx: `nx run P:T`, `nx T P` and `nx run-many -t T [-p P…]` run target T;
 * a package.json project's targets are its scripts
 * (https://nx.dev/reference/project-configuration), nx.json targetDefaults
 * may add dependsOn (https://nx.dev/reference/nx-json#target-defaults), and
 * a project.json or package.json "nx" may change the target. Words nx does
 * not know go to the script.
 */
export function nxFanOut(args: readonly string[], target: FanOutTarget): Answer {
  const where = fromRoot(target);
  if (where) return where;
  const [command, ...rest] = args;
  if (command === undefined) return unresolved('no nx command');
  let task: string;
  let projects: string[] | null;
  if (command === 'run') {
    const [spec, ...flags] = rest;
    const parts = spec?.split(':') ?? [];
    if (parts.length !== 2 || parts.some((part) => part === '')) return unresolved('nx run takes PROJECT:TARGET, without a configuration');
    const bad = flags.find((flag) => !NX_NEUTRAL.test(flag));
    if (bad !== undefined) return unresolved(`nx's ${bad} is not read by vouch (an unknown word goes to the script)`);
    projects = [parts[0]!];
    task = parts[1]!;
  } else if (command === 'run-many') {
    const parsed = runManyArgs(rest);
    if (typeof parsed === 'string') return unresolved(parsed);
    ({ task, projects } = parsed);
  } else if (command === 'affected') {
    return unresolved('nx affected selects by git changes');
  } else if (NX_COMMANDS.has(command) || command.startsWith('-') || command.includes(':')) {
    return unresolved(`nx ${command} is not a form vouch reads`);
  } else {
    const [project, ...flags] = rest;
    if (project === undefined || project.startsWith('-')) return unresolved('nx TARGET without a project runs the project of the current directory');
    const bad = flags.find((flag) => !NX_NEUTRAL.test(flag));
    if (bad !== undefined) return unresolved(`nx's ${bad} is not read by vouch (an unknown word goes to the script)`);
    task = command;
    projects = [project];
  }
  const config = target.nx;
  if (config === null) return unresolved('no nx.json at the root');
  if (config.blocked !== undefined) return unresolved(config.blocked);
  const defaults = config.tasks[task];
  if (defaults && defaults.dependsOn.length > 0) return unresolved(`nx.json targetDefaults for "${task}" change what runs: ${defaults.dependsOn.join(', ')}`);
  let selected: WorkspacePackage[];
  if (projects === null) {
    // run-many without projects: every project with the target, the root's own package.json project included.
    if (config.overridden.includes('//')) return unresolved('the root is an nx project with its own configuration');
    const root = rootMayRun(target, task);
    if (root) return unresolved(root);
    selected = target.workspace.packages;
  } else {
    selected = [];
    for (const name of projects) {
      const pkg = target.workspace.packages.find((candidate) => candidate.name === name);
      if (!pkg) return unresolved(`no workspace package is named ${JSON.stringify(name)}`);
      selected.push(pkg);
    }
  }
  const overridden = selected.filter((pkg) => config.overridden.includes(pkg.name));
  if (overridden.length > 0) return unresolved(`${overridden.map((pkg) => pkg.name).join(', ')} configure${overridden.length === 1 ? 's' : ''} nx targets in project.json or package.json "nx"`);
  // Named projects must each have the target; run-many over all skips those without it.
  return finish(selected, task, projects === null, target.workspace);
}

function runManyArgs(args: readonly string[]): { task: string; projects: string[] | null } | string {
  const tasks: string[] = [];
  let projects: string[] | null = null;
  for (let index = 0; index < args.length; ) {
    const word = args[index]!;
    const targets = flagValue(args, index, ['-t', '--target', '--targets']);
    const listed = flagValue(args, index, ['-p', '--projects']);
    const found = targets ?? listed;
    if (found) {
      if (found.value === undefined || found.value === '' || found.value.startsWith('-')) return `${word} without a value`;
      const values = found.value.split(',');
      index += found.width;
      // yargs reads an array option's following words as more values.
      if (found.width === 2) {
        while (index < args.length && !args[index]!.startsWith('-')) values.push(...args[index++]!.split(','));
      }
      if (targets) tasks.push(...values);
      else projects = [...(projects ?? []), ...values];
      continue;
    }
    if (NX_NEUTRAL.test(word)) {
      index++;
      continue;
    }
    return `nx's ${word.split('=')[0]} is not read by vouch (an unknown word goes to the script)`;
  }
  if (tasks.length !== 1 || tasks[0] === '') return tasks.length === 0 ? 'nx run-many without a target' : 'several targets';
  if (projects !== null) {
    for (const project of projects) if (!isPlain(project) || project.startsWith('tag:')) return `the project pattern ${JSON.stringify(project)} is not read by vouch`;
  }
  return { task: tasks[0]!, projects };
}

