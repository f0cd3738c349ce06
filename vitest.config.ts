import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    // Limits far above what a test needs on a quiet machine: CI shares its machine with other work,
    // and a test must never fail by time alone (no test asserts a duration).
    testTimeout: 120_000,
    hookTimeout: 180_000,
    pool: 'forks',
    // Two cores: a few files at a time keeps PostgreSQL and the event loop responsive.
    maxWorkers: 3,
  },
});
