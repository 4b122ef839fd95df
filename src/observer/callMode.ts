let blocking = false;

/**
 * Lets observer calls block the thread in the native addon
 * (native/observerCall.c) instead of going through node:net: a one-shot
 * command has nothing else to do while it waits, and loading net and streams
 * costs more than the exchange. Never for a process that serves others
 * meanwhile (the observer, the MCP server).
 */
export function allowBlockingObserverCalls(allowed = true): void {
  blocking = allowed;
}

export function blockingObserverCallsAllowed(): boolean {
  return blocking;
}
