import { describe, expect, it } from 'vitest';
import { HOUR_MS, regimeAt, SimulatedMarket } from '../generator/sources/simulator/market-model.ts';
import type { Regime } from '../generator/sources/simulator/market-model.ts';
import { SIMULATED_RUN_PLAN } from '../generator/sources/adapters/plan.ts';
import { collectMarket } from '../generator/sources/collect.ts';
import { createSimulatedTransport } from '../generator/sources/simulator/transport.ts';
import type { Transport, TransportResponse } from '../generator/sources/transport.ts';
import { TRACKED_ASSETS } from '../schemas/common.ts';

const AS_OF = Date.UTC(2026, 2, 10, 14, 37, 21, 512); // inside an hour on purpose

function endpointUrls(symbol: string): string[] {
  const pair = `${symbol}USDT`;
  const krakenPair = `${symbol === 'BTC' ? 'XBT' : symbol}USD`;
  return [
    `https://api.binance.com/api/v3/ticker/24hr?symbols=${encodeURIComponent(JSON.stringify([pair, 'ETHUSDT']))}`,
    `https://api.binance.com/api/v3/ticker/24hr?symbol=${pair}`,
    `https://api.binance.com/api/v3/klines?symbol=${pair}&interval=1h&limit=200`,
    `https://api.binance.com/api/v3/depth?symbol=${pair}&limit=100`,
    `https://fapi.binance.com/fapi/v1/premiumIndex?symbol=${pair}`,
    `https://fapi.binance.com/fapi/v1/fundingRate?symbol=${pair}&limit=50`,
    `https://fapi.binance.com/futures/data/openInterestHist?symbol=${pair}&period=1h&limit=100`,
    `https://www.okx.com/api/v5/public/liquidation-orders?instType=SWAP&uly=${symbol}-USDT&state=filled`,
    `https://api.exchange.coinbase.com/products/${symbol}-USD/stats`,
    `https://api.exchange.coinbase.com/products/${symbol}-USD/candles?granularity=3600`,
    `https://api.exchange.coinbase.com/products/${symbol}-USD/book?level=2`,
    `https://api.kraken.com/0/public/Ticker?pair=${krakenPair},ETHUSD`,
    `https://api.kraken.com/0/public/OHLC?pair=${krakenPair}&interval=60`,
    'https://api.coingecko.com/api/v3/simple/price?ids=bitcoin,solana&vs_currencies=usd&include_24hr_change=true',
  ];
}

async function bodies(transport: Transport, urls: string[]): Promise<string[]> {
  return Promise.all(urls.map(async (url) => (await transport.fetch({ url })).body));
}

const logReturns = (closes: number[]): number[] =>
  closes.slice(1).map((c, i) => Math.log(c / (closes[i] ?? c)));
const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

function correlation(xs: number[], ys: number[]): number {
  const [mx, my] = [mean(xs), mean(ys)];
  let [sxy, sxx, syy] = [0, 0, 0];
  xs.forEach((x, i) => {
    const y = ys[i] ?? my;
    sxy += (x - mx) * (y - my);
    sxx += (x - mx) ** 2;
    syy += (y - my) ** 2;
  });
  return sxy / Math.sqrt(sxx * syy);
}

const lagged = (xs: number[], lag: number): number => correlation(xs.slice(lag), xs.slice(0, -lag));

function excessKurtosis(xs: number[]): number {
  const m = mean(xs);
  const variance = mean(xs.map((x) => (x - m) ** 2));
  return mean(xs.map((x) => (x - m) ** 4)) / variance ** 2 - 3;
}

function hourlyCloses(market: SimulatedMarket, symbol: string, hours: number): number[] {
  const closes: number[] = [];
  for (let hour = market.currentHour - hours; hour < market.currentHour; hour++) {
    closes.push(market.candle(symbol, hour).close);
  }
  return closes;
}

describe('simulated transport: determinism', () => {
  it('gives byte-identical answers for the same seed and as-of time', async () => {
    const urls = [...endpointUrls('BTC'), ...endpointUrls('HBAR')];
    const first = await bodies(createSimulatedTransport({ seed: 11, asOf: AS_OF }), urls);
    const second = await bodies(createSimulatedTransport({ seed: 11, asOf: AS_OF }), urls);
    expect(second).toEqual(first);
    for (const body of first) expect(body.length).toBeGreaterThan(50);
  });

  it('gives a different market for another seed', async () => {
    const urls = endpointUrls('BTC').slice(1, 7); // every priced endpoint (liquidations may both be quiet)
    const first = await bodies(createSimulatedTransport({ seed: 11, asOf: AS_OF }), urls);
    const other = await bodies(createSimulatedTransport({ seed: 12, asOf: AS_OF }), urls);
    first.forEach((body, i) => expect(other[i]).not.toBe(body));
  });
});

