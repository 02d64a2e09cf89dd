// A build that will be deployed must say where it lives: without --base-url or EMI_BASE_URL, `emi build` and
// `emi schedule` stop with one line instead of publishing the development address in sitemap, OpenAPI and schemas.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from './helpers/temp-dir.ts';

const emi = (args: string[]): Promise<{ code: number; stdout: string; stderr: string }> =>
  new Promise((resolve) => {
    const { EMI_BASE_URL: _unset, ...env } = process.env;
    execFile(process.execPath, ['bin/emi.js', ...args], { env, timeout: 60_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, stdout, stderr }),
    );
  });

describe('base URL of a build', () => {
  it.each([['build'], ['schedule']])(
    'emi %s refuses to run without one, in one line',
    async (command) => {
      const dir = await tempDir('emi-base-');
      const args =
        command === 'build'
          ? ['build', '--published', join(dir, 'site'), '--out', join(dir, 'dist')]
          : [
              'schedule',
              '--out',
              join(dir, 'site'),
              '--dist',
              join(dir, 'dist'),
              '--state',
              join(dir, 'var'),
            ];
      const run = await emi(args);
      expect(run.code).not.toBe(0);
      const lines = run.stderr
        .trim()
        .split('\n')
        .filter((l) => !l.startsWith('(run with --help'));
      expect(lines).toEqual([
        expect.stringContaining('refusing to build without a base URL: pass --base-url'),
      ]);
      expect(existsSync(join(dir, 'dist'))).toBe(false);
    },
    60_000,
  );
});
