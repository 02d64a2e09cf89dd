// `emi sources check --source sim` shows the simulated venues as the default simulated run meets them: the assets
// the default run takes from a fallback venue (generator/sources/README.md) are missing from the first one here too.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BINANCE_SPOT_UNLISTED } from '../generator/sources/simulator/listings.ts';
import { runEmi } from './ops-cli.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'emi-sources-check-sim-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('emi sources check --source sim', { timeout: 60_000 }, () => {
  it('reports Binance spot partial without the assets the default run takes elsewhere', async () => {
    const run = await runEmi(dir, ['sources', 'check', '--source', 'sim', '--json']);
    expect(run.code, run.stderr).toBe(0);
    const rows = JSON.parse(run.stdout) as Array<{ venue: string; status: string; missing: string[] }>;
    const binance = rows.find((row) => row.venue === 'binance-spot');
    expect(binance?.status).toBe('partial');
    expect(binance?.missing.sort()).toEqual([...BINANCE_SPOT_UNLISTED].sort());
  });
});
