import type { Handler } from './rpcServer.js';

/*
 * The methods this process answers on a socket it serves. A call to that socket from within the
 * process is then a call, not a connection: the status an observer serves for a caller asks the
 * observer's own socket, as any client does, and a round trip through the kernel and JSON-RPC to
 * itself cost it about a millisecond (docs/observer.md, "A status answered whole").
 */
const served = new Map<string, Record<string, Handler>>();

export function answerHere(socket: string, handlers: Record<string, Handler>): void {
  served.set(socket, handlers);
}

export function stopAnsweringHere(socket: string): void {
  served.delete(socket);
}

/** The handler this process runs for a call to `socket`, or undefined when another process serves it. */
export function localHandler(socket: string, method: string): Handler | undefined {
  const handlers = served.get(socket);
  return handlers !== undefined && Object.hasOwn(handlers, method) ? handlers[method] : undefined;
}
