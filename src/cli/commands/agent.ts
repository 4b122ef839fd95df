import type { CliIo } from '../io.js';

export const help = `Usage: vouch agent ...

Not built yet.
`;

export async function run(_argv: string[], io: CliIo): Promise<number> {
  io.stderr.write('vouch: "agent" is not built yet\n');
  return 2;
}
