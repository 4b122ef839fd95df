import { lstatSync, readdirSync, realpathSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { runHook } from './hook.js';
import type { Host } from './host.js';
import { claude } from './hostClaude.js';
import { codex } from './hostCodex.js';
import { FAILED_MARK, FULL_MARK, HOOK_SOCKET_NAME as SOCKET_NAME, prepareHookSocketDir } from './hookSocket.js';
import { realOrNull } from './setup/vouchCommand.js';

/*
 * The resident hook server: answers the native client (native/hookClient.c)
 * with exactly what `vouch hook HOST` would print, from a process whose
 * modules are loaded already. A hook call then costs a small program and one
 * exchange instead of a Node start-up.
 *
 * It answers only a caller whose environment equals its own and who names the
 * same Node and entry script: everything the decision reads from its process
 * is then what the Node hook would have read. Anything else, and a build
 * changed under it, gets "ask the Node hook" (the client runs it), so the
 * server can make a call slower but never change its answer.
 *
 * Request: "VHK1", u32 length of the rest, then six fields, each a u32 length
 * and bytes: node, entry script, the arguments after them (NUL-terminated),
 * cwd, the environment (NUL-terminated entries), stdin. Answer: "VHK1", u32
 * kind (0 answered, 1 ask the Node hook), u32 exit code, stdout and stderr as
 * fields. Integers are little-endian.
 */

const MAGIC = Buffer.from('VHK1');
const ANSWERED = 0;
const ASK_NODE = 1;
/** Hook stdin is capped at 16 MiB by both hooks; the environment is small. */
const REQUEST_MAX_BYTES = 24 * 1024 * 1024;
const DEFAULT_IDLE_MS = 15 * 60_000;
/** Servers per socket directory (one user's): beyond this many, a new one does not start. */
export const MAX_SERVERS = 4;
const HOSTS: Record<string, Host> = { claude, codex };

export interface HookRequest {
  node: string;
  entry: string;
  args: string[];
  cwd: string;
  env: string[];
  stdin: Buffer;
}

/** The request in `bytes` (header included); null when it is not one, or not whole. */
export function parseHookRequest(bytes: Buffer): HookRequest | null {
  if (bytes.length < 8 || !bytes.subarray(0, 4).equals(MAGIC) || bytes.readUInt32LE(4) !== bytes.length - 8) return null;
  const fields: Buffer[] = [];
  let at = 8;
  while (fields.length < 6) {
    if (at + 4 > bytes.length) return null;
    const length = bytes.readUInt32LE(at);
    if (at + 4 + length > bytes.length) return null;
    fields.push(bytes.subarray(at + 4, at + 4 + length));
    at += 4 + length;
  }
  if (at !== bytes.length) return null;
  const [node, entry, args, cwd, env, stdin] = fields as [Buffer, Buffer, Buffer, Buffer, Buffer, Buffer];
  const list = (field: Buffer) => (field.length === 0 ? [] : field.toString('utf8').replace(/\0$/, '').split('\0'));
  return { node: node.toString('utf8'), entry: entry.toString('utf8'), args: list(args), cwd: cwd.toString('utf8'), env: list(env), stdin };
}

export function encodeHookAnswer(kind: number, code: number, stdout: string, stderr: string): Buffer {
  const out = Buffer.from(stdout);
  const err = Buffer.from(stderr);
  const head = Buffer.alloc(16);
  MAGIC.copy(head);
  head.writeUInt32LE(kind, 4);
  head.writeUInt32LE(code, 8);
  head.writeUInt32LE(out.length, 12);
  const errLength = Buffer.alloc(4);
  errLength.writeUInt32LE(err.length);
  return Buffer.concat([head, out, errLength, err]);
}

const askNode = (): Buffer => encodeHookAnswer(ASK_NODE, 0, '', '');

export interface HookServerOptions {
  socket: string;
  /** The entry script this process runs (process.argv[1]). */
  entry: string;
  env?: NodeJS.ProcessEnv;
  idleMs?: number;
  /**
   * Takes a `run` request (cli/runServer.ts) and answers it on the connection itself; false when it
   * leaves the run to the Node command. Without it, every run is left to Node.
   */
  run?: (request: HookRequest, connection: Socket, env: NodeJS.ProcessEnv) => Promise<boolean>;
}

/**
 * Listens on `socket` until idle for `idleMs`, SIGTERM, or its build changes.
 * Resolves when it stops; resolves at once when another server answers there
 * already. Throws when the socket cannot be made.
 */
export async function serveHooks(options: HookServerOptions): Promise<void> {
  const env = options.env ?? process.env;
  const problem = prepareHookSocketDir(options.socket);
  if (problem !== null) throw new Error(problem);
  if (await answers(options.socket)) return;
  // Each environment has its own server; a host that changed some variable on every call would
  // otherwise start one per call. Past the cap, calls are answered by the Node hook instead.
  if ((await liveServers(dirname(options.socket), options.socket)) >= MAX_SERVERS) {
    markRefused(join(dirname(options.socket), FULL_MARK));
    return;
  }
  const ownEnv = sortedEnv(env);
  const entryPath = realpathSync(options.entry);
  const built = buildStamp(entryPath);
  const nodePath = realpathSync(process.execPath);
  const sameProgram = new Map<string, boolean>();
  const idleMs = options.idleMs ?? idleFrom(env);

  let server!: Server;
  let idle: NodeJS.Timeout | undefined;
  const stopped = new Promise<void>((resolveStopped) => {
    server = createServer((socket) => {
      armIdle();
      serveOne(socket, async (request) => {
        if (!sameList(sortedCopy(request.env), ownEnv)) return askNode();
        // Relative paths as the client's exec and Node would take them: from the caller's cwd. A Node
        // without a slash is looked up on the caller's PATH, which this process does not repeat.
        const node = request.node.includes('/') ? resolve(request.cwd, request.node) : null;
        const entry = resolve(request.cwd, request.entry);
        const key = `${node}\0${entry}`;
        if (!sameProgram.has(key)) sameProgram.set(key, node !== null && realOrNull(node) === nodePath && realOrNull(entry) === entryPath);
        if (!sameProgram.get(key)) return askNode();
        // The build changed under this process: its code is not the hook's any more.
        if (buildStamp(entryPath) !== built) {
          stop();
          return askNode();
        }
        const [word, hostName, ...rest] = request.args;
        if (word === 'run') return options.run && (await options.run(request, socket, env)) ? null : askNode();
        const host = hostName !== undefined && Object.hasOwn(HOSTS, hostName) ? HOSTS[hostName] : undefined;
        const shadow = rest.length === 1 && rest[0] === '--shadow';
        if (word !== 'hook' || host === undefined || (rest.length > 0 && !shadow)) return askNode();
        const warnings: string[] = [];
        const stdout = await runHook(host, request.stdin.toString('utf8'), {
          env,
          cwd: request.cwd,
          entry,
          shadow,
          warn: (text) => warnings.push(text),
          startedAt: process.uptime() * 1000,
          server: true,
          client: true,
        });
        return encodeHookAnswer(ANSWERED, 0, stdout, warnings.join(''));
      });
    });
    server.on('close', () => resolveStopped());
  });
  const armIdle = () => {
    clearTimeout(idle);
    idle = setTimeout(stop, idleMs);
    idle.unref();
  };
  let ino = -1;
  const stop = () => {
    clearTimeout(idle);
    process.off('SIGTERM', stop);
    try {
      // Only this server's socket: another may have taken the name since.
      if (lstatSync(options.socket).ino === ino) unlinkSync(options.socket);
    } catch {
      // gone already
    }
    server.close();
  };

  // Bound under a private name and renamed into place, so a client never meets a half-made socket.
  // A short one: the socket's own name may be near sun_path's limit already.
  const temporary = join(dirname(options.socket), `t${process.pid}.sock`);
  try {
    unlinkSync(temporary);
  } catch {
    // none left over
  }
  try {
    await new Promise<void>((resolveListen, reject) => {
      server.once('error', reject);
      server.listen(temporary, () => resolveListen());
    });
    renameSync(temporary, options.socket);
    ino = lstatSync(options.socket).ino;
  } catch (error) {
    // A directory where no socket can be made would otherwise cost a server start on every call.
    markRefused(`${options.socket}${FAILED_MARK}`);
    server.close();
    try {
      unlinkSync(temporary);
    } catch {
      // never made
    }
    throw error;
  }
  process.on('SIGTERM', stop);
  armIdle();
  // Idle is the only thing that keeps it up; the server itself holds the loop.
  await stopped;
}

/**
 * Reads one request, answers it, closes. A malformed or oversized request gets "ask the Node hook".
 * An answer of null means the connection was answered already (a run, cli/runServer.ts).
 */
function serveOne(socket: Socket, answer: (request: HookRequest) => Promise<Buffer | null>): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let expected = -1;
  let done = false;
  const reply = (bytes: Buffer | null) => {
    if (done) return;
    done = true;
    if (bytes !== null) socket.end(bytes);
  };
  socket.on('error', () => socket.destroy());
  const onData = (chunk: Buffer) => {
    if (done) return;
    chunks.push(chunk);
    size += chunk.length;
    if (expected < 0 && size >= 8) {
      const head = Buffer.concat(chunks);
      expected = head.subarray(0, 4).equals(MAGIC) ? head.readUInt32LE(4) + 8 : Number.POSITIVE_INFINITY;
    }
    if (size > REQUEST_MAX_BYTES || expected === Number.POSITIVE_INFINITY) return reply(askNode());
    if (expected >= 0 && size >= expected) {
      const request = parseHookRequest(Buffer.concat(chunks));
      if (request === null) return reply(askNode());
      // What the caller sends next (a run's frames) is the answer's to read.
      socket.off('data', onData);
      answer(request).then(reply, () => reply(askNode()));
    }
  };
  socket.on('data', onData);
}

