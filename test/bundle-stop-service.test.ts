// `emi up` and `emi schedule` bundle the site's browser programs once and then run for days: esbuild's service
// process must not stay beside them (it held 25 MB, 176 MB at first, for the whole life of `emi up`).
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bundleSitePrograms } from '../generator/buyer/bundle.ts';

/**
 * The command lines of this process's running children. An exited one not yet reaped shows as `<defunct>`, and one
 * still exiting, whose memory (and with it its command line) is already released, as its name in brackets
 * (`[esbuild]`, seen on a loaded CI machine): neither is running.
 */
const children = (): string[] =>
  execFileSync('ps', ['--ppid', String(process.pid), '-o', 'args='], { encoding: 'utf8' })
    .split('\n')
    .filter(
      (line) =>
        line.trim() !== '' &&
        !line.startsWith('ps ') &&
        !line.includes('<defunct>') &&
        !/^\[[^\]]+\]$/.test(line.trim()),
    );

describe('bundling the site programs', () => {
  it('leaves no esbuild service running once both programs are bundled', { timeout: 120_000 }, async () => {
    const site = await mkdtemp(join(tmpdir(), 'emi-bundle-stop-'));
    try {
      await bundleSitePrograms(site);
      expect(children().filter((line) => line.includes('esbuild'))).toEqual([]);
    } finally {
      await rm(site, { recursive: true, force: true });
    }
  });
});
