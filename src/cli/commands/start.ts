import { buildId } from '../../api/buildId.js';
import { DEFAULT_IDLE_TIMEOUT_MS, startObserver } from '../../api/startObserver.js';
import { loadProject } from '../../api/project.js';
import type { StartDocument } from '../../core/json/start.js';
import { parseDuration } from '../duration.js';
import { formatDuration } from '../format.js';
import { writeJson, type CliIo } from '../io.js';
import { parseCommand } from '../options.js';
import { statusServer } from '../statusServer.js';
import { VERSION } from '../version.js';

export const help = `Usage: vouch start [--foreground] [--idle-timeout DURATION] [--json]

Starts the observer for this checkout: a background process that keeps the
index of the checks' inputs warm from file-system events, so that "vouch
status", "explain" and "run --if-due" answer without scanning. Returns once
the first index is ready and says how long that took. Everything works
without it; with it, answers are the same, only faster.

Options:
  --foreground              run in this terminal until Ctrl-C or "vouch stop"
  --idle-timeout DURATION   exit after this long without a question (default 8h;
                            e.g. 90s, 30m, 8h)
  --json                    machine-readable (docs/json.md)
  --config FILE             use this config
  --state-dir DIR           where receipts are kept
  --root DIR                the project root, instead of the config's "root"

Examples:
  vouch start
  vouch start --idle-timeout 1h
  vouch observer            what the running observer is doing
  vouch stop
`;

export async function run(argv: string[], io: CliIo): Promise<number> {
  const { values } = parseCommand('start', argv, {
    foreground: { type: 'boolean', default: false },
    'idle-timeout': { type: 'string' },
  });
  const idleTimeoutMs = values['idle-timeout'] === undefined ? DEFAULT_IDLE_TIMEOUT_MS : parseDuration(values['idle-timeout'], '--idle-timeout');
  const project = await loadProject({ cwd: io.cwd, config: values.config, stateDir: values['state-dir'], root: values.root });
  if (!values.json && !values.foreground) io.stderr.write('vouch: starting the observer and indexing the inputs…\n');
  const build = { version: VERSION, entry: process.argv[1] ?? '' };
  const outcome = await startObserver(project, {
    build,
    // Served only where this process is the observer (--foreground); a detached one adds its own.
    methods: { status: statusServer({ configPath: project.configPath, stateDir: project.stateDir, root: project.root, version: build.version, build: buildId(build) }) },
    idleTimeoutMs,
    env: io.env,
    foreground: values.foreground,
    onReady: (ready, action) => {
      if (!values.foreground) return;
      if (values.json) writeJson(io, { schema: 1, action, pid: ready.pid, ready_ms: ready.readyMs, index_files: ready.indexFiles, socket: ready.socket } satisfies StartDocument);
      else io.stdout.write(`observer ready in ${formatDuration(ready.readyMs)} (pid ${ready.pid}, ${ready.indexFiles} files); Ctrl-C stops it\n`);
    },
    log: (message) => io.stderr.write(`vouch observer: ${message}\n`),
  });
  if (values.foreground) return 0;
  if (values.json) {
    // A running observer is found by its record, which it writes only once ready: readyMs is set by then.
    writeJson(io, { schema: 1, action: outcome.action, pid: outcome.pid, ready_ms: outcome.readyMs!, index_files: outcome.indexFiles, socket: outcome.socket } satisfies StartDocument);
    return 0;
  }
  const took = outcome.readyMs === null ? '' : ` in ${formatDuration(outcome.readyMs)}`;
  const what = outcome.action === 'already-running' ? 'already running' : outcome.action === 'replaced' ? `replaced an observer of another vouch build; ready${took}` : `ready${took}`;
  io.stdout.write(`observer ${what} (pid ${outcome.pid}, ${outcome.indexFiles} files)\n`);
  return 0;
}
