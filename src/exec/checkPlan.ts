import { join } from 'node:path';
import { arch, platform } from 'node:process';
import { envNames, type CheckContext, type ExecutableIdentity } from '../core/context.js';
import { checkArgv, type CheckDefinition } from '../core/definition.js';
import { keyedDigest } from '../core/digest.js';
import type { ObservedContext } from '../core/observation.js';
import { reason, type Reason } from '../core/reason.js';
import { contextEnvPatterns, scriptBodies, type CommandSplitter } from '../core/scriptContext.js';
import { packageManagerVersion, QUIET_PACKAGE_MANAGER_ENV } from './packageManagerCommand.js';
import { checkPath, executableIdentity, resolveExecutable } from './resolveExecutable.js';

/** How a check will be spawned, and the context that binds its receipt. */
export interface CheckPlan {
  argv: string[];
  /** Where it runs: the root, or a package check's package directory. */
  cwd: string;
  executable: string | null;
  env: NodeJS.ProcessEnv;
  observed: ObservedContext;
}

export interface PlanInput {
  root: string;
  definition: CheckDefinition;
  scripts: Record<string, string> | null;
  /** How to split the script bodies the check runs (Project.splitScript). */
  splitScript: CommandSplitter;
  env: NodeJS.ProcessEnv;
  envKey: string;
}

/**
 * Where a check runs and with what environment: the root, or a package check's package (as its package
 * manager runs it there, its own node_modules/.bin first). `vouch run` and `vouch init --verify` both
 * spawn from this, so a check that passes under one passes under the other.
 */
export function checkPlace(root: string, packageDir: string | undefined, env: NodeJS.ProcessEnv): { cwd: string; env: NodeJS.ProcessEnv } {
  const cwd = packageDir === undefined ? root : join(root, packageDir);
  return { cwd, env: { ...env, ...QUIET_PACKAGE_MANAGER_ENV, PATH: checkPath(cwd, env) } };
}

export function planCheck({ root, definition, scripts, splitScript, env, envKey }: PlanInput): CheckPlan {
  const problems: Reason[] = [];
  const { cwd, env: childEnv } = checkPlace(root, definition.package, env);
  const path = childEnv.PATH!;

  const argv = checkArgv(definition);
  if (definition.script !== null && scripts?.[definition.script] === undefined) {
    problems.push(reason('script-not-found', `package.json has no script "${definition.script}"; add it, or change the check's "script"`));
  }

  const found = argv[0] === undefined ? null : resolveExecutable(argv[0], cwd, path);
  if (found === null) {
    problems.push(reason('executable-not-found', `"${argv[0]}" is not on PATH or in node_modules/.bin; install it, or fix the check's command`));
  }
  const traced = definition.mode === 'traced';
  const executable = found === null ? null : safeIdentity(found, traced);
  const nodePath = resolveExecutable('node', cwd, path);

  let packageManager: CheckContext['packageManager'] = null;
  if (definition.script !== null) {
    const name = definition.packageManager ?? 'npm';
    packageManager = { name, version: executable ? packageManagerVersion(name, executable.path) : null, executable };
  }

  const recorded: Record<string, string | null> = {};
  for (const name of envNames(contextEnvPatterns(definition, scripts, splitScript), env)) {
    const value = env[name];
    recorded[name] = value === undefined ? null : keyedDigest(envKey, value);
  }

  const context: CheckContext = {
    argv,
    executable,
    node: { version: process.version, executable: nodePath ? safeIdentity(nodePath) : null },
    platform,
    arch,
    packageManager,
    env: recorded,
  };
  // What `npm run X` (or a command that is one) really executes: the bodies, whatever the inputs.
  const bodies = scriptBodies(argv, scripts, splitScript);
  if (bodies.length > 0) context.scripts = bodies;
  return { argv, cwd, executable: found, env: childEnv, observed: { context, problems } };
}

function safeIdentity(path: string, traced = false): ExecutableIdentity | null {
  try {
    return executableIdentity(path, traced);
  } catch {
    return null;
  }
}
