import { stopObserver } from '../../api/observer.js';
import { locateProject } from '../../api/project.js';
import type { StopDocument } from '../../core/json/stop.js';
import { writeJson, type CliIo } from '../io.js';
import { parseCommand } from '../options.js';

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
  const { values } = parseCommand('stop', argv, {});
  // Only where the observer is: it can be stopped even when the root or the config's checks are broken.
  const project = locateProject({ cwd: io.cwd, config: values.config, stateDir: values['state-dir'], root: values.root });
  const stopped = await stopObserver(project);
  if (values.json) {
    writeJson(io, { schema: 1, action: stopped ? 'stopped' : 'not-running', pid: stopped?.pid ?? null } satisfies StopDocument);
    return 0;
  }
  io.stdout.write(stopped ? `observer stopped (pid ${stopped.pid})\n` : 'no observer is running\n');
  return 0;
}
