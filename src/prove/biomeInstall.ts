import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { ClaimError } from '../core/claimError.js';

/** The npm package the workspace installs Biome as. */
export const BIOME_PACKAGE = '@biomejs/biome';

/** The workspace's Biome: the version of `@biomejs/biome` and the native binary it runs. */
export interface BiomeInstall {
  version: string;
  bin: string;
}

/** Whether this Node runs on glibc, as its own report says (musl has no glibc version). */
function onGlibc(): boolean {
  const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined;
  return typeof report?.header?.glibcVersionRuntime === 'string';
}

/**
 * The platform packages that may hold the binary, most likely first. The
 * `@biomejs/biome` bin is a Node script that picks one of these and runs it
 * (https://github.com/biomejs/biome/blob/main/packages/%40biomejs/biome/bin/biome);
 * vouch runs the binary itself, so no Node process sits between it and the
 * server for as long as the stage lives, and a kill reaches Biome.
 */
function platformPackages(): string[] {
  const { platform, arch } = process;
  if (platform === 'linux') {
    const [first, second] = onGlibc() ? ['', '-musl'] : ['-musl', ''];
    return [`@biomejs/cli-linux-${arch}${first}`, `@biomejs/cli-linux-${arch}${second}`];
  }
  return [`@biomejs/cli-${platform}-${arch}`];
}

/** `@biomejs/biome` as the workspace resolves it, and its platform binary beside it. */
export function resolveBiome(workspace: string): BiomeInstall {
  let manifest: string;
  try {
    manifest = createRequire(join(workspace, 'package.json')).resolve(`${BIOME_PACKAGE}/package.json`);
  } catch {
    throw new ClaimError('workspace', 'missing', `${BIOME_PACKAGE} is not installed in ${workspace}; install it there (npm install --save-dev ${BIOME_PACKAGE})`);
  }
  let version: string;
  try {
    version = (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
  } catch (error) {
    throw new ClaimError('workspace', 'malformed', `${manifest} cannot be read: ${(error as Error).message}; reinstall ${BIOME_PACKAGE}`);
  }
  const beside = createRequire(manifest);
  const name = process.platform === 'win32' ? 'biome.exe' : 'biome';
  for (const pkg of platformPackages()) {
    let dir: string;
    try {
      dir = dirname(beside.resolve(`${pkg}/package.json`));
    } catch {
      continue;
    }
    const bin = join(dir, name);
    if (existsSync(bin)) return { version, bin };
  }
  throw new ClaimError(
    'workspace',
    'missing',
    `${BIOME_PACKAGE}@${version} in ${workspace} has no binary for ${process.platform}-${process.arch} (looked for ${platformPackages().join(', ')}); reinstall it there so its optional platform package is installed`,
  );
}
