import type { Socket } from 'node:net';
import type { HookRequest } from '../agents/hookServer.js';
import { loadProject, selectChecks } from '../api/project.js';
import type { Output } from '../core/output.js';
import { clientSpawner, frame } from './clientSpawn.js';
import { runCommand } from './dispatch.js';
import type { CliIo } from './io.js';

/*
 * `vouch run CHECK [--if-due]` for the native client (native/clientRun.c):
 * what a rewritten command runs. This process decides, observes and keeps the
 * receipt, as `vouch run` would in a process of its own; the check's process
 * is started by the client, so its output and signals stay the caller's.
 *
 * Taken only for the rewrite's own form, one check. A traced one only where
 * this process's trace probe holds for the client, which starts the tracer
 * (exec/trace/probePeer.ts). A workspace's fan-out runs its package checks
 * side by side through Node. Anything else is left to the Node command
 * (false), before a byte is sent.
 */

/** The header's kind when the server has taken the run; frames follow (clientSpawn.ts). */
const RUN_TAKEN = 2;

export async function serveRun(request: HookRequest, connection: Socket, env: NodeJS.ProcessEnv): Promise<boolean> {
  const startedAt = Date.now();
  const [word, name, ...rest] = request.args;
  if (word !== 'run' || name === undefined || name.startsWith('-') || rest.length > 1 || (rest.length === 1 && rest[0] !== '--if-due')) return false;
  try {
    const project = await loadProject({ cwd: request.cwd });
    const selected = await selectChecks(project, [name]);
    if (selected.length !== 1) return false;
    if (selected[0]!.mode === 'traced' && !(await traceHoldsFor(connection))) return false;
  } catch {
    // The Node command says what is wrong, as it would have without a server.
    return false;
  }
  const head = Buffer.alloc(8);
  head.write('VHK1', 0, 'latin1');
  head.writeUInt32LE(RUN_TAKEN, 4);
  connection.write(head);
  const to = (type: 'o' | 'e'): Output => ({
    write: (chunk) => {
      if (!connection.destroyed) connection.write(frame(type, typeof chunk === 'string' ? chunk : Buffer.from(chunk)));
    },
  });
  const io: CliIo = { cwd: request.cwd, env, stdout: to('o'), stderr: to('e'), isTty: async () => false, startedAt, spawnCheck: clientSpawner(connection) };
  const code = await runCommand(await import('./commands/run.js'), [name, ...rest], io);
  const exit = Buffer.alloc(4);
  exit.writeUInt32LE(code);
  if (!connection.destroyed) connection.end(frame('x', exit));
  return true;
}

/** Whether a traced check can run here for the client at the other end of `connection`. */
async function traceHoldsFor(connection: Socket): Promise<boolean> {
  // The socket's descriptor: Node keeps it on the handle of a Unix socket's connection.
  const fd = (connection as unknown as { _handle?: { fd?: unknown } })._handle?.fd;
  if (typeof fd !== 'number' || fd < 0) return false;
  return (await import('../api/tracePeer.js')).traceHoldsForPeer(fd);
}
