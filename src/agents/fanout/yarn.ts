import { isOwnCommand } from '../../core/packageManagerGrammar.js';
import type { WorkspacePackage } from '../../core/workspace.js';
import { finish, flagValue, fromRoot, plainInPackage, unresolved, wrongManager, type Answer, type FanOut, type FanOutTarget } from './answer.js';
import { isPlain } from './patterns.js';

/** Yarn's foreach flags that do not change which workspaces run (https://yarnpkg.com/cli/workspaces/foreach). */
const FOREACH_NEUTRAL = new Set(['--parallel', '--topological', '--topological-dev', '--interlaced', '--verbose']);

/**
 * yarn: `yarn workspace X S` runs S in the workspace named X
 * (https://yarnpkg.com/cli/workspace, https://classic.yarnpkg.com/en/docs/cli/workspace);
 * yarn 1's `yarn workspaces run S` runs it in every workspace and stops at
 * the first one without it (https://classic.yarnpkg.com/en/docs/cli/workspaces);
 * `yarn workspaces foreach -A run S` (https://yarnpkg.com/cli/workspaces/foreach).
 */
export function yarnFanOut(args: readonly string[], target: FanOutTarget): FanOut {
  const [command, ...rest] = args;
  if (command !== 'workspace' && command !== 'workspaces') {
    if (command === '--cwd' || command?.startsWith('--cwd=')) return unresolved('yarn --cwd runs in another directory');
    return plainInPackage(['yarn', ...args], target);
  }
  const where = fromRoot(target) ?? wrongManager('yarn', target);
  if (where) return where;
  if (command === 'workspace') {
    const [name, ...run] = rest;
    if (name === undefined || run.length === 0) return unresolved('yarn workspace without a workspace and a command');
    const pkg = target.workspace.packages.find((candidate) => candidate.name === name);
    if (!pkg) return unresolved(`no workspace is named ${JSON.stringify(name)}`);
    let script: string;
    if (run.length === 2 && run[0] === 'run') script = run[1]!;
    else if (run.length === 1 && run[0] === 'test') script = 'test';
    else if (run.length === 1 && !isOwnCommand('yarn', run[0]!) && !run[0]!.startsWith('-')) script = run[0]!;
    else return unresolved('not one script run, or arguments after the script');
    // A missing script fails in yarn 1 and runs a binary of that name in yarn 2+ (https://yarnpkg.com/cli/run).
    return finish([pkg], script, false, target.workspace);
  }
  const [sub, ...more] = rest;
  if (sub === 'run') {
    if (target.yarnVariant === 'berry') return unresolved('yarn workspaces run is yarn 1\'s; yarn 2+ has no such command');
    if (more.length !== 1 || more[0]!.startsWith('-')) return unresolved('not one script run, or arguments after the script');
    return finish(target.workspace.packages, more[0]!, false, target.workspace);
  }
  if (sub === 'foreach') {
    if (target.yarnVariant === 'classic') return unresolved('yarn workspaces foreach is yarn 2+\'s; yarn 1 has no such command');
    return foreachFanOut(more, target);
  }
  return unresolved(`yarn workspaces ${sub ?? ''} is not a script run`);
}

function foreachFanOut(args: readonly string[], target: FanOutTarget): Answer {
  let all = false;
  let parallel = false;
  let jobs = false;
  const include: string[] = [];
  const exclude: string[] = [];
  let index = 0;
  while (index < args.length && args[index]!.startsWith('-')) {
    const word = args[index]!;
    if (word === '--all') all = true;
    else if (FOREACH_NEUTRAL.has(word)) {
      if (word === '--parallel') parallel = true;
    } else if (/^-[Aptiv]+$/.test(word)) {
      if (word.includes('A')) all = true;
      if (word.includes('p')) parallel = true;
    } else {
      const listed = flagValue(args, index, ['--include', '--exclude']);
      const limit = flagValue(args, index, ['-j', '--jobs']);
      if (listed) {
        if (listed.value === undefined || listed.value.startsWith('-')) return unresolved(`${word} without a value`);
        (word.startsWith('--include') ? include : exclude).push(listed.value);
        index += listed.width;
        continue;
      }
      if (limit) {
        if (limit.value === undefined) return unresolved(`${word} without a value`);
        jobs = true;
        index += limit.width;
        continue;
      }
      return unresolved(`yarn workspaces foreach ${word.split('=')[0]} is not read by vouch`);
    }
    index++;
  }
  if (!all) return unresolved('yarn workspaces foreach without --all selects by the current workspace or by git');
  // Yarn refuses --jobs without --parallel (https://yarnpkg.com/cli/workspaces/foreach).
  if (jobs && !parallel) return unresolved('--jobs without --parallel fails');
  const [run, script, ...extra] = args.slice(index);
  if (run !== 'run' || script === undefined || script.startsWith('-') || extra.length > 0) return unresolved('not one script run, or arguments after the script');
  // A script name with ":" is run from any workspace when one defines it (https://yarnpkg.com/getting-started/qa#how-to-share-scripts-between-workspaces).
  if (script.includes(':')) return unresolved(`yarn runs a script with ":" in its name from any workspace when one workspace defines it`);
  const matches = (patterns: string[], pkg: WorkspacePackage): boolean | string => {
    for (const pattern of patterns) {
      if (!isPlain(pattern)) return `the pattern ${JSON.stringify(pattern)} is a glob vouch does not read`;
      if (pattern === pkg.name || pattern === pkg.dir) return true;
    }
    return false;
  };
  const selected: WorkspacePackage[] = [];
  for (const pkg of target.workspace.packages) {
    const included = include.length === 0 ? true : matches(include, pkg);
    const excluded = matches(exclude, pkg);
    if (typeof included === 'string') return unresolved(included);
    if (typeof excluded === 'string') return unresolved(excluded);
    if (included && !excluded) selected.push(pkg);
  }
  const rootName = target.root?.name ?? null;
  for (const pattern of [...include, ...exclude]) {
    const known = target.workspace.packages.some((pkg) => pkg.name === pattern || pkg.dir === pattern) || (exclude.includes(pattern) && pattern === rootName);
    if (!known) return unresolved(`${JSON.stringify(pattern)} matches no workspace`);
  }
  // -A takes in the root workspace; --include of workspace names leaves it out. Without that, the
  // root runs the script, or, lacking it, yarn 4 runs a binary of that name there if one is installed.
  if (include.length === 0) {
    if (rootName === null || !exclude.includes(rootName)) {
      return unresolved('yarn workspaces foreach --all takes in the root workspace, which runs the script or a binary of that name');
    }
  }
  // A workspace without the script runs a binary of that name in yarn 4, if it has one.
  return finish(selected, script, false, target.workspace);
}
