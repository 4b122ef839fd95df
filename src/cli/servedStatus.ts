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
  let values;
  try {
    values = parseCommand('status', argv, STATUS_OPTIONS).values;
  } catch {
    return {};
  }
  if (values['no-observer'] || values.help) return {};
  const served = askServedStatus({ cwd: io.cwd, config: values.config, stateDir: values['state-dir'], root: values.root }, argv, io.env, { version: VERSION, entry });
  if (served === null) return {};
  if ('unavailable' in served) return served;
  if (served.stdout !== '') io.stdout.write(served.stdout);
  if (served.stderr !== '') io.stderr.write(served.stderr);
  return { code: served.code };
}
