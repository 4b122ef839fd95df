import { runHook } from '../../src/agents/hook.js';
import type { Host } from '../../src/agents/host.js';
import { claude } from '../../src/agents/hostClaude.js';
import { codex } from '../../src/agents/hostCodex.js';
import { CLI } from './project.js';

/** What a hook call gave back: its exit code, and what it printed. */
export interface HookAnswer {
  code: number | null;
  stdout: string;
  stderr: string;
}

const HOSTS: Record<string, Host> = { claude, codex };

/** What vouch reads from its own process, not from a command's env (src/fs/nativeAddon.ts), as test/helpers/inProcess.ts sets it. */
const PROCESS_VARIABLES = ['VOUCH_NATIVE'];

/**
 * `vouch hook HOST [--shadow] [--client]` answered in this process: what the hook command
 * (src/cli/commands/hook.ts) does once it has read the host's JSON from stdin. It calls
 * runHook with the command's env and cwd and its own script (process.argv[1], which for the
 * process `node dist/bin/main.js hook …` is the built CLI) as the entry, writes its answer to
 * stdout and its warnings to stderr, and exits 0 whatever happened. No Node start and no module
 * loading per call, as the resident hook server (src/agents/hookServer.ts) answers. What only
 * the process shows (reading stdin, its exit) is left to the calls that still run the process.
 * Calls must not overlap: VOUCH_NATIVE is set in this process as `env` has it for the call.
 */
export async function hookInProcess(args: readonly string[], stdin: string, cwd: string, env: NodeJS.ProcessEnv): Promise<HookAnswer> {
  // `--client` last, as the native client passes it to the Node hook it falls back to.
  const client = args.at(-1) === '--client';
  const [name, ...rest] = client ? args.slice(0, -1) : args;
  const host = name !== undefined && Object.hasOwn(HOSTS, name) ? HOSTS[name] : undefined;
  const shadow = rest.length === 1 && rest[0] === '--shadow';
  if (host === undefined || (rest.length > 0 && !shadow)) throw new Error(`hookInProcess takes claude or codex, --shadow and --client: ${args.join(' ')}`);
  const before = PROCESS_VARIABLES.map((variable) => [variable, process.env[variable]] as const);
  const put = (variable: string, value: string | undefined) => {
    if (value === undefined) delete process.env[variable];
    else process.env[variable] = value;
  };
  for (const variable of PROCESS_VARIABLES) put(variable, env[variable]);
  const warnings: string[] = [];
  try {
    const stdout = await runHook(host, stdin, { env, cwd, entry: CLI, shadow, client, warn: (text) => warnings.push(text), startedAt: process.uptime() * 1000 });
    return { code: 0, stdout, stderr: warnings.join('') };
  } finally {
    for (const [variable, value] of before) put(variable, value);
  }
}
