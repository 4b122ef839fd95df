import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';

export interface ProgressReporter {
  /** Says `message`; `done` marks one more check finished. */
  (message: string, done?: boolean): void;
  /** Waits until every notification said so far is sent: a tool's result must come after its last progress. */
  flush(): Promise<void>;
}

/**
 * Progress notifications for a long run, when the client asked for them (it
 * sent a progressToken). Clients may reset their request timeout on each one,
 * so a test suite that outlasts the default 60 s timeout is not cut off. A
 * notification that arrives after its request's result names a token the
 * client has forgotten, which the SDK's client reports as an error, so the
 * tool flushes them before it answers. Flushing is not enough: the SDK's
 * client handles a notification one microtask after it reads it, and a
 * response at once (Protocol._onnotification in @modelcontextprotocol/sdk), so
 * a notification read in the same chunk as the result is still too late. The
 * last check's end is therefore not notified: the result says it, and nothing
 * the tool does after it is long enough to report.
 */
export function progressReporter(extra: RequestHandlerExtra<ServerRequest, ServerNotification>, total: number): ProgressReporter {
  const token = extra._meta?.progressToken;
  let finished = 0;
  const pending: Array<Promise<void>> = [];
  const report = (message: string, done = false): void => {
    if (done) finished += 1;
    if (token === undefined || (done && finished === total)) return;
    // A lost notification costs nothing but a progress line; the run goes on.
    pending.push(extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: finished, total, message } }).catch(() => {}));
  };
  return Object.assign(report, { flush: async () => void (await Promise.all(pending.splice(0))) });
}
