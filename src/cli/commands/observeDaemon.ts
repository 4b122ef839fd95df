import { closeSync, writeSync } from 'node:fs';
import { isVouchError } from '../../core/errors.js';
import { buildId } from '../../api/buildId.js';
import { DEFAULT_IDLE_TIMEOUT_MS, serveDaemon } from '../../api/startObserver.js';
import { loadProject } from '../../api/project.js';
import type { CliIo } from '../io.js';
import { parseCommand } from '../options.js';
import { statusServer } from '../statusServer.js';
import { VERSION } from '../version.js';

/** Not listed: the detached observer process that "vouch start" launches. */
export const help = 'Usage: vouch __observe (internal; use "vouch start")\n';

/** Readiness goes to fd 3, a pipe "vouch start" reads once and closes. */
const READY_FD = 3;

/** "vouch start" passes a parsed duration; anything else (a hand-typed call) gets the default rather than a 1 ms timer. */
function idleTimeout(text: string | undefined): number {
  const ms = text !== undefined && /^\d+$/.test(text) ? Number(text) : NaN;
  return ms >= 1 && ms <= 2 ** 31 - 1 ? ms : DEFAULT_IDLE_TIMEOUT_MS;
}

export async function run(argv: string[], io: CliIo): Promise<number> {
  const tell = (line: unknown) => {
    try {
      writeSync(READY_FD, JSON.stringify(line) + '\n');
      closeSync(READY_FD);
    } catch {
      // the starter is gone; the observer serves on regardless
    }
  };
  const log = (message: string) => io.stderr.write(`${new Date().toISOString()} ${message}\n`);
  try {
    const { values } = parseCommand('__observe', argv, { 'idle-timeout-ms': { type: 'string' } });
    const project = await loadProject({ cwd: io.cwd, config: values.config, stateDir: values['state-dir'], root: values.root });
    log(`observing ${project.root} (pid ${process.pid})`);
    const build = { version: VERSION, entry: process.argv[1] ?? '' };
    await serveDaemon(project, {
      build,
      methods: { status: statusServer({ configPath: project.configPath, stateDir: project.stateDir, root: project.root, version: build.version, build: buildId(build) }) },
      idleTimeoutMs: idleTimeout(values['idle-timeout-ms']),
      env: io.env,
      foreground: false,
      onReady: (ready) => {
        log(`ready in ${ready.readyMs} ms, ${ready.indexFiles} files`);
        tell({ ready });
      },
      log,
    });
    log('stopped');
    return 0;
  } catch (error) {
    const code = isVouchError(error) ? error.code : 'observer-start-failed';
    log(`failed: ${(error as Error).stack ?? String(error)}`);
    tell({ error: { code, message: (error as Error).message } });
    return 1;
  }
}
