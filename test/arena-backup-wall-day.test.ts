// The daily copy of the arena store is named by the day on this machine's clock, not by the market time the run
// describes: a simulated or replayed run dated tomorrow took tomorrow's copy early (with today's contents), so the
// real tomorrow took none, and `emi arena repair` would restore the older contents as the newest copy.
import { readdir, rm } from 'node:fs/promises';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { emiInProcess } from './helpers/emi-in-process.ts';

const HOUR_MS = 3_600_000;
let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'emi-backup-day-'));
});
afterEach(async () => {
  vi.restoreAllMocks();
  process.exitCode = undefined;
  await rm(dir, { recursive: true, force: true });
});

const generate = (asOf: number) =>
  emiInProcess([
    'generate',
    '--out',
    join(dir, 'site'),
    '--state',
    join(dir, 'state'),
    '--as-of',
    new Date(asOf).toISOString(),
  ]);

describe('the daily arena store copy', () => {
  it('is named by the day of the machine clock when the run describes another day', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
    const before = Date.now();
    // Just inside the day --as-of may lie ahead of the clock: the next UTC day (unless the test starts in the day's
    // first half minute, when both codes name today's copy).
    await generate(before + 24 * HOUR_MS - 30_000);
    expect(process.exitCode ?? 0).toBe(0);
    const copies = (await readdir(join(dir, 'state', 'backups'))).filter((name) =>
      name.startsWith('arena-20'),
    );
    expect(copies).toHaveLength(1);
    expect([day(before), day(Date.now())].map((d) => `arena-${d}.sqlite`)).toContain(copies[0]);
  });
});
