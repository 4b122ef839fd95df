import { askServedStatus } from '../api/servedStatus.js';
import type { CliIo } from './io.js';
import { parseCommand, STATUS_OPTIONS } from './options.js';
import { VERSION } from './version.js';

/**
 * `vouch status` answered whole by the running observer (docs/observer.md, "A status answered
 * whole"), before the status command is loaded: its exit code, or what this process must know to
 * answer itself (an observer that did not answer in time is not asked again). Arguments it cannot
 * parse, --no-observer, and VOUCH_SERVED_STATUS=0 go to the command as typed, which answers as it
 * always did.
 */
export function servedStatus(argv: string[], io: CliIo, entry: string): { code: number } | { unavailable?: string } {
  if (io.env.VOUCH_SERVED_STATUS === '0') return {};
  let values: { config?: string | undefined; 'state-dir'?: string | undefined; root?: string | undefined } = {};
  if (!argv.every(placeFree)) {
    try {
      const parsed = parseCommand('status', argv, STATUS_OPTIONS).values;
      if (parsed['no-observer'] || parsed.help) return {};
      values = parsed;
    } catch {
      return {};
    }
  }
  const served = askServedStatus({ cwd: io.cwd, config: values.config, stateDir: values['state-dir'], root: values.root }, argv, io.env, { version: VERSION, entry });
  if (served === null) return {};
  if ('unavailable' in served) return served;
  if (served.stdout !== '') io.stdout.write(served.stdout);
  if (served.stderr !== '') io.stderr.write(served.stderr);
  return { code: served.code };
}

/** Flags that parse alone and leave the project's place, --no-observer and --help as they are. */
const PLACE_FREE_FLAGS = new Set(['--json', '--short', '--sync', '--cached']);

/**
 * Whether an argument cannot change where the project is or whether the observer is asked: one
 * of those flags, or a check's name. Arguments that all are need no parse here (node:util's
 * parseArgs costs a status about 0.8 ms to load); the observer parses them as the command would.
 */
function placeFree(arg: string): boolean {
  return !arg.startsWith('-') || PLACE_FREE_FLAGS.has(arg);
}
