import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import {
  BinanceDepth,
  BinanceKline,
  BinanceTicker24h,
  binanceSpotCandles,
  binanceSpotTicker,
  normaliseDepth,
  normaliseKlines,
  normaliseTicker,
} from '../generator/sources/adapters/binance-spot.ts';
import {
  BinanceFundingRate,
  BinanceOpenInterestHist,
  BinancePremiumIndex,
  binanceUsdmFunding,
  normaliseFunding,
  normaliseOpenInterest,
} from '../generator/sources/adapters/binance-usdm.ts';
import { settlementIntervals } from '../generator/sources/adapters/funding.ts';
import {
  normaliseLiquidations,
  okxLiquidations,
  OkxLiquidationOrders,
} from '../generator/sources/adapters/okx.ts';
import type { FetchContext } from '../generator/sources/adapters/source.ts';
import type { Transport, TransportResponse } from '../generator/sources/transport.ts';

const fixture = (path: string): string =>
  readFileSync(new URL(`fixtures/venues/${path}`, import.meta.url), 'utf8');
const parsed = <T>(schema: z.ZodType<T>, path: string): T => schema.parse(JSON.parse(fixture(path)));

/** A replay of fixture files: the first route whose path and query fragment match the URL answers. */
function fixtureTransport(routes: Array<[fragment: string, file: string]>): Transport & { urls: string[] } {
  const urls: string[] = [];
  return {
    mode: 'replay',
    urls,
    async fetch({ url }): Promise<TransportResponse> {
      urls.push(url);
      const route = routes.find(([fragment]) => url.includes(fragment));
      if (!route) return { status: 404, headers: {}, body: '' };
      return { status: 200, headers: {}, body: fixture(route[1]) };
    },
  };
}

const context = (transport: Transport, asOf: number): FetchContext => ({ transport, asOf, candleLimit: 500 });

describe('Binance spot adapter', () => {
  it('turns the documented 24 h ticker into fractions and USD, an empty bid into null', async () => {
    const [btc, eth] = parsed(z.array(BinanceTicker24h), 'binance-spot/ticker-24hr.json');
    const ticker = normaliseTicker(btc!);
    expect(ticker).toMatchObject({ last: 4.000002, quoteVolume24h: 15.3, bid: 4, ask: 4.000002 });
    expect(ticker.change24h).toBeCloseTo(-0.9596, 12); // the documented "-95.960" percent
    expect(normaliseTicker(eth!)).toMatchObject({ bid: null, ask: 3341.26 });
    expect(normaliseTicker(eth!).change24h).toBeCloseTo(0.0125, 12);

    const transport = fixtureTransport([['/api/v3/ticker/24hr', 'binance-spot/ticker-24hr.json']]);
    const values = await binanceSpotTicker.fetch(['BTC', 'ETH', 'XRP'], context(transport, 1499869900000));
    expect(decodeURIComponent(transport.urls[0] ?? '')).toContain('symbols=["BTCUSDT","ETHUSDT","XRPUSDT"]');
    expect(values.get('ETH')?.value.last).toBe(3341.25);
    expect(values.get('ETH')?.provenance).toEqual({
      venue: 'binance-spot',
      asOf: 1499869899040,
      mode: 'replay',
      estimated: false,
    });
    expect(values.has('XRP')).toBe(false); // not in the answer: the collector records it as missing
  });

  it('keeps closed hourly bars only, oldest first', async () => {
    const rows = parsed(z.array(BinanceKline), 'binance-spot/klines.json');
    const asOf = 1499048000000; // inside the third bar
    const candles = normaliseKlines(rows, asOf, 500);
    expect(candles).toHaveLength(2);
    expect(candles[0]).toEqual({
      openTime: 1499040000000,
      open: 0.0163479,
      high: 0.8,
      low: 0.015758,
      close: 0.015771,
      volumeBase: 148976.11427815,
    });
    expect(normaliseKlines(rows, asOf, 1).map((c) => c.openTime)).toEqual([1499043600000]);

    const transport = fixtureTransport([['/api/v3/klines', 'binance-spot/klines.json']]);
    const sourced = await binanceSpotCandles.fetch(['BTC'], context(transport, asOf));
    expect(transport.urls[0]).toBe(
      'https://api.binance.com/api/v3/klines?symbol=BTCUSDT&interval=1h&limit=501',
    );
    expect(sourced.get('BTC')?.provenance.asOf).toBe(1499047200000); // close of the last closed bar
  });

  it('reads the documented order book, dropping empty levels', () => {
    const book = normaliseDepth(parsed(BinanceDepth, 'binance-spot/depth.json'));
    expect(book).toEqual({ bids: [[4, 431]], asks: [[4.000002, 12]] });
  });
});

