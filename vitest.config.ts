import { defineConfig } from 'vitest/config';

/**
 * Three projects, by what a test really does (https://vitest.dev/guide/projects):
 * - unit: pure modules, no processes, no sleeps, no dist/; the whole project in a few seconds;
 * - integration: real stages, store and watcher, in-process (a few import dist/);
 * - e2e: anything that spawns the built CLI.
 * `vitest run` runs all three; `vitest run --project unit` one of them.
 */
const FRESH_DIST = './test/setup/freshDist.ts';

// Node 20 reads and parses the bundle NODE_EXTRA_CA_CERTS names when each process starts: about
// 40 ms of CPU for a system bundle, in every one of the several thousand Node processes the suite
// starts (https://nodejs.org/api/cli.html#node_extra_ca_certsfile). No test reaches the network.
delete process.env.NODE_EXTRA_CA_CERTS;

export default defineConfig({
  test: {
    // End-to-end tests spawn real processes; two cores are shared between them.
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        // Pure modules, no process state: one worker's module cache serves every file, which
        // takes the unit project from about 24 s to 9 s.
        test: { name: 'unit', include: ['test/unit/**/*.test.ts'], testTimeout: 10_000, isolate: false },
      },
      {
        extends: true,
        test: { name: 'integration', include: ['test/integration/**/*.test.ts'], globalSetup: [FRESH_DIST], testTimeout: 120_000, hookTimeout: 120_000 },
      },
      {
        extends: true,
        test: { name: 'e2e', include: ['test/e2e/**/*.test.ts'], globalSetup: [FRESH_DIST], testTimeout: 120_000, hookTimeout: 120_000 },
      },
    ],
  },
});
