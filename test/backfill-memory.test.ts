// `emi backfill --days N` (and `emi up --backfill-days N`) must fit a small host whatever N (up to 90): it kept the
// simulated market of every hour of the window until the end, about 43 MB a day (20 days: about 0.9 GB, 90 days:
// 2.35 GB). Measured as the real command's peak resident memory, a count of bytes, not a time.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EMI } from './ops-cli.ts';

const run = promisify(execFile);
const PRELOAD = pathToFileURL(resolve('test/helpers/report-peak-rss.mjs')).href;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'emi-backfill-memory-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('emi backfill over 20 days', () => {
  it('peaks at the memory of a few hours of the simulated market, not of the whole window', async () => {
    const peakFile = join(dir, 'peak-rss-kb');
    const args = [
      'backfill',
      '--days',
      '20',
      '--as-of',
      '2026-11-26T12:00:00Z',
      '--state',
      'var',
      '--out',
      'site',
    ];
    const { stdout } = await run(process.execPath, ['--import', PRELOAD, EMI, ...args], {
      cwd: dir,
      env: { ...process.env, EMI_TEST_PEAK_RSS_FILE: peakFile },
    });
    expect(stdout).toContain('backfill: 480 rounds in the window (480 replayed and resolved');
    // The history is written for whole UTC days: from 2026-11-06 00:00 (the day the 20 days reach) to the as-of.
    expect(stdout).toContain('backfill: 1972 simulated history rows published');
    const peakMb = Number(await readFile(peakFile, 'utf8')) / 1024;
    // About 200 MB with a few hours kept (Node, the bundle, the store, 1972 history rows); about 900 MB before.
    expect(peakMb).toBeLessThan(400);
  }, 180_000);
});
