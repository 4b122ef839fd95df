import type { Output } from '../core/output.js';
import type { CheckSpawner } from '../exec/spawnCheck.js';

/** What a command may touch of its process: passed in, so tests and the MCP server can supply their own. */
export interface CliIo {
  cwd: string;
  env: NodeJS.ProcessEnv;
  stdout: Output;
  stderr: Output;
  /**
   * Whether stdout is a terminal: live progress only then. Asked, not given: node:tty loads
   * node:net, which a process that never asks (a status) should not pay for.
   */
  isTty(): Promise<boolean>;
  /** When the caller started (epoch ms); default this process's start. */
  startedAt?: number;
  /**
   * Why the observer cannot be asked, found before the command ran (a status it was to serve timed
   * out, cli/servedStatus.ts): the command looks directly and says so, without a second wait.
   */
  observerUnavailable?: string;
  /** How `vouch run` starts a check's process; default in this process. A resident server's runs start it in the caller's (agents/runServer.ts). */
  spawnCheck?: CheckSpawner;
}

export function writeJson(io: CliIo, value: unknown): void {
  io.stdout.write(JSON.stringify(value, null, 2) + '\n');
}
