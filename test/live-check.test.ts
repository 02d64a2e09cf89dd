// `emi sources check --live` against a server on 127.0.0.1 standing in for every venue, answering with the project's
// fixtures (documented shapes, plus the oddities): per venue and kind of data, what parsed, the value ranges, units.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createProgram } from '../generator/cli.ts';
import { startReplayServer } from '../generator/sources/replay-server.ts';
import type { ReplayServer } from '../generator/sources/replay-server.ts';
import * as F from './fixtures/venues/oddities.ts';
import { fixture, testConfig } from './live-helpers.ts';

let server: ReplayServer;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'emi-check-live-'));
  server = await startReplayServer(({ venue, path }) => {
    const route = `${venue} ${path.split('?')[0]}`;
    const json = (body: unknown) => ({ body: JSON.stringify(body) });
    if (route === 'bybit /v5/market/tickers') return json(F.bybitTickers);
    if (route === 'bybit /v5/market/funding/history') return json(F.bybitFundingHistory);
    if (route === 'bybit /v5/market/open-interest') return json(F.bybitOpenInterest);
    if (route === 'coingecko /api/v3/simple/price') return json(F.coingeckoSimplePrice);
    if (route === 'binance-usdm /fapi/v1/premiumIndex')
      return { status: 451, body: JSON.stringify(F.binanceRestricted) };
    if (route === 'binance-spot /api/v3/ticker/24hr')
      return { body: fixture('binance-spot/ticker-24hr.json') };
    return { status: 404, body: '{"msg":"not found"}' };
  });
});
afterAll(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

describe('emi sources check --live', () => {
  it('prints, per venue and kind of data, whether it parses, the ranges and the units, and each failure', async () => {
    const config = join(dir, 'emi.config.json');
    await writeFile(config, JSON.stringify({ sources: testConfig(server) }));
    const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    try {
      await createProgram().parseAsync(['node', 'emi', 'sources', 'check', '--live', '--config', config]);
      const text = log.mock.calls.map((call) => String(call[0])).join('\n');
      const block = (venue: string) => text.split(/\n(?=\S)/).find((b) => b.startsWith(`${venue}\n`)) ?? '';
      // Bybit: BTC and SOL parse among the dated future, the odd ETH entry and the halted HBAR.
      expect(block('bybit')).toMatch(
        /funding\s+partial\s+2\/7 .*rate8h -1\.000e-4\.\.2\.000e-4 fraction per 8 h; interval 4\.\.4 h \(venue interval\)/,
      );
      expect(block('bybit')).toMatch(
        /openInterest\s+partial\s+2\/7 .*valueUsd 1\.500e\+8\.\.1\.000e\+9 USD, one side/,
      );
      expect(block('bybit')).toMatch(/ETH: ETHUSDT: unexpected entry shape/);
      expect(block('bybit')).toMatch(/HBAR: .*not available/);
      expect(block('coingecko')).toMatch(/ticker\s+partial\s+1\/7 .*change24h 0\.015\.\.0\.015 fraction/);
      expect(block('binance-usdm')).toMatch(/funding\s+FAILS\s+0\/7/);
      expect(block('binance-usdm')).toMatch(/BTC: HTTP 451/);
      expect(block('kraken')).toMatch(/ticker\s+FAILS/);
    } finally {
      log.mockRestore();
    }
  });
});
