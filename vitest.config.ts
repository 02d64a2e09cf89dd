import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/**
 * What changes a test process for the files after it: environment variables, globals, the working directory, fake
 * clocks, mocked or reset modules, process listeners and exit codes, patched consoles. Helpers that do it count too.
 */
const CHANGES_THE_PROCESS = new RegExp(
  [
    String.raw`vi\.(mock|doMock|stubEnv|stubGlobal|useFakeTimers|setSystemTime|resetModules)\b`,
    String.raw`process\.env(\.\w+|\[[^\]]+\])\s*(=[^=]|\?\?=)`,
    String.raw`delete process\.env|Object\.assign\(process\.env`,
    String.raw`process\.(chdir|umask|on|once|off|removeAllListeners)\(|process\.(exitCode|title)\s*=[^=]`,
    String.raw`process\.(stdout|stderr)\.write\s*=[^=]|console\.\w+\s*=[^=]|globalThis\.\w+\s*=[^=]`,
    String.raw`(Date\.now|Math\.random)\s*=[^=]|setGlobalDispatcher|defaultMaxListeners|setMaxListeners`,
    String.raw`helpers/session-storage`,
  ].join('|'),
);

const TEST_DIR = fileURLToPath(new URL('./test/', import.meta.url));

/** Test files that change their process (see above): each runs in a fresh one. */
const PROCESS_CHANGING = readdirSync(TEST_DIR, { recursive: true, encoding: 'utf8' })
  .filter((name) => name.endsWith('.test.ts'))
  .filter((name) => CHANGES_THE_PROCESS.test(readFileSync(join(TEST_DIR, name), 'utf8')))
  .map((name) => `test/${name}`);

/** What every project runs with: the timeouts, and the removal of each file's temporary folders after it. */
const PER_FILE = {
  testTimeout: 30_000,
  hookTimeout: 60_000,
  setupFiles: ['test/setup-temp-dirs.ts'],
};

export default defineConfig({
  test: {
    // Tests that spawn bin/emi.js run build/: compile it once from the current sources first. The tmp guard gives
    // the run its own TMPDIR and fails the run if a test leaves an emi-* folder there (first: it tears down last).
    globalSetup: ['test/global-tmp-guard.ts', 'test/global-setup.ts'],
    // Tests start real servers on loopback and write real files: keep the machine's 2 cores unoversubscribed.
    maxWorkers: 2,
    // Not extending this config: the global set-up above runs once for the run, not once per project.
    projects: [
      { test: { ...PER_FILE, name: 'own-process', include: PROCESS_CHANGING, isolate: true } },
      {
        // The rest share their worker's loaded modules (about a second of start-up saved per file on 2 cores):
        // they leave the process as they found it, and every module they use keys its caches by folder or value.
        test: {
          ...PER_FILE,
          name: 'shared',
          include: ['test/**/*.test.ts'],
          exclude: PROCESS_CHANGING,
          isolate: false,
        },
      },
    ],
  },
});
