/**
 * Files a check writes under an install root for its own use. Counting them as
 * inputs would make every run change its own inputs. Each is excluded by name,
 * and docs/config.md says why that is safe; anything not named stays an input.
 */
export const TOOL_CACHES = [
  // Vitest's results cache (test durations and failures, used to order files); rewritten by every run.
  '**/node_modules/.vite/vitest/**',
  // Vite's temporary bundle of the config file, which is itself an input; deleted after loading.
  '**/node_modules/.vite-temp/**',
];
