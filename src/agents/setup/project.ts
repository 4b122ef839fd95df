import { join, relative, resolve, sep } from 'node:path';
import { loadProject, locateProject } from '../../api/project.js';
import type { CheckDefinition } from '../../core/definition.js';
import { isVouchError } from '../../core/errors.js';
import { shellQuote } from '../shellQuote.js';

export interface AgentProjectOptions {
  cwd: string;
  config?: string | undefined;
  stateDir?: string | undefined;
  root?: string | undefined;
}

/** The project as setup, removal and doctor see it. */
export interface AgentProject {
  root: string;
  configPath: string;
  stateDir: string;
  /** The config's checks, or null when the config does not load (then `configError` says why). */
  checks: CheckDefinition[] | null;
  configError: { code: string; message: string } | null;
  /** Options the generated commands need so they find this config and state dir from the root: '' or ` --config FILE`. */
  commandOptions: string;
  /** The same options as unquoted words, for commands spawned with no shell. */
  commandArgs: string[];
}

/**
 * Loads the config, but lets removal and doctor go on when only its contents
 * are wrong: they must still find the root and the record to do their job.
 */
export async function agentProject(options: AgentProjectOptions, requireConfig: boolean): Promise<AgentProject> {
  const place = locateProject(options);
  let checks: CheckDefinition[] | null = null;
  let configError: AgentProject['configError'] = null;
  try {
    checks = (await loadProject(options)).definitions;
  } catch (error) {
    if (requireConfig || !isVouchError(error)) throw error;
    configError = { code: error.code, message: error.message };
  }
  const args: string[] = [];
  if (place.configPath !== join(place.root, 'vouch.config.json')) args.push('--config', portable(place.root, place.configPath));
  if (place.stateDir !== resolve(place.root, '.vouch')) args.push('--state-dir', portable(place.root, place.stateDir));
  if (place.rootFromCommandLine) args.push('--root', place.root);
  const commandOptions = args.map((word) => ` ${word.startsWith('--') ? word : shellQuote(word)}`).join('');
  return { root: place.root, configPath: place.configPath, stateDir: place.stateDir, checks, configError, commandOptions, commandArgs: args };
}

/** Relative to the root when inside it (agents work from the root), else absolute. */
function portable(root: string, path: string): string {
  const rel = relative(root, path);
  return rel.startsWith('..') || rel === '' ? path : rel.split(sep).join('/');
}
