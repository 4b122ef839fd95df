import { isOwnCommand, RUN_COMMANDS, TEST_COMMANDS } from '../../core/packageManagerGrammar.js';
import { finish, flagValue, fromRoot, plainInPackage, rootMayRun, rootSettingsMayRun, unresolved, wrongManager, type FanOut, type FanOutTarget } from './answer.js';
import { selectAll } from './filters.js';

/** pnpm flags that do not change which scripts run (https://pnpm.io/cli/run#options, https://pnpm.io/cli/recursive). */
const PNPM_NEUTRAL = new Set(['--parallel', '--stream', '--no-bail', '--bail', '--if-present', '--sort', '--no-sort', '--aggregate-output', '--reporter-hide-prefix']);
const PNPM_VALUED_NEUTRAL = ['--workspace-concurrency', '--reporter'];
/** Flags that make a pnpm command a workspace command. */
const PNPM_WORKSPACE = /^(?:-r|--recursive|-F|--filter(?:=.*)?|--filter-prod(?:=.*)?|-w|--workspace-root|--include-workspace-root(?:=.*)?|-C|--dir(?:=.*)?|--test-pattern(?:=.*)?|--changed-files-ignore-pattern(?:=.*)?|--fail-if-no-match|--resume-from(?:=.*)?)$/;

/** pnpm's options that take the next word as their value. */
const PNPM_VALUED = new Set(['--filter', '-F', '--filter-prod', '--workspace-concurrency', '--reporter', '-C', '--dir', '--test-pattern', '--changed-files-ignore-pattern', '--resume-from']);

/** The option words before the command: pnpm's own; words after the command belong to it or to the script. */
function leadingOptions(args: readonly string[]): string[] {
  const options: string[] = [];
  for (let index = 0; index < args.length && args[index]!.startsWith('-'); index++) {
    options.push(args[index]!);
    if (PNPM_VALUED.has(args[index]!)) index++;
  }
  return options;
}

/**
 * pnpm: `-r` runs the script in every workspace package that has it, the root
 * excluded (https://pnpm.io/cli/run#recursive-r, https://pnpm.io/cli/recursive);
 * `--filter` selects by https://pnpm.io/filtering. Words after the script go
 * to the script (https://pnpm.io/cli/run).
 */
export function pnpmFanOut(args: readonly string[], target: FanOutTarget): FanOut {
  if (!leadingOptions(args).some((word) => PNPM_WORKSPACE.test(word) || /^-[a-zA-Z]*[rFwC]/.test(word))) return plainInPackage(['pnpm', ...args], target);
  let recursive = false;
  const filters: string[] = [];
  let index = 0;
  while (index < args.length && args[index]!.startsWith('-')) {
    const word = args[index]!;
    if (word === '-r' || word === '--recursive') {
      recursive = true;
      index++;
      continue;
    }
    const filter = flagValue(args, index, ['--filter', '-F']);
    if (filter) {
      if (filter.value === undefined || filter.value.startsWith('-')) return unresolved('--filter without a selector');
      filters.push(filter.value);
      index += filter.width;
      continue;
    }
    if (PNPM_NEUTRAL.has(word)) {
      index++;
      continue;
    }
    const valued = flagValue(args, index, PNPM_VALUED_NEUTRAL);
    if (valued) {
      if (valued.value === undefined) return unresolved(`${word} without a value`);
      index += valued.width;
      continue;
    }
    return unresolved(`pnpm's ${word.split('=')[0]} is not read by vouch`);
  }
  const command = args[index];
  if (command === undefined) return unresolved('no script');
  let script: string;
  let next = index + 1;
  if (RUN_COMMANDS.pnpm.includes(command)) {
    const named = args[next++];
    if (named === undefined || named.startsWith('-')) return unresolved('no script after run');
    script = named;
  } else if (TEST_COMMANDS.pnpm.includes(command)) {
    script = 'test';
  } else if (!isOwnCommand('pnpm', command)) {
    script = command;
  } else {
    return unresolved(`pnpm ${command} is not a script run`);
  }
  if (next < args.length) return unresolved('arguments after the script change the command (they go to every script)');
  if (!recursive && filters.length === 0) return unresolved('a workspace flag vouch does not read');
  const where = fromRoot(target) ?? wrongManager('pnpm', target);
  if (where) return where;
  // include-workspace-root adds the root to a selection of every package: `-r` alone (no filters: every() of none is true), or only exclusions (checked with pnpm 10).
  const fromAll = filters.every((filter) => filter.startsWith('!'));
  const settings = fromAll ? rootSettingsMayRun(target, script) : null;
  if (settings) return unresolved(settings);
  if (filters.length === 0) return finish(target.workspace.packages, script, true, target.workspace);
  const selection = selectAll(filters, 'pnpm', target);
  if (typeof selection === 'string') return unresolved(selection);
  if (selection.mayTakeRoot) {
    const root = rootMayRun(target, script);
    if (root) return unresolved(root);
  }
  return finish(selection.packages, script, true, target.workspace);
}
