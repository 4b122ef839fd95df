import { isOwnCommand } from '../../core/packageManagerGrammar.js';
import type { WorkspacePackage } from '../../core/workspace.js';
import { finish, flagValue, fromRoot, plainInPackage, rootMayRun, unresolved, wrongManager, type FanOut, type FanOutTarget } from './answer.js';
import { dirMatches, dirPattern, nameMatches } from './patterns.js';

/**
 * bun: `bun run --filter P S` and `bun --filter P S` run S in every package
 * matching P, by name or by `./path`, skipping packages without it
 * (https://bun.sh/docs/cli/filter). Only one positive pattern is read.
 */
export function bunFanOut(args: readonly string[], target: FanOutTarget): FanOut {
  const viaRun = args[0] === 'run';
  let index = viaRun ? 1 : 0;
  // Only bun's own options, before the script, can select packages: later words go to the script.
  const rest = args.slice(index);
  const firstWord = rest.findIndex((word) => !word.startsWith('-'));
  const leading = firstWord === -1 ? rest : rest.slice(0, firstWord);
  if (!leading.some((word) => word.startsWith('--filter') || word.startsWith('-F'))) return plainInPackage(['bun', ...args], target);
  const filters: string[] = [];
  while (index < args.length && args[index]!.startsWith('-')) {
    const filter = flagValue(args, index, ['--filter', '-F']);
    if (!filter) return unresolved(`bun's ${args[index]!.split('=')[0]} is not read by vouch`);
    if (filter.value === undefined) return unresolved('--filter without a pattern');
    filters.push(filter.value);
    index += filter.width;
  }
  const [script, ...extra] = args.slice(index);
  if (script === undefined || extra.length > 0) return unresolved('not one script run, or arguments after the script');
  // Without `run`, a bun command of that name runs instead (https://bun.sh/docs/cli/run).
  if (!viaRun && isOwnCommand('bun', script)) return unresolved(`bun ${script} is bun's own command`);
  if (filters.length !== 1) return unresolved('several --filter patterns');
  const where = fromRoot(target) ?? wrongManager('bun', target);
  if (where) return where;
  const pattern = filters[0]!;
  if (pattern.startsWith('!')) return unresolved('bun exclusion patterns are not read by vouch');
  let selected: WorkspacePackage[];
  let mayTakeRoot: boolean;
  if (pattern.startsWith('./')) {
    const dir = dirPattern(pattern);
    if (dir === null) return unresolved(`the path pattern ${JSON.stringify(pattern)} is not one vouch reads`);
    selected = [];
    for (const pkg of target.workspace.packages) {
      const matches = dirMatches(dir, pkg.dir);
      if (matches === null) return unresolved(`whether ${JSON.stringify(pattern)} selects ${pkg.dir} depends on the glob library`);
      if (matches) selected.push(pkg);
    }
    mayTakeRoot = false;
  } else {
    selected = [];
    for (const pkg of target.workspace.packages) {
      // "*" alone matches every package (https://bun.sh/docs/cli/filter); otherwise whether bun's `*`
      // crosses the "/" of a scoped name is not documented, so only patterns where it makes no difference are read.
      const matches = pattern === '*' ? true : nameMatches(pattern, pkg.name, 'unknown');
      if (matches === null) return unresolved(`the name pattern ${JSON.stringify(pattern)} is not one vouch reads`);
      if (matches) selected.push(pkg);
    }
    mayTakeRoot = pattern.includes('*');
  }
  if (selected.length === 0) return unresolved(`${JSON.stringify(pattern)} matches no workspace package`);
  if (mayTakeRoot) {
    const root = rootMayRun(target, script);
    if (root) return unresolved(root);
  }
  return finish(selected, script, true, target.workspace);
}
