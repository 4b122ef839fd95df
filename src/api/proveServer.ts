import { existsSync, lstatSync, unlinkSync } from 'node:fs';
import { connect, type Server } from 'node:net';
import { dirname, join } from 'node:path';
import type { Claim } from '../core/claim.js';
import { isClaimError } from '../core/claimError.js';
import { DEFAULT_PROJECT, parseClaim } from '../core/claimInput.js';
import { VouchError } from '../core/errors.js';
import { MAX_LINE_BYTES } from '../observer/protocol.js';
import { InvalidParams, rpcServer } from '../observer/rpcServer.js';
import { socketPath } from '../observer/observerFiles.js';
import type { Deadlines } from '../prove/deadline.js';
import { ensureStateDir } from '../store/stateDir.js';
import { claimErrorFrom, claimErrorJson, openProver, proveReportJson, type ClaimErrorJson, type ProveReportJson, type ProveWorkspace } from './prove.js';

/** What the served prover answers: a report, or the claim error the in-process prove would have thrown. */
type Answer = { report: ProveReportJson } | { error: ClaimErrorJson };

export function proveSocket(workspace: ProveWorkspace, env: NodeJS.ProcessEnv): string {
  return socketPath({ socket: join(workspace.stateDir, 'prove.sock') }, env);
}

export interface ServeOptions {
  env: NodeJS.ProcessEnv;
  deadlines?: Partial<Deadlines>;
  onProgress?: (message: string) => void;
  onReady?: (socket: string, warmMs: number) => void;
}

/**
 * Keeps the three stages warm behind a socket in the state dir, so repeated
 * `vouch prove` calls pay for warming once. Serves until SIGINT or SIGTERM.
 */
export async function serveProver(workspace: ProveWorkspace, options: ServeOptions): Promise<void> {
  const socket = proveSocket(workspace, options.env);
  if (await answers(socket)) {
    throw new VouchError('prove-serving', `a prover already serves ${workspace.root} on ${socket}; stop it (Ctrl-C in its terminal) before starting another`);
  }
  ensureStateDir(workspace.stateDir);
  // Nobody answered on it, so a socket file there is a dead server's.
  removeDeadSocket(workspace, socket);
  // The server answers on its socket and speaks through the caller's own descriptors: both streams are the log's.
  const prover = await openProver(workspace.root, { deadlines: options.deadlines, onProgress: options.onProgress, log: { stateDir: workspace.stateDir, streams: ['stdout', 'stderr'] } });
  const started = Date.now();
  const project = join(workspace.root, DEFAULT_PROJECT);
  await prover.warm(existsSync(project) ? project : undefined);
  const server: Server = rpcServer(
    {
      prove: async (params): Promise<Answer> => {
        const claim = (params as { claim?: unknown }).claim;
        if (claim === undefined) throw new InvalidParams('expected {"claim": {...}}');
        try {
          return { report: proveReportJson(await prover.prove(parseClaim(claim))) };
        } catch (error) {
          if (isClaimError(error)) return { error: claimErrorJson(error) };
          throw error;
        }
      },
    },
    () => {},
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EADDRINUSE') return reject(error);
      reject(new VouchError('prove-socket-taken', `${socket} exists and is not a socket vouch left; remove it, then start "vouch prove --serve" again`));
    });
    server.listen(socket, () => resolve());
  });
  options.onReady?.(socket, Date.now() - started);
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  server.close();
  removeDeadSocket(workspace, socket);
  await prover.close();
}

function answers(socket: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = connect(socket);
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
}

/**
 * Removes `socket` when it is a socket file that nobody answers on, in the
 * state dir (itself a real directory, not a link) or in the private runtime
 * directory socketPath chose and checked. Anything else there (a regular
 * file, a link) is not vouch's to remove. Answers whether it removed one.
 */
function removeDeadSocket(workspace: ProveWorkspace, socket: string): boolean {
  try {
    if (dirname(socket) === workspace.stateDir && !lstatSync(workspace.stateDir).isDirectory()) return false;
    if (!lstatSync(socket).isSocket()) return false;
    unlinkSync(socket);
    return true;
  } catch (error) {
    // Gone already (another prove removed it first), or the state dir is missing: nothing to remove.
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

/**
 * Proves through a served prover, or answers null when none is serving (or the
 * claim is too large for one request line): the caller then proves in-process.
 * A claim error comes back as the same ClaimError the in-process prove throws.
 * A socket a killed server left (connect refused) is removed and reported
 * through `onNotice`, so a prove that falls back says why it is cold.
 */
export async function proveViaServer(
  workspace: ProveWorkspace,
  claim: Claim,
  env: NodeJS.ProcessEnv,
  onNotice: (notice: string) => void = () => {},
): Promise<ProveReportJson | null> {
  const request = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'prove', params: { claim } }) + '\n';
  if (Buffer.byteLength(request) > MAX_LINE_BYTES) return null;
  const socket = proveSocket(workspace, env);
  // connect() follows links: one planted at the socket's path could reach another workspace's prover.
  const found = lstatSync(socket, { throwIfNoEntry: false });
  if (found === undefined) return null;
  if (!found.isSocket()) {
    onNotice(`${socket} is not a socket (a link, or another kind of file); vouch connects only to a prover's own socket, so it proved in this process`);
    return null;
  }
  const line = await new Promise<string | null>((resolve, reject) => {
    const client = connect(socket);
    let buffer = '';
    let connected = false;
    client.setEncoding('utf8');
    client.once('connect', () => {
      connected = true;
      client.write(request);
    });
    client.on('data', (chunk: string) => {
      buffer += chunk;
      const end = buffer.indexOf('\n');
      if (end >= 0) {
        client.destroy();
        resolve(buffer.slice(0, end));
      }
    });
    client.once('error', (error: NodeJS.ErrnoException) => {
      if (connected) return reject(error);
      // A socket file nobody listens on: its server was killed (kill -9 skips the cleanup on SIGTERM).
      if (error.code === 'ECONNREFUSED') {
        try {
          if (removeDeadSocket(workspace, socket)) onNotice(`a prover that is no longer running left ${socket}; removed it and proved in this process`);
          else if (existsSync(socket)) onNotice(`${socket} is not a prover's socket, and nothing answers on it; left it as it is and proved in this process`);
        } catch (cause) {
          onNotice(`a prover that is no longer running left ${socket}, which could not be removed (${(cause as NodeJS.ErrnoException).code ?? String(cause)}); proved in this process`);
        }
      }
      resolve(null);
    });
    client.once('close', () => {
      if (connected && buffer.indexOf('\n') < 0) reject(new VouchError('prove-server-gone', `the prover serving on ${socket} closed the connection before answering; restart "vouch prove --serve"`));
    });
  });
  if (line === null) return null;
  const reply = JSON.parse(line) as { result?: Answer; error?: { message: string } };
  if (reply.error) throw new VouchError('prove-server-error', `the prover serving on ${socket} failed: ${reply.error.message}`);
  const answer = reply.result!;
  if ('error' in answer) throw claimErrorFrom(answer.error);
  return answer.report;
}
