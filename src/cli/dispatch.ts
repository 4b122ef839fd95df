import { isClaimError } from '../core/claimError.js';
import { isVouchError } from '../core/errors.js';
import type { ErrorDocument } from '../core/json/error.js';
import type { CliIo } from './io.js';
import { VERSION } from './version.js';

export interface Command {
  help: string;
  run(argv: string[], io: CliIo): Promise<number>;
}

/** Each command's module is loaded only when it is the one asked for. */
const COMMANDS: Record<string, () => Promise<Command>> = {
  init: () => import('./commands/init.js'),
  run: () => import('./commands/run.js'),
  status: () => import('./commands/status.js'),
  explain: () => import('./commands/explain.js'),
  log: () => import('./commands/log.js'),
  start: () => import('./commands/start.js'),
  stop: () => import('./commands/stop.js'),
  observer: () => import('./commands/observer.js'),
  hook: () => import('./commands/hook.js'),
  agent: () => import('./commands/agent.js'),
  mcp: () => import('./commands/mcp.js'),
  prove: () => import('./commands/prove.js'),
  savings: () => import('./commands/savings.js'),
};

/** Commands that are not listed: the observer's own process. */
const HIDDEN: Record<string, () => Promise<Command>> = {
  __observe: () => import('./commands/observeDaemon.js'),
};

const USAGE = `vouch ${VERSION}: receipts for a project's checks

Usage: vouch COMMAND [OPTIONS]

Commands:
  init      propose checks for this project and write vouch.config.json
  run       run checks and record receipts (--if-due skips a current pass)
  status    say whether each check's latest receipt still applies
  explain   say what changed since a check's latest receipt
  log       list receipts, newest first
  start     start the observer: a warm index, so answers need no scan
  stop      stop the observer
  observer  report on the running observer
  hook      decide for an agent's shell command (Claude Code, Codex hooks)
  agent     set up, remove or check vouch's hooks and instructions for an agent
  prove     prove an edit with a test and a broken control, from memory
  mcp       serve status, explain, log, run and prove to an agent over MCP (stdio)
  savings   what the agent hooks decided and saved, from the ledger

Options for every command:
  --config FILE      use this config (default: vouch.config.json, searched upward)
  --state-dir DIR    keep receipts here (default: .vouch/ at the root)
  --root DIR         the project root, instead of the config's "root" (which
                     must be the config's directory or below; --root may be anywhere)
  --json             machine-readable output (docs/json.md)
  -h, --help         help for a command

Examples:
  vouch init
  vouch run --if-due
  vouch status
  vouch explain typecheck
  vouch prove claim.json
  vouch savings --since 24h

Exit codes: 0 answered or passed; 2 usage or config error; "run" passes the check's own code through.
`;

export async function main(argv: string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.stdout.write(USAGE);
    return name === undefined ? 2 : 0;
  }
  if (name === '--version' || name === '-v') {
    io.stdout.write(`${VERSION}\n`);
    return 0;
  }
  const json = rest.includes('--json');
  const load = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : Object.hasOwn(HIDDEN, name) ? HIDDEN[name] : undefined;
  if (!load) {
    const message = `unknown command "${name}". Commands: ${Object.keys(COMMANDS).join(', ')}. See "vouch --help".`;
    if (json) writeError(io, { code: 'unknown-command', message });
    io.stderr.write(`vouch: ${message}\n`);
    return 2;
  }
  const command = await load();
  // The observer and the MCP server serve others while they wait; every other command waits alone.
  // Imported here, not at the top: bundled with the commands' shared code, which --version need not load.
  if (name !== 'mcp' && name !== '__observe') (await import('../observer/callMode.js')).allowBlockingObserverCalls();
  if (rest.includes('--help') || rest.includes('-h')) {
    io.stdout.write(command.help);
    return 0;
  }
  return await runCommand(command, rest, io);
}

/**
 * A command's run with the CLI's answer to a failure: vouch's own errors as
 * their message and exit code, anything else as an internal error (70). Also
 * what a resident server runs for its caller (cli/runServer.ts).
 */
export async function runCommand(command: Command, rest: string[], io: CliIo): Promise<number> {
  const json = rest.includes('--json');
  try {
    return await command.run(rest, io);
  } catch (thrown) {
    // A native module built for another Node, wherever it was loaded: the fix, on one line.
    const error = (await import('../core/nativeLoad.js')).nativeLoadError(thrown) ?? thrown;
    if (isVouchError(error)) {
      // A claim error also says who must act (docs/claims.md).
      if (json) writeError(io, isClaimError(error) ? { code: error.code, origin: error.origin, message: error.message } : { code: error.code, message: error.message });
      io.stderr.write(`vouch: ${error.message}\n`);
      return error.exitCode;
    }
    if (json) writeError(io, { code: 'internal', message: `internal error: ${(error as Error).message}` });
    io.stderr.write(`vouch: internal error: ${(error as Error).stack ?? String(error)}\n`);
    return 70;
  }
}

function writeError(io: CliIo, error: ErrorDocument['error']) {
  io.stdout.write(JSON.stringify({ schema: 1, error } satisfies ErrorDocument, null, 2) + '\n');
}
