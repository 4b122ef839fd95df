import { stopObserver } from '../../api/observer.js';
import type { StopDocument } from '../../core/json/stop.js';
import type { CliIo } from '../io.js';
import { runObserverControl } from '../observerControl.js';

export const help = `Usage: vouch stop [--json]

Stops this checkout's observer and removes its socket and pid file. One that
does not stop within 5 s is killed. Stopping none is not an error.

Options:
  --json             machine-readable (docs/json.md)
  --config FILE      use this config
  --state-dir DIR    where receipts are kept
  --root DIR         the project root, instead of the config's "root"

Examples:
  vouch stop
`;

export async function run(argv: string[], io: CliIo): Promise<number> {
  return runObserverControl('stop', argv, io, {
    ask: stopObserver,
    json: (stopped): StopDocument => ({ schema: 1, action: stopped ? 'stopped' : 'not-running', pid: stopped?.pid ?? null }),
    text: (stopped) => (stopped ? `observer stopped (pid ${stopped.pid})\n` : 'no observer is running\n'),
  });
}
