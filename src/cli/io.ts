import type { Output } from '../core/output.js';

/** What a command may touch of its process: passed in, so tests and the MCP server can supply their own. */
export interface CliIo {
  cwd: string;
  env: NodeJS.ProcessEnv;
  stdout: Output;
  stderr: Output;
  /** True when stdout is a terminal: colour and live progress only then. */
  isTty: boolean;
}

export function writeJson(io: CliIo, value: unknown): void {
  io.stdout.write(JSON.stringify(value, null, 2) + '\n');
}
