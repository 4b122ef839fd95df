import { spawnSync } from 'node:child_process';

/**
 * Whether git ignores `path` (root-relative) in the repository at `root`:
 * true or false, or null when `root` is not in a git work tree or git cannot
 * say. --no-index, so a file already tracked is judged by the rules alone.
 */
export function ignoredByGit(root: string, path: string): boolean | null {
  const result = spawnSync('git', ['check-ignore', '-q', '--no-index', '--', path], { cwd: root, stdio: 'ignore' });
  if (result.status === 0) return true;
  if (result.status === 1) return false;
  return null;
}
