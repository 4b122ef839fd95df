import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { PackageManagerName } from '../core/config.js';

const PACKAGE_NAMES: Record<PackageManagerName, string[]> = {
  npm: ['npm'],
  pnpm: ['pnpm', '@pnpm/exe'],
  yarn: ['yarn', '@yarnpkg/cli-dist'],
  bun: ['bun'],
};

/**
 * The package manager's version, read from its own package.json beside the
 * resolved executable: running "npm --version" would cost more than a status.
 */
export function packageManagerVersion(name: PackageManagerName, realExecutable: string): string | null {
  let dir = dirname(realExecutable);
  for (let depth = 0; depth < 4; depth++, dir = dirname(dir)) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name && PACKAGE_NAMES[name].includes(pkg.name)) return pkg.version ?? null;
    } catch {
      // no package.json at this level
    }
  }
  return null;
}

/** Keeps package managers from consulting the network about their own updates: an input nobody observes. */
export const QUIET_PACKAGE_MANAGER_ENV: Record<string, string> = {
  npm_config_update_notifier: 'false',
  NO_UPDATE_NOTIFIER: '1',
  COREPACK_ENABLE_DOWNLOAD_PROMPT: '0',
};