describe('simulated transport: answers handed over as values', () => {
  it('hands the adapters exactly what parsing its bytes gives, for every answer of a default run', async () => {
    const simulated = createSimulatedTransport({ seed: 42, asOf: AS_OF, listings: 'with-gaps' });
    const answers: Array<{ url: string; response: TransportResponse }> = [];
    const transport: Transport = {
      mode: 'simulated',
      async fetch(request, signal) {
        const response = await simulated.fetch(request, signal);
        answers.push({ url: request.url, response });
        return response;
      },
    };
    await collectMarket({
      transport,
      symbols: TRACKED_ASSETS,
      asOf: AS_OF,
      seed: 42,
      plan: SIMULATED_RUN_PLAN,
    });
    // Every dialect of the fallback chain is asked (the default run's gaps walk it), each answer as a value.
    const hosts = new Set(answers.map(({ url }) => new URL(url).host));
    expect(hosts.size).toBeGreaterThanOrEqual(5);
    for (const { url, response } of [
      ...answers,
      ...(await Promise.all(
        endpointUrls('HBAR').map(async (url) => ({ url, response: await simulated.fetch({ url }) })),
      )),
    ]) {
      expect(response.json, url).toBeDefined();
      // Strict: an undefined field, a -0, NaN or Infinity would not survive the bytes.
      expect(response.json, url).toStrictEqual(JSON.parse(response.body));
    }
  });
});

describe('simulated transport: one continuous market across runs', () => {
  it('agrees on every closed bar, funding settlement and open-interest hour shared by two as-of times', async () => {
    const later = AS_OF + 5 * HOUR_MS + 17 * 60_000;
    const read = async (asOf: number, url: string): Promise<unknown[]> =>
      JSON.parse((await createSimulatedTransport({ seed: 3, asOf }).fetch({ url })).body) as unknown[];
    const klines = 'https://api.binance.com/api/v3/klines?symbol=SOLUSDT&interval=1h&limit=48';
    const [early, late] = [await read(AS_OF, klines), await read(later, klines)];
    const lateByOpen = new Map((late as number[][]).map((row) => [row[0], row]));
    const shared = (early as number[][]).filter(
      (row) => (row[6] ?? Infinity) < AS_OF && lateByOpen.has(row[0]),
    );
    expect(shared.length).toBeGreaterThan(40);
    for (const row of shared) expect(lateByOpen.get(row[0])).toEqual(row);

    for (const url of [
      'https://fapi.binance.com/fapi/v1/fundingRate?symbol=SOLUSDT&limit=20',
      'https://fapi.binance.com/futures/data/openInterestHist?symbol=SOLUSDT&period=1h&limit=30',
    ]) {
      const [a, b] = [await read(AS_OF, url), await read(later, url)];
      const shared = b.filter((row) => a.some((x) => JSON.stringify(x) === JSON.stringify(row)));
      // All of the early window except what the later window pushed out (5 OI hours, or 0-1 settlements).
      expect(shared.length).toBeGreaterThanOrEqual(Math.min(a.length, b.length) - 6);
    }
  });

  it('answers with the venue error styles for unknown symbols, parameters and paths', async () => {
    const transport = createSimulatedTransport({ seed: 1, asOf: AS_OF });
    const get = (url: string) => transport.fetch({ url });
    const invalid = await get('https://api.binance.com/api/v3/depth?symbol=DOGEUSDT');
    expect(invalid.status).toBe(400);
    expect(JSON.parse(invalid.body)).toEqual({ code: -1121, msg: 'Invalid symbol.' });
    const batch = await get(
      `https://api.binance.com/api/v3/ticker/24hr?symbols=${encodeURIComponent('["BTCUSDT","NOPEUSDT"]')}`,
    );
    expect(JSON.parse(batch.body)).toMatchObject({ code: -1121 });
    expect((await get('https://fapi.binance.com/fapi/v2/unknown')).status).toBe(404);
    const okx = await get(
      'https://www.okx.com/api/v5/public/liquidation-orders?instType=SWAP&uly=DOGE-USDT&state=filled',
    );
    expect(JSON.parse(okx.body)).toMatchObject({ code: '51000', data: [] });
    const synthetic = createSimulatedTransport({ seed: 1, asOf: AS_OF, symbols: ['S001'] });
    expect(
      (await synthetic.fetch({ url: 'https://api.binance.com/api/v3/depth?symbol=S001USDT' })).status,
    ).toBe(200);
  });
});

