import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

/**
 * The version of a package as the workspace resolves it (never vouch's own
 * copy), or null when it resolves nowhere. Read fresh on each call: a resident
 * stage compares it with what it warmed, to notice an upgrade.
 */
export function installedVersion(workspace: string, name: string): string | null {
  try {
    const manifest = createRequire(join(workspace, 'package.json')).resolve(`${name}/package.json`);
    return (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
  } catch {
    return null;
  }
}
