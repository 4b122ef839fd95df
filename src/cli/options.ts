import { parseArgs, type ParseArgsConfig } from 'node:util';
import { VouchError } from '../core/errors.js';

/** Options every command takes. */
export const COMMON_OPTIONS = {
  config: { type: 'string' },
  'state-dir': { type: 'string' },
  root: { type: 'string' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const satisfies ParseArgsConfig['options'];

export function parseCommand<T extends NonNullable<ParseArgsConfig['options']>>(
  command: string,
  argv: string[],
  options: T,
) {
  const parsed = (() => {
    try {
      return parseArgs({ args: argv, options: { ...COMMON_OPTIONS, ...options }, allowPositionals: true, strict: true });
    } catch (error) {
      throw new VouchError('usage', `${(error as Error).message}. See "vouch ${command} --help".`);
    }
  })();
  const values = parsed.values as Record<string, unknown>;
  for (const flag of ['config', 'state-dir', 'root']) {
    // An empty path resolves to the working directory: state would land wherever the command ran.
    if (typeof values[flag] === 'string' && (values[flag] as string).trim() === '') {
      throw new VouchError('usage', `--${flag} is empty; give it a path, or leave it out. See "vouch ${command} --help".`);
    }
  }
  return parsed;
}

/** How a command that observes inputs may use the observer. */
export const OBSERVER_OPTIONS = {
  sync: { type: 'boolean', default: false },
  cached: { type: 'boolean', default: false },
  'no-observer': { type: 'boolean', default: false },
} as const satisfies ParseArgsConfig['options'];

/** What `vouch status` takes: one list for the command, its served form and the observer's side of it. */
export const STATUS_OPTIONS = { short: { type: 'boolean', default: false }, ...OBSERVER_OPTIONS } as const satisfies ParseArgsConfig['options'];

export function observerChoice(values: { sync?: boolean; cached?: boolean; 'no-observer'?: boolean }): { observer: 'auto' | 'off'; mode: 'sync' | 'cached' } {
  if (values.sync && values.cached) throw new VouchError('usage', '--sync and --cached contradict each other; pass one');
  return { observer: values['no-observer'] ? 'off' : 'auto', mode: values.cached ? 'cached' : 'sync' };
}