describe('Binance USDⓈ-M adapter', () => {
  it('keeps an 8 h funding rate as it is', () => {
    const premium = parsed(BinancePremiumIndex, 'binance-usdm/premium-index.json');
    const history = parsed(z.array(BinanceFundingRate), 'binance-usdm/funding-rate-8h.json');
    expect(normaliseFunding(premium, history)).toEqual({
      rate8h: 0.00038246,
      rateKind: 'predicted', // the running period's rate (premium index, ticker, asset context)
      intervalHours: 8,
      markPrice: 11793.63104562,
      indexPrice: 11781.8049597,
      history8h: [-0.0375, 0.0001],
      historyTimes: [1570608000000, 1570636800000], // each rate's settlement
    });
  });

  it('doubles 4 h rates to put them per 8 h, reading the interval off jittered settlement times', async () => {
    const history = parsed(z.array(BinanceFundingRate), 'binance-usdm/funding-rate-4h.json');
    expect(settlementIntervals(history.map((row) => row.fundingTime))).toEqual([4, 4, 4]);
    // The running period is the one to `nextFundingTime`: here 4 h after the last settlement, as on a 4 h schedule.
    const premium = {
      ...parsed(BinancePremiumIndex, 'binance-usdm/premium-index.json'),
      nextFundingTime: 1597363200005 + 4 * 3_600_000,
    };
    const funding = normaliseFunding(premium, history);
    expect(funding.intervalHours).toBe(4);
    expect(funding.rate8h).toBeCloseTo(0.00076492, 12);
    expect(funding.history8h.map((r) => Number(r.toFixed(10)))).toEqual([0.0001, -0.00005, 0.0002]);

    const transport = fixtureTransport([
      ['/fapi/v1/premiumIndex', 'binance-usdm/premium-index.json'],
      ['/fapi/v1/fundingRate', 'binance-usdm/funding-rate-4h.json'],
    ]);
    const asOf = 1597370495002;
    const sourced = await binanceUsdmFunding.fetch(['HBAR'], context(transport, asOf));
    // The documented premium index's next settlement is 8 h after this history's last: the running period is 8 h
    // (the contract moved back to 8 h); the settled 4 h rates are still doubled.
    expect(sourced.get('HBAR')?.value.intervalHours).toBe(8);
    expect(sourced.get('HBAR')?.value.history8h.map((r) => Number(r.toFixed(10)))).toEqual([
      0.0001, -0.00005, 0.0002,
    ]);
    expect(sourced.get('HBAR')?.provenance.venue).toBe('binance-usdm');
    expect(transport.urls).toContain(
      `https://fapi.binance.com/fapi/v1/fundingRate?symbol=HBARUSDT&startTime=${asOf - 30 * 86_400_000}&limit=1000`,
    );
  });

  it('reads open-interest history with string timestamps, in USD at the latest price, oldest first', () => {
    const rows = parsed(z.array(BinanceOpenInterestHist), 'binance-usdm/open-interest-hist.json');
    const openInterest = normaliseOpenInterest([...rows].reverse());
    const later = Number('149940752.14464448'); // as the venue sent it
    // Every point is its coins at the latest point's price, so the change is the coins' (positions, not the price).
    const price = later / Number('20401.36700000');
    expect(openInterest.valueUsd).toBe(later);
    expect(openInterest.history.map((point) => point.time)).toEqual([1583127900000, 1583128200000]);
    expect(openInterest.history[0]?.valueUsd).toBeCloseTo(20403.637 * price, 6);
    expect(openInterest.history[1]?.valueUsd).toBeCloseTo(later, 6);
  });
});

describe('OKX adapter', () => {
  const asOf = 1692266434010 + 1_000;

  it('converts contracts to USD and sorts liquidations by the position closed, over the last 24 h', () => {
    const raw = parsed(OkxLiquidationOrders, 'okx/liquidation-orders.json');
    const details = raw.data.flatMap((entry) => entry.details);
    // BTC-USDT-SWAP: 0.01 BTC per contract. The third order is older than a day.
    expect(normaliseLiquidations(details, 0.01, asOf)).toEqual({
      shortUsd24h: 13 * 0.01 * 60000,
      longUsd24h: 2 * 0.01 * 59000.5,
      events: 2,
    });
    const netMode = details.map((detail) => ({ ...detail, posSide: 'net' }));
    expect(normaliseLiquidations(netMode, 0.01, asOf)).toEqual(normaliseLiquidations(details, 0.01, asOf));
  });

  it('asks for BTC-USDT swaps and uses the BTC contract value', async () => {
    const transport = fixtureTransport([
      ['/api/v5/public/liquidation-orders', 'okx/liquidation-orders.json'],
    ]);
    const values = await okxLiquidations.fetch(['BTC'], context(transport, asOf));
    // The instruments list (ctVal) is not answered here: the contract values OKX lists stand in.
    expect(transport.urls).toEqual([
      'https://www.okx.com/api/v5/public/liquidation-orders?instType=SWAP&uly=BTC-USDT&state=filled&limit=100',
      'https://www.okx.com/api/v5/public/instruments?instType=SWAP',
    ]);
    expect(values.get('BTC')?.value.shortUsd24h).toBeCloseTo(7800, 9);
  });

  it('rejects an OKX error envelope', async () => {
    const transport: Transport = {
      mode: 'live',
      fetch: async () => ({
        status: 200,
        headers: {},
        body: '{"code":"51001","msg":"Instrument ID does not exist","data":[]}',
      }),
    };
    await expect(okxLiquidations.fetch(['BTC'], context(transport, asOf))).rejects.toThrow(/OKX error 51001/);
  });
});
