import { defineConfig } from 'vitest/config';

// A config of its own, so Vitest treats this folder as the project root
// and never reaches for a config in a folder above it.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
  },
});
