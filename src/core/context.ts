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
 * The environment names a check depends on: the defaults, its declared names,
 * and `PREFIX*` for each tool its command line mentions.
 */
export function envPatterns(declared: readonly string[], commandLine: string): string[] {
  const patterns = new Set([...DEFAULT_ENV_NAMES, ...declared]);
  for (const word of commandLine.split(/[\s;&|()'"=]+/)) {
    const tool = word.split('/').pop() ?? '';
    const prefix = TOOL_ENV_PREFIXES[tool];
    if (prefix) patterns.add(`${prefix}*`);
  }
  return [...patterns].sort();
}

/** Expands patterns against an environment into the sorted list of names to record. */
export function envNames(patterns: readonly string[], env: NodeJS.ProcessEnv): string[] {
  const names = new Set<string>();
  for (const pattern of patterns) {
    if (pattern.endsWith('*')) {
      const prefix = pattern.slice(0, -1);
      for (const name of Object.keys(env)) if (name.startsWith(prefix)) names.add(name);
    } else {
      names.add(pattern);
    }
  }
  return [...names].sort();
}
