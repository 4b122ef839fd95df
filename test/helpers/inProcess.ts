import { main } from '../../src/cli/dispatch.js';
import { entryOf, expectCurrentEntry, type Json } from './answers.js';
import { cleanEnv, type CliResult, type TempProject } from './project.js';

/** A temporary project whose vouch commands are awaited: run in this process, or through the CLI. */
export interface AsyncProject extends Omit<TempProject, 'vouch' | 'json'> {
  /** `timeout` bounds a CLI process; a command in process is not bounded. */
  vouch(args: string[], options?: { env?: NodeJS.ProcessEnv; cwd?: string; timeout?: number }): Promise<CliResult>;
  json(args: string[], options?: { env?: NodeJS.ProcessEnv }): Promise<Json>;
}

/**
 * The project's vouch commands run in this process, through the CLI's own dispatch
 * (src/cli/dispatch.ts) with an io of its own: the same command modules, store, scans and
 * child processes as `vouch` in a process of its own, about 8 ms for a status instead of a Node
 * start and its module loading. Each command opens and closes its own session, as a process does.
 * What only a process has (its exit, signals, Node's own start) is left to the e2e tests.
 */
export function inProcess(project: TempProject): AsyncProject {
  const inside: AsyncProject = {
    ...project,
    async vouch(args, options = {}) {
      const stdout = collector();
      const stderr = collector();
      const env = options.env ?? cleanEnv();
      const restore = mirrorProcessVariables(env);
      try {
        const code = await main(args, { cwd: options.cwd ?? project.root, env, stdout, stderr, isTty: async () => false });
        return { code, signal: null, stdout: stdout.text(), stderr: stderr.text() };
      } finally {
        restore();
      }
    },
    async json(args, options = {}) {
      const result = await inside.vouch([...args, '--json'], options);
      try {
        return JSON.parse(result.stdout);
      } catch {
        throw new Error(`vouch ${args.join(' ')} --json printed no JSON (exit ${result.code}):\n${result.stdout}\n${result.stderr}`);
      }
    },
  };
  return inside;
}

/** The same interface over the built CLI, a process per command. */
export function throughCli(project: TempProject): AsyncProject {
  return {
    ...project,
    vouch: async (args, options) => project.vouch(args, options),
    json: async (args, options) => project.json(args, options),
  };
}

/** What vouch reads from its own process, not from a command's env (src/fs/nativeAddon.ts). */
const PROCESS_VARIABLES = ['VOUCH_NATIVE'];

/** Sets each of them as the command's env has it, for the command's run; returns the undo. */
function mirrorProcessVariables(env: NodeJS.ProcessEnv): () => void {
  const before = PROCESS_VARIABLES.map((name) => [name, process.env[name]] as const);
  const put = (name: string, value: string | undefined) => {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  };
  for (const name of PROCESS_VARIABLES) put(name, env[name]);
  return () => {
    for (const [name, value] of before) put(name, value);
  };
}

function collector() {
  const chunks: Buffer[] = [];
  return {
    write(chunk: string | Uint8Array) {
      chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk));
      return true;
    },
    text: () => Buffer.concat(chunks).toString('utf8'),
  };
}

/** statusOf, in process. */
export async function statusIn(p: AsyncProject, check: string, env?: NodeJS.ProcessEnv): Promise<Json> {
  return entryOf(await p.json(['status', check], env ? { env } : {}), check);
}

/** expectCurrent, in process. */
export async function expectCurrentIn(p: AsyncProject, check: string, env?: NodeJS.ProcessEnv): Promise<Json> {
  return expectCurrentEntry(await statusIn(p, check, env));
}
