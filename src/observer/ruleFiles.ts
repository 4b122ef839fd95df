import { spawnSync } from 'node:child_process';
import { lstatSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';

/**
 * Files outside the root that decide which of its files git tracks or
 * ignores: the index (a linked worktree's lives in the main repository),
 * info/exclude, .gitignore files above the root and the global excludes file.
 * No event inside the root reports a change to them, so each question stats
 * them instead. Empty outside a git repository.
 */
export function outsideRuleFiles(root: string, env: NodeJS.ProcessEnv = process.env): string[] {
  const git = (args: string[]) => {
    const result = spawnSync('git', args, { cwd: root, encoding: 'utf8', env: { ...env, GIT_OPTIONAL_LOCKS: '0' } });
    return result.status === 0 ? result.stdout.trim() : null;
  };
  const paths = git(['rev-parse', '--path-format=absolute', '--git-path', 'index', '--git-path', 'info/exclude', '--show-toplevel']);
  if (paths === null) return [];
  const [index, exclude, top] = paths.split('\n');
  if (index === undefined || exclude === undefined || top === undefined) return [];
  const files = [index, exclude];
  for (let dir = dirname(root); relative(top, dir) === '' || !relative(top, dir).startsWith('..'); dir = dirname(dir)) {
    files.push(join(dir, '.gitignore'));
    if (dir === top || dirname(dir) === dir) break;
  }
  const configured = git(['config', '--get', 'core.excludesFile']);
  const home = env.HOME ?? homedir();
  files.push(
    configured
      ? resolve(root, configured.replace(/^~(?=\/)/, home))
      : join(env.XDG_CONFIG_HOME || join(home, '.config'), 'git', 'ignore'),
  );
  return files.filter((file) => relative(root, file).startsWith('..'));
}

/** The identities of these files (or their absence), as one string to compare. */
export function ruleStamp(files: readonly string[]): string {
  let stamp = '';
  for (const file of files) {
    const stats = lstatSync(file, { bigint: true, throwIfNoEntry: false });
    stamp += stats ? `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeNs}:${stats.ctimeNs}\n` : '-\n';
  }
  return stamp;
}
