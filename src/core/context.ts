import { canonicalJson } from './canonicalJson.js';
import { sha256 } from './digest.js';
import type { ScriptBody } from './scriptContext.js';

/**
 * Everything besides the inputs that decides a check's outcome. Environment
 * values appear only as keyed digests (null when unset): never the value.
 */
export interface CheckContext {
  argv: string[];
  executable: ExecutableIdentity | null;
  node: { version: string; executable: ExecutableIdentity | null };
  platform: string;
  arch: string;
  packageManager: { name: string; version: string | null; executable: ExecutableIdentity | null } | null;
  env: Record<string, string | null>;
  /**
   * The package.json scripts the command makes the package manager run
   * (core/scriptContext.ts), sorted by name. Left out when there are none,
   * so that the digest of a check that runs no script is what it was before
   * scripts were recorded.
   */
  scripts?: ScriptBody[];
}

export interface ExecutableIdentity {
  path: string;
  identity: string;
}

export function contextDigest(context: CheckContext): string {
  return sha256(canonicalJson(context));
}

/** Variables that change how Node and most tools behave, whatever the check. */
export const DEFAULT_ENV_NAMES = ['NODE_ENV', 'NODE_OPTIONS', 'NODE_PATH', 'TZ', 'CI'];

/** Tools read variables with their own prefix; a check that runs one depends on them. */
export const TOOL_ENV_PREFIXES: Record<string, string> = {
  tsc: 'TSC_',
  'vue-tsc': 'TSC_',
  vitest: 'VITEST_',
  jest: 'JEST_',
  eslint: 'ESLINT_',
  oxlint: 'OXLINT_',
  biome: 'BIOME_',
  prettier: 'PRETTIER_',
  mocha: 'MOCHA_',
  ava: 'AVA_',
};

/**
 * Package managers read their settings from variables with these prefixes,
 * in any case: npm from `npm_config_*`
 * (https://docs.npmjs.com/cli/v11/using-npm/config#environment-variables),
 * pnpm from `npm_config_*` and `pnpm_config_*` (https://pnpm.io/settings),
 * and `PNPM_HOME`; yarn 2+ from `YARN_*` (https://yarnpkg.com/configuration/yarnrc),
 * yarn 1 from `npm_config_*` and `yarn_*`; bun from `BUN_*`
 * (https://bun.sh/docs/runtime/env#configuring-bun); and Corepack, which picks
 * the package manager's version itself, from `COREPACK_*`
 * (https://github.com/nodejs/corepack#environment-variables). Any of them may change
 * what a script run does (`npm_config_workspace` runs another package's
 * script, `npm_config_script_shell` another shell, `npm_config_ignore_scripts`
 * skips the pre and post scripts), so every check records them, whatever its
 * command: only the names that are set are recorded, so a check run with none
 * of them set keeps the context it had.
 */
export const PACKAGE_MANAGER_ENV_PATTERNS = ['npm_config_*', 'pnpm_*', 'yarn_*', 'bun_*', 'corepack_*'];

/** Whether a variable is a package manager's setting: its name starts with one of PACKAGE_MANAGER_ENV_PATTERNS's prefixes, in any case. */
export function isPackageManagerSetting(name: string): boolean {
  const lower = name.toLowerCase();
  return PACKAGE_MANAGER_ENV_PATTERNS.some((pattern) => lower.startsWith(pattern.slice(0, -1)));
}

/**
 * The environment names a check depends on: the defaults, the package
 * managers' settings, its declared names, and `PREFIX*` for each tool its
 * command line mentions.
 */
export function envPatterns(declared: readonly string[], commandLine: string): string[] {
  const patterns = new Set([...DEFAULT_ENV_NAMES, ...PACKAGE_MANAGER_ENV_PATTERNS, ...declared]);
  for (const word of commandLine.split(/[\s;&|()'"=]+/)) {
    const tool = word.split('/').pop() ?? '';
    const prefix = TOOL_ENV_PREFIXES[tool];
    if (prefix) patterns.add(`${prefix}*`);
  }
  return [...patterns].sort();
}

/** Expands patterns against an environment into the sorted list of names to record. A package manager's prefix matches in any case, as they read it. */
export function envNames(patterns: readonly string[], env: NodeJS.ProcessEnv): string[] {
  const names = new Set<string>();
  for (const pattern of patterns) {
    if (pattern.endsWith('*')) {
      const prefix = pattern.slice(0, -1);
      const anyCase = PACKAGE_MANAGER_ENV_PATTERNS.includes(pattern);
      for (const name of Object.keys(env)) if (name.startsWith(prefix) || (anyCase && name.toLowerCase().startsWith(prefix))) names.add(name);
    } else {
      names.add(pattern);
    }
  }
  return [...names].sort();
}
