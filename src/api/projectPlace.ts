import { closeSync, existsSync, fstatSync, lstatSync, openSync, readFileSync, realpathSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { CONFIG_FILE } from '../core/config.js';
import { CONFIG_LIMITS } from '../core/configLimits.js';
import { VouchError } from '../core/errors.js';
import { isInside } from '../core/pathInside.js';
import { checkStateDir } from '../store/stateDir.js';

/*
 * Where a project is: its config, root and state dir, found without reading more than the
 * config's bytes. Apart from project.ts, so that what needs only the place (the hook on a
 * command that names no check, the observer client) loads none of the rest.
 */

export interface ProjectOptions {
  cwd: string;
  config?: string | undefined;
  stateDir?: string | undefined;
  /** The root, chosen by the user: unlike the config's "root", it may be anywhere. */
  root?: string | undefined;
}

export function findConfig(cwd: string, explicit: string | undefined): string {
  if (explicit !== undefined) {
    const path = resolve(cwd, explicit);
    if (!existsSync(path)) {
      throw new VouchError('config-not-found', `${path} does not exist; check the --config path, or create it with "vouch init --config ${explicit}"`);
    }
    return path;
  }
  for (let dir = cwd; ; dir = dirname(dir)) {
    const path = join(dir, CONFIG_FILE);
    if (existsSync(path)) return path;
    if (dirname(dir) === dir) break;
  }
  throw new VouchError('config-not-found', `no ${CONFIG_FILE} in ${cwd} or any directory above it; run "vouch init" in the project root, or pass --config FILE`);
}

/** Where a project's config, root and state dir are. */
export interface ProjectPlace {
  configPath: string;
  root: string;
  stateDir: string;
  /** The config's text, as read. */
  text: string;
  rootFromCommandLine: boolean;
}

/**
 * Finds the config and reads where its root and state dir are, and nothing
 * more: enough to reach an observer, even one whose root has gone.
 */
export function locateProject(options: ProjectOptions): ProjectPlace {
  const configPath = findConfig(options.cwd, options.config);
  const text = readConfigText(configPath);
  const root = options.root !== undefined ? resolve(options.cwd, options.root) : configuredRoot(configPath, peekRoot(text));
  const stateDir = options.stateDir !== undefined ? resolve(options.cwd, options.stateDir) : join(root, '.vouch');
  // Every command finds its state here, before it reads or writes any: a link, or someone else's, is refused.
  checkStateDir(stateDir);
  return { configPath, root, stateDir, text, rootFromCommandLine: options.root !== undefined };
}

/** The config's bytes as text, refusing what would be read differently than it was written. */
function readConfigText(configPath: string): string {
  let bytes: Buffer;
  try {
    const fd = openSync(configPath, 'r');
    try {
      const size = fstatSync(fd).size;
      if (size > CONFIG_LIMITS.fileBytes) throw tooLarge(configPath, size);
      bytes = readFileSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    if (error instanceof VouchError) throw error;
    throw new VouchError('config-unreadable', `cannot read ${configPath} (${(error as NodeJS.ErrnoException).code}); fix its permissions`);
  }
  // It may have grown between the stat and the read.
  if (bytes.length > CONFIG_LIMITS.fileBytes) throw tooLarge(configPath, bytes.length);
  try {
    // Decoded leniently, invalid bytes would become U+FFFD: two different files could read the same.
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new VouchError('config-not-utf8', `${configPath} is not valid UTF-8; save it as UTF-8 (JSON text must be, RFC 8259 section 8.1)`);
  }
}

function tooLarge(configPath: string, size: number): VouchError {
  return new VouchError('config-too-large', `${configPath} is ${size} bytes; a config may be at most ${CONFIG_LIMITS.fileBytes} bytes (docs/config.md, "Limits"). Use wider globs, or fewer checks`);
}

/**
 * The config's "root", which may only narrow: the config's own directory or
 * below, lexically and once links are resolved. A cloned repository's config
 * must not point vouch at /etc or at the whole disk; the user can, with --root.
 */
function configuredRoot(configPath: string, rootText: string): string {
  const configDir = dirname(configPath);
  if (rootText === '.') return configDir;
  const refuse = (why: string) =>
    new VouchError(
      'root-outside-config',
      `"root" in ${configPath} is ${JSON.stringify(rootText)}, ${why}; a config's root must be the config's own directory (${configDir}) or below it, so that a cloned repository cannot point vouch elsewhere. Fix "root", or pass --root DIR to choose a root elsewhere yourself`,
    );
  if (rootText.includes('\0')) throw refuse('which holds a NUL character');
  const root = resolve(configDir, rootText);
  if (!isInside(configDir, root)) throw refuse(`which is ${root}, outside the config's directory`);
  // The deepest part of the root that exists decides where it really is: a link there may lead anywhere.
  let existing = root;
  const rest: string[] = [];
  while (existing !== configDir && !lexists(existing)) {
    rest.unshift(basename(existing));
    existing = dirname(existing);
  }
  let real: string;
  let realConfigDir: string;
  try {
    real = join(realpathSync.native(existing), ...rest);
    realConfigDir = realpathSync.native(configDir);
  } catch (error) {
    throw refuse(`which passes through ${existing}, a link that does not resolve (${(error as NodeJS.ErrnoException).code})`);
  }
  if (!isInside(realConfigDir, real)) throw refuse(`which leads through a link to ${real}, outside the config's directory`);
  return root;
}

/** Whether a path exists, itself (a dangling link exists); a parent that is a file (ENOTDIR) or unreadable counts as absent. */
function lexists(path: string): boolean {
  try {
    return lstatSync(path, { throwIfNoEntry: false }) !== undefined;
  } catch {
    return false;
  }
}

function peekRoot(text: string): string {
  try {
    const value = (JSON.parse(text) as { root?: unknown }).root;
    return typeof value === 'string' && value.length > 0 ? value : '.';
  } catch {
    return '.';
  }
}

