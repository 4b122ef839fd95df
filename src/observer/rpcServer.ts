import { createServer, type Server, type Socket } from 'node:net';
import {
  MAX_LINE_BYTES,
  RPC_INTERNAL,
  RPC_INVALID_PARAMS,
  RPC_INVALID_REQUEST,
  RPC_METHOD_NOT_FOUND,
  RPC_PARSE_ERROR,
  type RpcError,
} from './protocol.js';

export type Handler = (params: unknown) => Promise<unknown>;

/** A request whose params do not fit the method. */
export class InvalidParams extends Error {}

/** Newline-delimited JSON-RPC 2.0: one request per line, answered in order, on one connection or many. */
export function rpcServer(handlers: Record<string, Handler>, onRequest: () => void): Server {
  return createServer((socket) => {
    socket.setEncoding('utf8');
    let buffer = '';
    let queue = Promise.resolve();
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      if (buffer.length > MAX_LINE_BYTES) {
        reply(socket, null, undefined, { code: RPC_INVALID_REQUEST, message: `a request is limited to ${MAX_LINE_BYTES} bytes` });
        socket.end();
        buffer = '';
        return;
      }
      let end: number;
      while ((end = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + 1);
        if (line.trim() === '') continue;
        onRequest();
        queue = queue.then(() => handle(socket, line, handlers));
      }
    });
    socket.on('error', () => socket.destroy());
  });
}

async function handle(socket: Socket, line: string, handlers: Record<string, Handler>): Promise<void> {
  let request: { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: unknown };
  try {
    request = JSON.parse(line);
  } catch {
    return reply(socket, null, undefined, { code: RPC_PARSE_ERROR, message: 'not JSON' });
  }
  const id = typeof request?.id === 'number' || typeof request?.id === 'string' ? request.id : null;
  if (request === null || typeof request !== 'object' || request.jsonrpc !== '2.0' || typeof request.method !== 'string') {
    return reply(socket, id, undefined, { code: RPC_INVALID_REQUEST, message: 'expected {"jsonrpc":"2.0","id":…,"method":…}' });
  }
  const handler = Object.hasOwn(handlers, request.method) ? handlers[request.method] : undefined;
  if (!handler) {
    return reply(socket, id, undefined, { code: RPC_METHOD_NOT_FOUND, message: `no method "${request.method}"; the observer answers ${Object.keys(handlers).join(', ')}` });
  }
  try {
    reply(socket, id, await handler(request.params ?? {}));
  } catch (error) {
    const code = error instanceof InvalidParams ? RPC_INVALID_PARAMS : RPC_INTERNAL;
    reply(socket, id, undefined, { code, message: (error as Error).message });
  }
}

function reply(socket: Socket, id: number | string | null, result: unknown, error?: RpcError): void {
  if (socket.destroyed) return;
  socket.write(JSON.stringify(error ? { jsonrpc: '2.0', id, error } : { jsonrpc: '2.0', id, result }) + '\n');
}
