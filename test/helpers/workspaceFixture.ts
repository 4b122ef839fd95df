import { delimiter, join } from 'node:path';
import { cleanEnv, REPO, tempProject, type TempProject } from './project.js';

/*
 * A workspace of three packages, `c` depending on `b` and `b` on `a`, plus a
 * `tools` package with no test script, under pnpm, npm or yarn (1.x): the
 * package managers are the repository's own dev dependencies, so nothing is
 * fetched. Each test script reads its own package and prints a line.
 */

export type WorkspaceManager = 'pnpm' | 'npm' | 'yarn';

export const WORKSPACE_PACKAGES = ['a', 'b', 'c'] as const;

/** The environment a workspace test runs vouch in: the repository's bins first, so `pnpm` and `yarn` resolve offline. */
export function workspaceEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env = cleanEnv(extra);
  return { ...env, PATH: [join(REPO, 'node_modules', '.bin'), env.PATH ?? ''].join(delimiter), npm_config_offline: 'true', YARN_ENABLE_OFFLINE_MODE: '1', ...extra };
}

/** toolsTest: `tools` gets a test script and a check too (yarn 1's `yarn workspaces run test` fails on a package without it). */
export function workspaceFixture(manager: WorkspaceManager, options: { testMs?: number; checks?: object[]; toolsTest?: boolean } = {}): TempProject {
  const delay = options.testMs ?? 0;
  const deps: Record<string, string | null> = { a: null, b: 'a', c: 'b' };
  const files: Record<string, string> = {
    'package.json': JSON.stringify({ name: 'ws', private: true, ...(manager === 'pnpm' ? {} : { workspaces: ['packages/*'] }), scripts: { test: `${manager === 'npm' ? 'npm test --workspaces' : manager === 'pnpm' ? 'pnpm -r test' : 'yarn workspaces run test'}` } }, null, 2) + '\n',
    'tsconfig.base.json': '{ "compilerOptions": { "strict": true } }\n',
    'README.md': '# ws\n',
    'packages/tools/package.json': JSON.stringify({ name: '@demo/tools', version: '1.0.0', scripts: { build: 'node -e 0', ...(options.toolsTest ? { test: 'node -e 0' } : {}) } }) + '\n',
  };
  if (manager === 'pnpm') files['pnpm-workspace.yaml'] = 'packages:\n  - "packages/*"\n';
  for (const name of WORKSPACE_PACKAGES) {
    const dep = deps[name];
    files[`packages/${name}/package.json`] =
      JSON.stringify({ name: `@demo/${name}`, version: '1.0.0', ...(dep ? { dependencies: { [`@demo/${dep}`]: manager === 'pnpm' ? 'workspace:*' : '1.0.0' } } : {}), scripts: { test: 'node test.js' } }, null, 2) + '\n';
    files[`packages/${name}/src/index.js`] = `export const ${name} = 1;\n`;
    files[`packages/${name}/test.js`] =
      `const { readFileSync } = require('node:fs');\nreadFileSync('src/index.js');\nconsole.log('test ${name}: ok');\n${delay > 0 ? `setTimeout(() => {}, ${delay});\n` : ''}`;
  }
  const checks = options.checks ?? [...WORKSPACE_PACKAGES, ...(options.toolsTest ? ['tools'] : [])].map((name) => ({ name: `@demo/${name}#test`, kind: 'test', script: 'test', package: `packages/${name}` }));
  files['vouch.config.json'] = JSON.stringify({ schema: 1, packageManager: manager, checks }, null, 2) + '\n';
  const project = tempProject(`ws-${manager}`, files, { git: true });
  return project;
}
