// Contract tests: each adapter reads its venue's documented example answer, served over real HTTP on 127.0.0.1
// through the live transport, and normalises units (percent vs fraction, seconds vs ms, contracts, base vs quote).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { binanceSpotBook, binanceSpotTicker } from '../generator/sources/adapters/binance-spot.ts';
import { binanceUsdmFunding, binanceUsdmOpenInterest } from '../generator/sources/adapters/binance-usdm.ts';
import { bybitFunding, bybitOpenInterest } from '../generator/sources/adapters/bybit.ts';
import { coinbaseBook, coinbaseCandles, coinbaseTicker } from '../generator/sources/adapters/coinbase.ts';
import { coingeckoTicker } from '../generator/sources/adapters/coingecko.ts';
import { hyperliquidFunding, hyperliquidOpenInterest } from '../generator/sources/adapters/hyperliquid.ts';
import { krakenCandles, krakenTicker } from '../generator/sources/adapters/kraken.ts';
import { okxFunding, okxLiquidations, okxOpenInterest } from '../generator/sources/adapters/okx.ts';
import type { FetchContext } from '../generator/sources/adapters/source.ts';
import { startReplayServer } from '../generator/sources/replay-server.ts';
import type { ReplayServer } from '../generator/sources/replay-server.ts';
import type { Transport } from '../generator/sources/transport.ts';
import { fixture, fixtureHandler, liveTransportTo } from './live-helpers.ts';

const HOUR_MS = 3_600_000;

let server: ReplayServer;
let transport: Transport;

beforeAll(async () => {
  server = await startReplayServer(
    fixtureHandler({
      'binance-spot /api/v3/ticker/24hr': 'binance-spot/ticker-24hr.json',
      'binance-spot /api/v3/depth': 'binance-spot/depth.json',
      'binance-usdm /fapi/v1/premiumIndex': 'binance-usdm/premium-index.json',
      'binance-usdm /fapi/v1/fundingRate': 'binance-usdm/funding-rate-8h.json',
      'binance-usdm /futures/data/openInterestHist': 'binance-usdm/open-interest-hist.json',
      'coinbase /products/BTC-USD/stats': 'coinbase/stats.json',
      'coinbase /products/BTC-USD/candles': 'coinbase/candles.json',
      'coinbase /products/BTC-USD/book': 'coinbase/book.json',
      'kraken /0/public/Ticker': 'kraken/ticker.json',
      'kraken /0/public/OHLC': 'kraken/ohlc.json',
      'coingecko /api/v3/simple/price': 'coingecko/simple-price.json',
      'bybit /v5/market/tickers': 'bybit/tickers-linear.json',
      'bybit /v5/market/funding/history': 'bybit/funding-history.json',
      'bybit /v5/market/open-interest': 'bybit/open-interest.json',
      'okx /api/v5/public/funding-rate': 'okx/funding-rate.json',
      'okx /api/v5/public/funding-rate-history': 'okx/funding-rate-history.json',
      'okx /api/v5/public/open-interest': 'okx/open-interest.json',
      'okx /api/v5/public/liquidation-orders': 'okx/liquidation-orders.json',
    }),
  );
  server.requests.length = 0;
  transport = liveTransportTo(server);
});
afterAll(() => server.close());

const context = (asOf: number, candleLimit = 500): FetchContext => ({
  transport,
  asOf,
  candleLimit,
  shared: new Map(),
});
const lastRequest = (venue: string) => server.requests.filter((r) => r.venue === venue).at(-1);

