import { runHook } from '../../agents/hook.js';
import type { Host } from '../../agents/host.js';
import { claude } from '../../agents/hostClaude.js';
import { codex } from '../../agents/hostCodex.js';
import type { CliIo } from '../io.js';

export const help = `Usage: vouch hook claude|codex [--shadow]

Run by Claude Code or Codex as a hook, with the host's hook JSON on stdin; not
meant to be typed. "vouch agent setup" installs it (docs/hooks.md).

  PreToolUse (Bash)  when every check the command runs is CURRENT and PASS,
                     deny it and tell the agent so; when a check is not
                     current, Claude Code gets the command rewritten to
                     "vouch run CHECK --if-due" (Codex runs it as typed);
                     anything else runs as typed
  SessionStart       start the observer in the background, say nothing

It always exits 0, and prints nothing when in any doubt: a hook that fails
must never stop the agent. VOUCH_FORCE=1, in the hook's environment or leading
the command, runs the command as typed.

Every Bash command in a project with a vouch config is recorded in the ledger
(docs/hooks.md, "The ledger"); "vouch savings" reports from it.

Options:
  --shadow    shadow mode: decide and record exactly as usual, but let every
              command run as typed ("vouch agent setup HOST --shadow" installs it)

Environment:
  VOUCH_FORCE=1          never deny or rewrite
  VOUCH_HOOK_LOG=FILE    append one JSON line per Bash command: what was decided and why
  VOUCH_HOOK_SERVER=0    the native client (build/Release/vouch_hook) always runs this
                         Node hook instead of asking a resident hook server

"vouch hook serve SOCKET" is that server, started by the hook itself; see
docs/hooks.md, "The hook client and its server".
`;

const HOSTS: Record<string, Host> = { claude, codex };

/** Past this, a host that never closes stdin is not waited for: the hook gives up and stays out of the way. */
const STDIN_TIMEOUT_MS = 5_000;
/** Hook JSON is small; anything larger is not a host's event. */
const STDIN_MAX_BYTES = 16 * 1024 * 1024;

export async function run(argv: string[], io: CliIo): Promise<number> {
  if (argv[0] === 'serve') return await serve(argv.slice(1), io);
  // `--serve SOCKET` comes last, from the native client (native/hookClient.c) when it found no server.
  const serveAt = argv.length >= 3 && argv.at(-2) === '--serve' ? argv.at(-1) : undefined;
  const served = serveAt === undefined ? argv : argv.slice(0, -2);
  // `--client` before it: the client ran, and falls back to this hook (its rewrites run through it).
  const client = served.at(-1) === '--client';
  const args = client ? served.slice(0, -1) : served;
  const name = args[0];
  const host = name !== undefined && Object.hasOwn(HOSTS, name) ? HOSTS[name] : undefined;
  const shadow = args[1] === '--shadow';
  // Exit 2 would block the agent's tool call in both hosts: even a usage error exits 0.
  if (host === undefined || args.length > (shadow ? 2 : 1)) {
    io.stderr.write(`vouch: hook takes one argument, claude or codex, and --shadow; see "vouch hook --help"\n`);
    return 0;
  }
  if (process.stdin.isTTY) {
    io.stderr.write(`vouch: "vouch hook ${host.name}" reads the host's hook JSON on stdin; see "vouch hook --help"\n`);
    return 0;
  }
  const stdin = await readStdin(process.stdin);
  if (stdin === null) return 0;
  const out = await runHook(host, stdin, { env: io.env, cwd: io.cwd, entry: process.argv[1], shadow, client, warn: (text) => io.stderr.write(text) });
  if (out !== '') io.stdout.write(out);
  if (serveAt !== undefined) (await import('../../agents/startHookServer.js')).startHookServer(serveAt, io.env, process.argv[1]);
  return 0;
}

/** `vouch hook serve SOCKET`: the resident server the native client asks (agents/hookServer.ts). */
async function serve(argv: string[], io: CliIo): Promise<number> {
  if (argv.length !== 1 || argv[0] === undefined || process.argv[1] === undefined) {
    io.stderr.write('vouch: hook serve takes one argument, the socket path; "vouch_hook" starts it\n');
    return 2;
  }
  // A process serving several callers at once must not block on one observer call.
  (await import('../../observer/callMode.js')).allowBlockingObserverCalls(false);
  const { serveHooks } = await import('../../agents/hookServer.js');
  await serveHooks({
    socket: argv[0],
    entry: process.argv[1],
    env: io.env,
    // A rewritten command's run, its check started by the client (cli/runServer.ts); loaded on first need.
    run: async (request, connection, env) => (await import('../runServer.js')).serveRun(request, connection, env),
  });
  return 0;
}

/** All of stdin as text; null when it is too large, fails, or does not end in time. */
function readStdin(stream: NodeJS.ReadStream): Promise<string | null> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (value: string | null) => {
      clearTimeout(timer);
      stream.removeAllListeners('data').removeAllListeners('end').removeAllListeners('error');
      if (value === null) stream.destroy();
      resolve(value);
    };
    const timer = setTimeout(() => finish(null), STDIN_TIMEOUT_MS);
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > STDIN_MAX_BYTES) finish(null);
      else chunks.push(chunk);
    });
    stream.on('end', () => finish(Buffer.concat(chunks).toString('utf8')));
    stream.on('error', () => finish(null));
  });
}