describe('simulated transport: the spot fallback venues speak their own dialects', () => {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- venue JSON, read field by field below
  type Json = any;
  const json = async (transport: Transport, url: string): Promise<{ status: number; body: Json }> => {
    const response = await transport.fetch({ url });
    return { status: response.status, body: JSON.parse(response.body) };
  };

  it('Coinbase: numbers as strings in the stats, candles [time, low, high, open, close, volume] newest first, {message} errors', async () => {
    const transport = createSimulatedTransport({ seed: 1, asOf: AS_OF });
    const stats = await json(transport, 'https://api.exchange.coinbase.com/products/SOL-USD/stats');
    expect(stats.status).toBe(200);
    for (const field of ['open', 'high', 'low', 'last', 'volume'])
      expect(stats.body[field]).toMatch(/^\d+\.\d{8}$/);
    const candles = await json(
      transport,
      'https://api.exchange.coinbase.com/products/SOL-USD/candles?granularity=3600&start=2026-03-10T10:00:00.000Z&end=2026-03-10T13:00:00.000Z',
    );
    expect(candles.body.map((row: number[]) => row[0])).toEqual(
      [13, 12, 11, 10].map((h) => Date.UTC(2026, 2, 10, h) / 1000),
    );
    const [, low, high, open, close] = candles.body[0] as number[];
    expect(low).toBeLessThanOrEqual(Math.min(open!, close!));
    expect(high).toBeGreaterThanOrEqual(Math.max(open!, close!));
    expect(await json(transport, 'https://api.exchange.coinbase.com/products/DOGE-USD/stats')).toEqual({
      status: 404,
      body: { message: 'NotFound' },
    });
    // The default run's gaps: XLM's stats are refused with Coinbase's public rate limit.
    const withGaps = createSimulatedTransport({ seed: 1, asOf: AS_OF, listings: 'with-gaps' });
    expect(await json(withGaps, 'https://api.exchange.coinbase.com/products/XLM-USD/stats')).toEqual({
      status: 429,
      body: { message: 'Public rate limit exceeded' },
    });
  });

  it('Kraken: legacy pair keys, the forming bar last, an unknown pair failing the whole call in a 200 envelope', async () => {
    const transport = createSimulatedTransport({ seed: 1, asOf: AS_OF, listings: 'with-gaps' });
    const ticker = await json(transport, 'https://api.kraken.com/0/public/Ticker?pair=XBTUSD,XLMUSD,SOLUSD');
    expect(ticker.body.error).toEqual([]);
    expect(Object.keys(ticker.body.result).sort()).toEqual(['SOLUSD', 'XXBTZUSD', 'XXLMZUSD']);
    const ohlc = await json(transport, 'https://api.kraken.com/0/public/OHLC?pair=XBTUSD&interval=60');
    const rows = ohlc.body.result.XXBTZUSD as unknown[][];
    expect(rows).toHaveLength(720);
    expect(rows.at(-1)![0]).toBe(Math.floor(AS_OF / HOUR_MS) * 3600); // still forming
    expect(ohlc.body.result.last).toBe(rows.at(-2)![0]);
    const unknown = await json(transport, 'https://api.kraken.com/0/public/Ticker?pair=XBTUSD,HBARUSD');
    expect(unknown).toEqual({ status: 200, body: { error: ['EQuery:Unknown asset pair'] } });
  });

  it('CoinGecko: keyed by coin id, percent change, seconds; an id it does not know is left out', async () => {
    const transport = createSimulatedTransport({ seed: 1, asOf: AS_OF });
    const answer = await json(
      transport,
      'https://api.coingecko.com/api/v3/simple/price?ids=bitcoin,no-such-coin,stellar&vs_currencies=usd' +
        '&include_24hr_change=true&include_24hr_vol=true&include_last_updated_at=true',
    );
    expect(Object.keys(answer.body)).toEqual(['bitcoin', 'stellar']);
    const market = new SimulatedMarket(1, AS_OF);
    const updated = Math.floor(AS_OF / 60_000) * 60;
    expect(answer.body.bitcoin.last_updated_at).toBe(updated);
    expect(answer.body.bitcoin.usd).toBeCloseTo(market.priceAt('BTC', updated * 1000), 0);
    const dayAgo = market.priceAt('BTC', updated * 1000 - 24 * HOUR_MS);
    expect(answer.body.bitcoin.usd_24h_change).toBeCloseTo((answer.body.bitcoin.usd / dayAgo - 1) * 100, 4);
  });
});