describe('spot adapters over HTTP', () => {
  it('Binance: ticker percent -> fraction, book without empty levels', async () => {
    const tickers = await binanceSpotTicker.fetch(['BTC', 'ETH'], context(1499869900000));
    expect(tickers.get('BTC')?.value.change24h).toBeCloseTo(-0.9596, 12);
    expect(tickers.get('ETH')?.provenance).toEqual({
      venue: 'binance-spot',
      asOf: 1499869899040,
      mode: 'live',
      estimated: false,
    });
    const book = await binanceSpotBook.fetch(['BTC'], context(1499869900000));
    expect(book.get('BTC')?.value).toEqual({ bids: [[4, 431]], asks: [[4.000002, 12]] });
  });

  it('Coinbase: stats give change from the 24 h open and quote volume from base volume', async () => {
    const asOf = Date.UTC(2024, 2, 25, 8, 30);
    const ticker = (await coinbaseTicker.fetch(['BTC'], context(asOf))).get('BTC')!;
    expect(ticker.value.last).toBe(6250.02);
    expect(ticker.value.change24h).toBeCloseTo(6250.02 / 5414.18 - 1, 12);
    expect(ticker.value.quoteVolume24h).toBeCloseTo(53687.76764233 * 6250.02, 6);
    expect(ticker.value).toMatchObject({ bid: null, ask: null });
    expect(ticker.provenance).toMatchObject({ venue: 'coinbase', asOf, mode: 'live' });
  });

  it('Coinbase: candles [time, low, high, open, close, volume] in seconds, newest first, the forming one dropped', async () => {
    const asOf = Date.UTC(2024, 2, 25, 8, 30);
    const candles = (await coinbaseCandles.fetch(['BTC'], context(asOf, 2))).get('BTC')!;
    expect(candles.value).toEqual([
      { openTime: 1711346400000, open: 66600, high: 67000, low: 66500, close: 66900, volumeBase: 201.9 },
      { openTime: 1711350000000, open: 66900, high: 67250, low: 66800.1, close: 67100, volumeBase: 153.2 },
    ]);
    expect(candles.provenance.asOf).toBe(1711350000000 + HOUR_MS);
    const query = new URLSearchParams(lastRequest('coinbase')?.path.split('?')[1]);
    expect(query.get('granularity')).toBe('3600');
    expect([query.get('start'), query.get('end')]).toEqual([
      '2024-03-25T06:00:00.000Z',
      '2024-03-25T07:00:00.000Z',
    ]);
  });

  it('Coinbase: level-2 book, zero-size levels dropped', async () => {
    const book = (await coinbaseBook.fetch(['BTC'], context(Date.UTC(2024, 2, 25)))).get('BTC')!;
    expect(book.value).toEqual({ bids: [[295.96, 4.39088265]], asks: [[295.97, 25.23542881]] });
  });

  it('Kraken: a pair the answer holds under no expected name is left out with a reason, not silently', async () => {
    const asOf = (1688688000 + 1800) * 1000;
    const tickers = await krakenTicker.fetch(['BTC', 'ETH'], context(asOf)); // the answer has no ETH entry
    expect(tickers.has('ETH')).toBe(false);
    expect(tickers.reasons?.get('ETH')).toBe('the answer has no entry under XETHZUSD or ETHUSD');
  });

  it('Kraken: renamed pair keys, 24 h change from the bar a day ago, the forming OHLC row dropped', async () => {
    const asOf = (1688688000 + 1800) * 1000; // half an hour into the forming bar
    const tickers = await krakenTicker.fetch(['BTC', 'SOL'], context(asOf));
    const btc = tickers.get('BTC')!.value;
    expect(btc).toMatchObject({ last: 30303.2, bid: 30300, ask: 30300.1 });
    expect(btc.change24h).toBeCloseTo(30303.2 / 30010 - 1, 12);
    expect(btc.quoteVolume24h).toBeCloseTo(4412.73601799 * 30689.13205, 6);
    expect(server.requests.some((r) => r.path.includes('pair=XBTUSD,SOLUSD'))).toBe(true);
    expect(server.requests.some((r) => r.path.includes(`since=${1688601600 - 3600}`))).toBe(true);
    // The OHLC answer holds XBT's bars only, so SOL has no price a day ago: left out, not guessed.
    expect(tickers.has('SOL')).toBe(false);

    const candles = (await krakenCandles.fetch(['BTC'], context(asOf))).get('BTC')!;
    expect(candles.value.map((c) => c.openTime)).toEqual([1688601600000, 1688680800000, 1688684400000]);
    expect(candles.value[2]).toEqual({
      openTime: 1688684400000,
      open: 30280,
      high: 30310,
      low: 30260,
      close: 30300,
      volumeBase: 4.42996871,
    });
  });

  it('CoinGecko: ids, percent -> fraction, seconds -> ms', async () => {
    const tickers = await coingeckoTicker.fetch(['BTC', 'ETH', 'HBAR', 'XRP'], context(1711356400000));
    expect(lastRequest('coingecko')?.path).toContain(
      'ids=bitcoin,ethereum,hedera-hashgraph,ripple&vs_currencies=usd',
    );
    expect(tickers.get('BTC')?.value).toEqual({
      last: 67187.3358,
      change24h: 3.6386 / 100,
      quoteVolume24h: 30634556447.4186,
      volumeScope: 'all-exchanges', // every exchange's trades, not one venue's
      bid: null,
      ask: null,
    });
    expect(tickers.get('HBAR')?.provenance.asOf).toBe(1711356288000);
    expect(tickers.has('XRP')).toBe(false);
  });
});

