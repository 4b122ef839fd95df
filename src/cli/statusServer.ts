import { isAbsolute } from 'node:path';
import { locateProject } from '../api/projectPlace.js';
import type { ServedStatus, StatusCall } from '../observer/protocol.js';
import type { Handler } from '../observer/rpcServer.js';
import type { CliIo } from './io.js';
import { parseCommand, STATUS_OPTIONS } from './options.js';

/** The observer that serves: its project's place and its build (api/buildId.ts). */
export interface ServingObserver {
  configPath: string;
  stateDir: string;
  root: string;
  version: string;
  build: string;
}

/*
 * The observer's side of a status answered whole (cli/servedStatus.ts asks): the status command
 * runs here, in a process whose modules are loaded and whose index is warm, with the caller's
 * working directory, arguments and environment, and what it prints goes back to be printed.
 *
 * It answers only what the caller's own process would have answered the same way: the same build
 * (so the same code), the same Node (a receipt's context names Node's version), this observer's
 * own config, state dir and root, and a status the index answers. Anything else, an error
 * included, is refused, and the caller's own process answers it, as if no observer served.
 */
export function statusServer(own: ServingObserver): Handler {
  return async (params) => {
    // Loaded here: cli/ loads observer/ lazily, and this runs only inside an observer, which has.
    const { InvalidParams } = await import('../observer/rpcServer.js');
    const call = statusCall(params, InvalidParams);
    if (call.version !== own.version || call.build !== own.build) throw new InvalidParams('the caller is another vouch build');
    if (call.node !== process.version) throw new InvalidParams(`the caller runs Node ${call.node}, this observer ${process.version}`);
    const { values } = parseCommand('status', call.argv, STATUS_OPTIONS);
    const place = locateProject({ cwd: call.cwd, config: values.config, stateDir: values['state-dir'], root: values.root });
    if (place.configPath !== own.configPath || place.stateDir !== own.stateDir || place.root !== own.root) throw new InvalidParams('the caller asks about another project');
    const stdout: string[] = [];
    const stderr: string[] = [];
    const io: CliIo = { cwd: call.cwd, env: call.env, stdout: into(stdout), stderr: into(stderr), isTty: async () => false };
    const code = await (await import('./commands/status.js')).runServed(call.argv, io);
    return { stdout: stdout.join(''), stderr: stderr.join(''), code } satisfies ServedStatus;
  };
}

function into(parts: string[]): CliIo['stdout'] {
  return { write: (chunk) => parts.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8')) };
}

function statusCall(params: unknown, InvalidParams: new (message: string) => Error): StatusCall {
  const call = params as Partial<StatusCall> | null;
  const strings = (value: unknown): value is string[] => Array.isArray(value) && value.every((item) => typeof item === 'string');
  const env = call?.env;
  if (
    call === null ||
    typeof call !== 'object' ||
    !strings(call.argv) ||
    typeof call.cwd !== 'string' ||
    !isAbsolute(call.cwd) ||
    typeof call.node !== 'string' ||
    typeof call.version !== 'string' ||
    typeof call.build !== 'string' ||
    env === null ||
    typeof env !== 'object' ||
    Array.isArray(env) ||
    !strings(Object.values(env))
  ) {
    throw new InvalidParams('expected {argv, cwd, env, node, version, build}');
  }
  return call as StatusCall;
}
