import { createRequire } from 'node:module';

/** vouch's own version; the bundle inlines it at build time (rolldown.config.mjs). */
const require = createRequire(import.meta.url);
export const VERSION: string = (require('../../package.json') as { version: string }).version;