describe('derivatives adapters over HTTP', () => {
  it('Binance USDⓈ-M: funding per 8 h and open interest in USD', async () => {
    const funding = (await binanceUsdmFunding.fetch(['BTC'], context(1597370495002))).get('BTC')!;
    expect(funding.value.rate8h).toBeCloseTo(0.00038246, 12);
    const oi = (await binanceUsdmOpenInterest.fetch(['BTC'], context(1583128300000))).get('BTC')!;
    expect(oi.value.history.map((p) => p.time)).toEqual([1583127900000, 1583128200000]);
  });

  it('Bybit: one tickers call for every contract, stated 8 h interval, history in coins at the mark price', async () => {
    const asOf = 1673277000000;
    const shared = context(asOf);
    const [funding, oi] = await Promise.all([
      bybitFunding.fetch(['BTC'], shared),
      bybitOpenInterest.fetch(['BTC'], shared),
    ]);
    expect(server.requests.filter((r) => r.path.startsWith('/v5/market/tickers'))).toHaveLength(1);
    expect(funding.get('BTC')?.value).toEqual({
      rate8h: -0.000212,
      rateKind: 'predicted', // the running period's rate (premium index, ticker, asset context)
      intervalHours: 8,
      markPrice: 17217.33,
      indexPrice: 17227.36,
      history8h: [0.0002, -0.00005, 0.0001],
      historyTimes: [1673193600000, 1673222400000, 1673251200000], // every 8 h, the window read by time
    });
    // Bybit counts both sides; one side is published (this fixture has no singleOpenInterest: half).
    expect(oi.get('BTC')?.value.valueUsd).toBe(1183601235.91 / 2);
    expect(oi.get('BTC')?.value.history).toEqual([
      { time: 1673272800000, valueUsd: (68000 / 2) * 17217.33 },
      { time: 1673276400000, valueUsd: (68744.761 / 2) * 17217.33 },
    ]);
    await expect(bybitFunding.fetch(['SOL'], shared)).rejects.toThrow(/no linear contract SOLUSDT/);
  });

  it('OKX: funding per its own period, current open interest in USD', async () => {
    const funding = (await okxFunding.fetch(['BTC'], context(1703070700000))).get('BTC')!;
    expect(funding.value.intervalHours).toBe(8);
    expect(funding.value.rate8h).toBeCloseTo(0.000079238688534, 15);
    expect(funding.value.history8h).toEqual([0.0001, 0.0000746572740336]);
    expect(funding.provenance.asOf).toBe(1703070685309);
    const oi = (await okxOpenInterest.fetch(['BTC'], context(1597026400000))).get('BTC')!;
    expect(oi.value).toEqual({ valueUsd: 50000, history: [{ time: 1597026383085, valueUsd: 50000 }] });
    expect(lastRequest('okx')?.path).toBe('/api/v5/public/open-interest?instType=SWAP&instId=BTC-USDT-SWAP');
  });

  it('OKX: liquidation orders in contracts become USD', async () => {
    const values = await okxLiquidations.fetch(['BTC'], context(1692266434010 + 1_000));
    expect(values.get('BTC')?.value.shortUsd24h).toBeCloseTo(7800, 9);
  });
});

describe('Hyperliquid over HTTP (POST /info)', () => {
  let hyperliquid: ReplayServer;
  let fundingHistoryFile = 'funding-history.json';
  beforeAll(async () => {
    hyperliquid = await startReplayServer(({ body }) => {
      const type = (JSON.parse(body) as { type: string }).type;
      const file = { metaAndAssetCtxs: 'meta-and-asset-ctxs.json', fundingHistory: fundingHistoryFile }[type];
      return file ? { body: fixture(`hyperliquid/${file}`) } : { status: 422, body: 'Failed to deserialize' };
    });
  });
  afterAll(() => hyperliquid.close());

  it('hourly funding times 8, open interest in coins times mark price, unknown coins refused', async () => {
    const ctx: FetchContext = {
      transport: liveTransportTo(hyperliquid),
      asOf: 1683850000000,
      candleLimit: 24,
      shared: new Map(),
    };
    const funding = (await hyperliquidFunding.fetch(['BTC'], ctx)).get('BTC')!;
    expect(funding.value).toEqual({
      rate8h: 0.0001,
      rateKind: 'predicted', // the running period's rate (premium index, ticker, asset context)
      intervalHours: 1,
      markPrice: 66010,
      indexPrice: 66020,
      history8h: [0.0001, -0.00022196 * 8],
      historyTimes: [1683846000076, 1683849600076],
    });
    const oi = (await hyperliquidOpenInterest.fetch(['ETH'], ctx)).get('ETH')!;
    expect(oi.value.valueUsd).toBeCloseTo(10250.4 * 3461.5, 6);
    await expect(hyperliquidFunding.fetch(['XLM'], ctx)).rejects.toThrow(/no perpetual XLM/);
    const posts = hyperliquid.requests.filter((r) => r.method === 'POST');
    expect(posts.filter((r) => r.body === '{"type":"metaAndAssetCtxs"}')).toHaveLength(1);
    expect(JSON.parse(posts.find((r) => r.body.includes('fundingHistory'))!.body)).toMatchObject({
      coin: 'BTC',
    });
  });

  // Hyperliquid settled every 8 h until June 2023 and hourly since (its real fundingHistory shows both), and the
  // history answers rows from startTime on, past a replay's or a backfill's as-of.
  it('funding history: each rate per its own settlement spacing, and nothing after the as-of', async () => {
    fundingHistoryFile = 'funding-history-8h-then-hourly.json';
    try {
      const ctx: FetchContext = {
        transport: liveTransportTo(hyperliquid),
        asOf: 1683849600076 + 2.5 * 3_600_000,
        candleLimit: 24,
        shared: new Map(),
      };
      const funding = (await hyperliquidFunding.fetch(['BTC'], ctx)).get('BTC')!;
      const history = funding.value.history8h;
      expect(history).toHaveLength(5); // the row an hour after the as-of is not this run's
      expect(history.map((rate) => Number(rate.toPrecision(6)))).toEqual([
        0.0001, 0.0001, 0.0001, 0.0001, 0.00016,
      ]);
    } finally {
      fundingHistoryFile = 'funding-history.json';
    }
  });
});