describe('simulated market: stylised facts', () => {
  const HOURS = 6_000;

  it.each([1, 2, 3])(
    'has fat tails and volatility clustering but little linear predictability (seed %i)',
    (seed) => {
      const market = new SimulatedMarket(seed, AS_OF);
      for (const symbol of ['BTC', 'ALGO', 'S123']) {
        const returns = logReturns(hourlyCloses(market, symbol, HOURS));
        expect(excessKurtosis(returns)).toBeGreaterThan(1);
        expect(lagged(returns.map(Math.abs), 1)).toBeGreaterThan(0.05);
        expect(Math.abs(lagged(returns, 1))).toBeLessThan(0.1);
      }
    },
  );

  it('moves assets together through the common factor', () => {
    const market = new SimulatedMarket(5, AS_OF);
    const btc = logReturns(hourlyCloses(market, 'BTC', HOURS));
    const eth = logReturns(hourlyCloses(market, 'ETH', HOURS));
    expect(correlation(btc, eth)).toBeGreaterThan(0.4);
  });

  it('drifts up in bull regimes, down and more wildly in risk-off ones', () => {
    const seed = 8;
    const market = new SimulatedMarket(seed, AS_OF);
    const returns = logReturns(hourlyCloses(market, 'BTC', HOURS + 1));
    const byRegime = new Map<Regime, number[]>();
    returns.forEach((r, i) => {
      const regime = regimeAt(seed, market.currentHour - HOURS + i);
      byRegime.set(regime, [...(byRegime.get(regime) ?? []), r]);
    });
    const bull = byRegime.get('bull') ?? [];
    const riskOff = byRegime.get('risk-off') ?? [];
    const range = byRegime.get('range') ?? [];
    expect(Math.min(bull.length, riskOff.length, range.length)).toBeGreaterThan(200);
    expect(mean(bull)).toBeGreaterThan(mean(riskOff));
    const spread = (xs: number[]): number => Math.sqrt(mean(xs.map((x) => x * x)));
    expect(spread(riskOff)).toBeGreaterThan(spread(range));
  });

  it('raises funding after rallies and liquidates more often after large moves', () => {
    const market = new SimulatedMarket(21, AS_OF);
    const closes = hourlyCloses(market, 'ETH', 2_000); // closes[i] = price at the boundary ending hour i
    const firstHour = market.currentHour - 2_000;
    const momentum: number[] = [];
    const funding: number[] = [];
    for (let i = 25; i < closes.length; i++) {
      momentum.push(Math.log((closes[i - 1] ?? 1) / (closes[i - 25] ?? 1)));
      funding.push(market.funding8h('ETH', firstHour + i));
    }
    expect(correlation(momentum, funding)).toBeGreaterThan(0.5);

    const returns = logReturns(closes);
    const sigma = Math.sqrt(mean(returns.map((r) => r * r)));
    const events = market.liquidations('ETH', (firstHour + 1) * HOUR_MS, market.currentHour * HOUR_MS - 1);
    const perHour = new Map<number, number>();
    for (const event of events) {
      const hour = Math.floor(event.time / HOUR_MS);
      perHour.set(hour, (perHour.get(hour) ?? 0) + 1);
    }
    const rate = (pick: (r: number) => boolean): number => {
      const hours = returns.map((r, i) => [r, firstHour + 1 + i] as const).filter(([r]) => pick(r));
      return hours.reduce((n, [, hour]) => n + (perHour.get(hour) ?? 0), 0) / hours.length;
    };
    expect(events.length).toBeGreaterThan(50);
    expect(rate((r) => Math.abs(r) > 2 * sigma)).toBeGreaterThan(2 * rate((r) => Math.abs(r) < sigma));
  });
});
