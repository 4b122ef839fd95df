import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';

/**
 * Progress notifications for a long run, when the client asked for them (it
 * sent a progressToken). Clients may reset their request timeout on each one,
 * so a test suite that outlasts the default 60 s timeout is not cut off.
 * Returns a reporter; `done` marks one more check finished.
 */
export function progressReporter(extra: RequestHandlerExtra<ServerRequest, ServerNotification>, total: number) {
  const token = extra._meta?.progressToken;
  let finished = 0;
  return (message: string, done = false): void => {
    if (done) finished += 1;
    if (token === undefined) return;
    // A lost notification costs nothing but a progress line; the run goes on.
    extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: finished, total, message } }).catch(() => {});
  };
}