function answers(socket: string): Promise<boolean> {
  return new Promise((resolveAnswer) => {
    const connection = createConnection(socket);
    connection.once('connect', () => {
      connection.destroy();
      resolveAnswer(true);
    });
    connection.once('error', () => resolveAnswer(false));
  });
}

function markRefused(path: string): void {
  try {
    writeFileSync(path, '');
  } catch {
    // best effort: without it, the next call tries again
  }
}

/** How many other servers answer in dir; a socket nobody answers is a dead server's, and is removed. */
async function liveServers(dir: string, own: string): Promise<number> {
  const sockets = readdirSync(dir)
    .filter((name) => SOCKET_NAME.test(name))
    .map((name) => join(dir, name))
    .filter((path) => path !== own);
  const alive = await Promise.all(sockets.map((path) => answers(path)));
  for (const [index, path] of sockets.entries()) {
    if (alive[index]) continue;
    try {
      if (lstatSync(path).isSocket()) unlinkSync(path);
    } catch {
      // gone already
    }
  }
  return alive.filter(Boolean).length;
}

function buildStamp(path: string): string {
  try {
    const stats = statSync(path);
    return `${stats.ino}:${stats.size}:${stats.mtimeMs}`;
  } catch {
    return 'gone';
  }
}

function sortedEnv(env: NodeJS.ProcessEnv): string[] {
  return sortedCopy(Object.entries(env).map(([key, value]) => `${key}=${value}`));
}

function sortedCopy(list: string[]): string[] {
  return list.map((item) => Buffer.from(item)).sort(Buffer.compare).map((item) => item.toString());
}

function sameList(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((item, index) => item === b[index]);
}

function idleFrom(env: NodeJS.ProcessEnv): number {
  const value = Number(env.VOUCH_HOOK_SERVER_IDLE_MS);
  return Number.isFinite(value) && value > 0 ? value : DEFAULT_IDLE_MS;
}
