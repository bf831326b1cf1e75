import { defineConfig } from 'vitest/config';

// Unit tests live beside the code; end-to-end tests (*.e2e.test.ts) start the real built server.
// Live tests against remote engines run only through vitest.live.config.ts.
export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    exclude: ['**/*.live.test.ts', 'node_modules/**', 'dist/**'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
