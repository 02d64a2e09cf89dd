// The simulated venues on their worker thread (the default simulated run's transport): the same bytes as the
// in-process simulator, and a thread that dies fails only the answers it owed.
import { existsSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { SIMULATED_RUN_PLAN } from '../generator/sources/adapters/plan.ts';
import { collectMarket, collectSimulatedMarket } from '../generator/sources/collect.ts';
import { createSimulatedTransport } from '../generator/sources/simulator/transport.ts';
import {
  createThreadedSimulatedTransport,
  stopVenueThread,
  VENUE_THREAD_FILE,
} from '../generator/sources/simulator/venue-thread.ts';
import type { TransportRequest } from '../generator/sources/transport.ts';
import { TRACKED_ASSETS } from '../schemas/common.ts';

const AS_OF = Date.UTC(2026, 10, 21, 12, 34, 56, 789);
const MARKET = { seed: 7, asOf: AS_OF, listings: 'with-gaps' as const };

const REQUESTS: TransportRequest[] = [
  { url: 'https://api.binance.com/api/v3/klines?symbol=BTCUSDT&interval=1h&limit=300' },
  { url: 'https://api.binance.com/api/v3/ticker/24hr?symbol=ALGOUSDT' }, // unlisted in the default run: -1121
  { url: 'https://fapi.binance.com/futures/data/openInterestHist?symbol=ETHUSDT&period=1h&limit=200' },
  { url: 'https://www.okx.com/api/v5/public/liquidation-orders?instType=SWAP&uly=SOL-USDT&state=filled' },
  { url: 'https://api.kraken.com/0/public/Ticker?pair=XLMUSD,HBARUSD' }, // an error envelope over HTTP 200
  { url: 'https://api.exchange.coinbase.com/products/XLM-USD/candles?granularity=3600' }, // throttled: 429
  {
    url: 'https://api.hyperliquid.xyz/info',
    method: 'POST',
    body: JSON.stringify({ type: 'fundingHistory', coin: 'XLM', startTime: AS_OF - 86_400_000 }),
  },
  { url: 'https://api.bybit.com/v5/market/nowhere' }, // no such route: 404
];

afterAll(() => stopVenueThread());

describe('the simulated venues on their own thread', () => {
  it('is the default simulated transport, built by bin/build.js', () => {
    expect(existsSync(VENUE_THREAD_FILE)).toBe(true);
  });

  it('answers byte for byte what the in-process simulator answers, errors included', async () => {
    const threaded = await createThreadedSimulatedTransport(MARKET);
    const local = createSimulatedTransport(MARKET);
    const [remote, here] = await Promise.all([
      Promise.all(REQUESTS.map((request) => threaded.fetch(request))),
      Promise.all(REQUESTS.map((request) => local.fetch(request))),
    ]);
    expect(remote).toEqual(here);
    expect(remote.map((response) => response.status)).toEqual([200, 400, 200, 200, 200, 429, 200, 404]);
  });

  it('keeps each market apart when runs about different times interleave', async () => {
    const [a, b] = await Promise.all([
      createThreadedSimulatedTransport(MARKET),
      createThreadedSimulatedTransport({ ...MARKET, asOf: AS_OF + 3_600_000 }),
    ]);
    const url = { url: 'https://api.binance.com/api/v3/ticker/24hr?symbol=BTCUSDT' };
    const [fromA, fromB] = await Promise.all([a.fetch(url), b.fetch(url)]);
    expect(fromA.body).toBe((await createSimulatedTransport(MARKET).fetch(url)).body);
    expect(fromB.body).not.toBe(fromA.body);
  });

  it('gives the default run the snapshot the in-process simulator gives', async () => {
    const request = { seed: 7, asOf: AS_OF, symbols: TRACKED_ASSETS };
    const threaded = await collectSimulatedMarket(request);
    const local = await collectMarket({
      ...request,
      transport: createSimulatedTransport({ ...request, listings: 'with-gaps' }),
      plan: SIMULATED_RUN_PLAN,
    });
    expect(threaded).toEqual(local);
    expect(threaded.assets.every((asset) => asset.candles && asset.ticker && asset.funding)).toBe(true);
  });

  it('fails the answers a stopped thread owed, and the next request starts a fresh thread', async () => {
    const transport = await createThreadedSimulatedTransport(MARKET);
    const owed = transport.fetch({
      url: 'https://api.binance.com/api/v3/klines?symbol=BTCUSDT&interval=1h&limit=1000',
    });
    await stopVenueThread();
    await expect(owed).rejects.toThrow(/thread stopped/);
    const again = await transport.fetch({ url: 'https://api.binance.com/api/v3/ticker/24hr?symbol=ETHUSDT' });
    expect(again.status).toBe(200);
  });
});
