import type { CliIo } from '../io.js';

export const help = `Usage: vouch hook ...

Not built yet.
`;

export async function run(_argv: string[], io: CliIo): Promise<number> {
  io.stderr.write('vouch: "hook" is not built yet\n');
  return 2;
}
