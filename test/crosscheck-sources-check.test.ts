// `emi sources check` (and `--live`) against a loopback server answering as every venue (the simulator, in each
// venue's documented format) with some venues' clocks off: a venue whose answers a run would set aside as stale or
// future-dated (generator/sources/freshness.ts) is reported `stale` / `ahead` by how much, never `ok`.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReplayServer, transportHandler } from '../generator/sources/replay-server.ts';
import type { ReplayServer } from '../generator/sources/replay-server.ts';
import { createSimulatedTransport } from '../generator/sources/simulator/transport.ts';
import { testConfig } from './live-helpers.ts';
import { runEmi } from './ops-cli.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/**
 * Each venue answers as the simulator would at now + its clock offset, computed per request (half a minute more than
 * the whole hours, so that the reported offset is the whole hours whatever the test's own pace); `down` is a 503.
 */
function skewedVenues(clocks: Record<string, number | 'down'>): Promise<ReplayServer> {
  return startReplayServer((request) => {
    const clock = clocks[request.venue] ?? 0;
    if (clock === 'down') return { status: 503, body: '{"message":"service unavailable"}' };
    const asOf = Date.now() + clock;
    return transportHandler(createSimulatedTransport({ seed: 3, asOf }))(request);
  });
}

interface Row {
  venue: string;
  status: string;
  note: string;
}

let dir: string;
const servers: ReplayServer[] = [];
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'emi-crosscheck-sources-'));
});
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
  await rm(dir, { recursive: true, force: true });
});

/** A config file routing every venue to a server with these clocks. */
async function configFor(name: string, clocks: Record<string, number | 'down'>): Promise<string> {
  const server = await skewedVenues(clocks);
  servers.push(server);
  const file = join(dir, `${name}.json`);
  await writeFile(file, JSON.stringify({ sources: testConfig(server) }));
  return file;
}

const BEHIND_3H = -(3 * HOUR + MINUTE / 2);
const AHEAD_2H = 2 * HOUR + MINUTE / 2;

describe('emi sources check with venue clocks off', { timeout: 120_000 }, () => {
  it('reports stale and ahead venues by how much, not ok; the others still answer', async () => {
    const config = await configFor('skewed', {
      'binance-spot': BEHIND_3H,
      coingecko: AHEAD_2H,
      coinbase: BEHIND_3H, // its ticker carries no time: its hourly candles show the clock
    });
    const json = await runEmi(dir, ['sources', 'check', '--config', config, '--json']);
    expect(json.code, json.stderr).toBe(0);
    const rows = JSON.parse(json.stdout) as Row[];
    const row = (venue: string) => rows.find((r) => r.venue === venue);
    expect(row('binance-spot')).toMatchObject({
      status: 'stale',
      note: expect.stringMatching(/^stale by 3 h: the venue's ticker is from \S+, 3 h before/),
    });
    // CoinGecko's time is whole seconds of a minute-old update: "1 h 59 min" or "2 h".
    expect(row('coingecko')).toMatchObject({
      status: 'ahead',
      note: expect.stringMatching(
        /^ahead by (1 h 59 min|2 h): the venue's ticker is from \S+, (1 h 59 min|2 h) after/,
      ),
    });
    expect(row('coinbase')).toMatchObject({
      status: 'stale',
      note: expect.stringMatching(/^stale by [23] h( \d+ min)?: the venue's last closed hourly bar is from/),
    });
    expect(row('kraken')).toMatchObject({ status: 'ok', note: '' });

    const text = await runEmi(dir, ['sources', 'check', '--config', config]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^binance-spot\s+stale\s+\d+ ms\s+ticker\s+.*stale by 3 h/m);
    expect(text.stdout).toMatch(/^coingecko\s+ahead\s+\d+ ms\s+ticker\s+.*ahead by (1 h 59 min|2 h)/m);
    expect(text.stdout).toMatch(/\n5 of 8 venues answered$/m);
  });

  it('exits non-zero when no venue answers with current data', async () => {
    const config = await configFor('all-stale', {
      'binance-spot': BEHIND_3H,
      'binance-usdm': BEHIND_3H,
      coinbase: BEHIND_3H,
      kraken: BEHIND_3H,
      coingecko: BEHIND_3H,
      okx: BEHIND_3H,
      bybit: 'down',
      hyperliquid: 'down',
    });
    const run = await runEmi(dir, ['sources', 'check', '--config', config]);
    expect(run.stdout).toMatch(/\n0 of 8 venues answered$/m);
    expect(run.code).toBe(1);
  });

  it('--live: a kind of data whose values parse but describe another time says stale / ahead, per asset', async () => {
    const config = await configFor('skewed-live', { 'binance-spot': BEHIND_3H, coingecko: AHEAD_2H });
    const run = await runEmi(dir, ['sources', 'check', '--live', '--config', config]);
    expect(run.code, run.stderr).toBe(0);
    const block = (venue: string) =>
      run.stdout.split(/\n(?=\S)/).find((b) => b.startsWith(`${venue}\n`)) ?? '';
    expect(block('binance-spot')).toMatch(/\n {2}ticker\s+stale\s+7\/7 /);
    expect(block('binance-spot')).toMatch(/\n {4}BTC: stale by 3 h: the venue's ticker is from /);
    expect(block('coingecko')).toMatch(/\n {2}ticker\s+ahead\s+7\/7 /);
    expect(block('coingecko')).toMatch(/\n {4}ETH: ahead by (1 h 59 min|2 h): the venue's ticker is from /);
    expect(block('kraken')).toMatch(/\n {2}ticker\s+parses\s+7\/7 /);
  });
});
