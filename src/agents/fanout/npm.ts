import { RUN_COMMANDS, TEST_COMMANDS } from '../../core/packageManagerGrammar.js';
import type { Workspace, WorkspacePackage } from '../../core/workspace.js';
import { finish, flagValue, fromRoot, plainInPackage, rootSettingsMayRun, unresolved, wrongManager, type FanOut, type FanOutTarget } from './answer.js';
import { dirPattern, isPlain } from './patterns.js';

const NPM_WORKSPACE = /^(?:-w|--workspace(?:=.*)?|--workspaces(?:=.*)?|-ws|--include-workspace-root(?:=.*)?|--prefix(?:=.*)?|-C)$/;

/**
 * npm: `-w X` runs the script in workspace X, named by its name, its
 * directory, or a parent directory of several; `--workspaces` in every one,
 * the root excluded (https://docs.npmjs.com/cli/using-npm/workspaces,
 * https://docs.npmjs.com/cli/using-npm/config#workspace). A selected
 * workspace without the script fails the command unless --if-present
 * (https://docs.npmjs.com/cli/commands/npm-run-script#if-present).
 */
export function npmFanOut(args: readonly string[], target: FanOutTarget): FanOut {
  // npm reads its options anywhere on the line up to `--` (https://docs.npmjs.com/cli/using-npm/config#command-line-flags).
  const end = args.indexOf('--');
  const options = end === -1 ? args : args.slice(0, end);
  if (!options.some((word) => NPM_WORKSPACE.test(word) || /^-[a-zA-Z]*w/.test(word))) return plainInPackage(['npm', ...args], target);
  const named: string[] = [];
  let all = false;
  let ifPresent = false;
  const positional: string[] = [];
  for (let index = 0; index < args.length; ) {
    const word = args[index]!;
    if (!word.startsWith('-')) {
      positional.push(word);
      index++;
      continue;
    }
    if (word === '--') return unresolved('arguments after -- go to the script');
    const workspace = flagValue(args, index, ['-w', '--workspace']);
    if (workspace) {
      if (workspace.value === undefined || workspace.value === '' || workspace.value.startsWith('-')) return unresolved('--workspace without a value');
      named.push(workspace.value);
      index += workspace.width;
      continue;
    }
    if (word === '--workspaces' || word === '-ws') all = true;
    else if (word === '--if-present') ifPresent = true;
    else return unresolved(`npm's ${word.split('=')[0]} is not read by vouch`);
    index++;
  }
  const [command, ...rest] = positional;
  let script: string;
  if (command !== undefined && RUN_COMMANDS.npm.includes(command) && rest.length === 1) script = rest[0]!;
  else if (command !== undefined && TEST_COMMANDS.npm.includes(command) && rest.length === 0) script = 'test';
  else return unresolved('not one script run, or arguments after the script');
  if (all && named.length > 0) return unresolved('--workspaces together with --workspace');
  const where = fromRoot(target) ?? wrongManager('npm', target);
  if (where) return where;
  const settings = rootSettingsMayRun(target, script);
  if (settings) return unresolved(settings);
  if (all) return finish(target.workspace.packages, script, ifPresent, target.workspace);
  const selected = new Map<string, WorkspacePackage>();
  for (const value of named) {
    const found = npmWorkspace(value, target.workspace);
    if (typeof found === 'string') return unresolved(found);
    for (const pkg of found) selected.set(pkg.name, pkg);
  }
  return finish([...selected.values()], script, ifPresent, target.workspace);
}

/** The workspaces `-w value` selects: by name, or by a directory that is a workspace's or holds workspaces. */
function npmWorkspace(value: string, workspace: Workspace): WorkspacePackage[] | string {
  const byName = workspace.packages.filter((pkg) => pkg.name === value);
  // npm matches a directory value as a glob too: only a plain one is read.
  const dir = isPlain(value) ? dirPattern(value) : null;
  if (dir === null && byName.length === 0) return `-w ${JSON.stringify(value)} is neither a workspace's name nor a directory vouch reads`;
  const prefix = dir === null ? null : dir.join('/');
  const byDir = prefix === null ? [] : workspace.packages.filter((pkg) => pkg.dir === prefix || pkg.dir.startsWith(`${prefix}/`));
  const found = [...new Set([...byName, ...byDir])];
  return found.length === 0 ? `-w ${JSON.stringify(value)} matches no workspace` : found;
}
