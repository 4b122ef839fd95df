import { parseArgs, type ParseArgsConfig } from 'node:util';
import { VouchError } from '../core/errors.js';

/** Options every command takes. */
export const COMMON_OPTIONS = {
  config: { type: 'string' },
  'state-dir': { type: 'string' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const satisfies ParseArgsConfig['options'];

export function parseCommand<T extends NonNullable<ParseArgsConfig['options']>>(
  command: string,
  argv: string[],
  options: T,
) {
  try {
    return parseArgs({ args: argv, options: { ...COMMON_OPTIONS, ...options }, allowPositionals: true, strict: true });
  } catch (error) {
    throw new VouchError('usage', `${(error as Error).message}. See "vouch ${command} --help".`);
  }
}
