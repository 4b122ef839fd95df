import { VouchError } from '../../core/errors.js';
import type { CliIo } from '../io.js';
import { parseCommand } from '../options.js';
import { VERSION } from '../version.js';

export const help = `Usage: vouch mcp [--config FILE] [--state-dir DIR] [--no-warm]

Serves vouch to an agent over MCP (Model Context Protocol) on stdin/stdout,
until the client closes stdin. The project is found from the working
directory, as for every other command, or from --config.

Tools (docs/mcp.md):
  status    whether each check's latest receipt still applies   (read-only)
  explain   what changed since a check's latest receipt          (read-only)
  inputs    what a check's latest receipt depends on             (read-only)
  log       receipts, newest first                              (read-only)
  run       run configured checks by name, optionally only if due
  prove     prove a claim: an edit, its test and a broken control
Each returns the same JSON as the command's --json (docs/json.md) as
structuredContent, plus a short text summary. The stages prove uses are
loaded in the background once the host has connected, and stay warm for the
session, so only the first prove waits for them, if at all.

Register it with "vouch agent setup claude" (.mcp.json) or "vouch agent setup
codex" (.codex/config.toml), or by hand, for example in .mcp.json:
  {"mcpServers":{"vouch":{"command":"npx","args":["vouch","mcp"]}}}

Options:
  --config FILE      use this config
  --state-dir DIR    where receipts are kept
  --root DIR         the project root, instead of the config's "root"
  --no-warm          load the prove stages on the first prove, not at connect
                     (a session that never proves then never holds them)

Stdout carries only the protocol; the checks' own output goes to their log
files (.vouch/logs/), and the run tool's text shows the end of a failure's.
`;

export async function run(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommand('mcp', argv, { 'no-warm': { type: 'boolean', default: false } });
  if (positionals.length > 0) throw new VouchError('usage', `mcp takes no arguments, not "${positionals.join(' ')}"; see "vouch mcp --help"`);
  if (values.json) throw new VouchError('usage', 'mcp speaks JSON-RPC on stdout already; drop --json');
  // Someone who typed "vouch mcp" in a terminal would otherwise see a silent hang.
  if (process.stdin.isTTY) io.stderr.write('vouch: serving MCP on stdin/stdout for an agent host; see "vouch mcp --help" to register it. Ctrl-D ends.\n');
  // Loaded only here: the SDK is the heaviest module vouch has, and no other command needs it.
  const { serveMcp } = await import('../../mcp/server.js');
  await serveMcp({ cwd: io.cwd, env: io.env, config: values.config, stateDir: values['state-dir'], root: values.root, version: VERSION, warm: !values['no-warm'] });
  return 0;
}
