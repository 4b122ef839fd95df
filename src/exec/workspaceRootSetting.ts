import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

/*
 * Whether pnpm and npm are known to leave the workspace root out of a
 * recursive run. Both take it in when `include-workspace-root` is set
 * (https://pnpm.io/cli/recursive#--include-workspace-root,
 * https://docs.npmjs.com/cli/using-npm/config#include-workspace-root), and
 * that setting may come from any of their config files or the environment
 * (https://docs.npmjs.com/cli/configuring-npm/npmrc#files,
 * https://pnpm.io/npmrc, https://pnpm.io/settings). Any mention of it, in
 * any form, or a config file that cannot be read, answers false: the
 * fan-out then resolves only where the root has no script of that name.
 */

const SETTING = /include-?workspace-?root/i;
const MAX_BYTES = 1024 * 1024;

export function workspaceRootExcluded(root: string, env: NodeJS.ProcessEnv): boolean {
  for (const name of Object.keys(env)) if (SETTING.test(name.replaceAll('_', '-'))) return false;
  const home = env.HOME ?? homedir();
  const files = [
    join(root, '.npmrc'),
    join(root, 'pnpm-workspace.yaml'),
    env.NPM_CONFIG_USERCONFIG ?? env.npm_config_userconfig ?? join(home, '.npmrc'),
    env.NPM_CONFIG_GLOBALCONFIG ?? env.npm_config_globalconfig ?? join(dirname(dirname(process.execPath)), 'etc', 'npmrc'),
    join(env.XDG_CONFIG_HOME ?? join(home, '.config'), 'pnpm', 'rc'),
  ];
  return files.every((file) => !mentions(file));
}

/** Whether the file mentions the setting; true when it exists but cannot be read whole. */
function mentions(file: string): boolean {
  let text: string;
  try {
    const bytes = readFileSync(file);
    if (bytes.length > MAX_BYTES) return true;
    text = bytes.toString('utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return !(code === 'ENOENT' || code === 'ENOTDIR');
  }
  return SETTING.test(text);
}
