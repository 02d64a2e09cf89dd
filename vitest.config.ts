import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Tests that spawn bin/emi.js run build/: compile it once from the current sources first.
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Tests start real servers on loopback and write real files: keep the machine's 2 cores unoversubscribed.
    maxWorkers: 2,
  },
});
