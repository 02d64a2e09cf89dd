import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Tests that spawn bin/emi.js run build/: compile it once from the current sources first. The tmp guard gives
    // the run its own TMPDIR and fails the run if a test leaves an emi-* folder there (first: it tears down last).
    globalSetup: ['test/global-tmp-guard.ts', 'test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Tests start real servers on loopback and write real files: keep the machine's 2 cores unoversubscribed.
    maxWorkers: 2,
  },
});
