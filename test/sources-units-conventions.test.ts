// Units and time conventions of the perpetual venues, as their documentation states them, carried through to the
// published readings. Every answer here is written by this test in the venue's documented shape (Binance USDⓈ-M
// "Open Interest Statistics", "Mark Price", "Get Funding Rate History"; OKX v5 "Get open interest", "Get liquidation
// orders"; Hyperliquid `fundingHistory`; CoinGecko `simple/price`), each saying which documented behaviour it stands
// for; numbers are made up unless a comment says otherwise.
import { describe, expect, it } from 'vitest';
import { readDerivatives, readFunding } from '../generator/engines/positioning.ts';
import type { AssetMarket, Funding, OpenInterest, Ticker24h } from '../generator/market/types.ts';
import {
  binanceUsdmFunding,
  binanceUsdmOpenInterest,
  normaliseFunding,
  normaliseOpenInterest,
  type BinanceFundingRate,
  type BinanceOpenInterestHist,
  type BinancePremiumIndex,
} from '../generator/sources/adapters/binance-usdm.ts';
import { normaliseCoin } from '../generator/sources/adapters/coingecko.ts';
import { settledHistory } from '../generator/sources/adapters/funding.ts';
import { okxLiquidations, okxOpenInterest } from '../generator/sources/adapters/okx.ts';
import { SourceError } from '../generator/sources/adapters/request.ts';
import type { FetchContext } from '../generator/sources/adapters/source.ts';
import type { Transport, TransportResponse } from '../generator/sources/transport.ts';
import { emptyAsset } from './helpers/market-fixtures.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** The last closed hour of the tests' run. */
const NOW = Date.UTC(2026, 10, 20, 12, 0, 0);

/** Answers by URL fragment (first match wins); anything else is a 404. */
function transportOf(routes: Array<[fragment: string, body: unknown]>): Transport {
  return {
    mode: 'replay',
    answersAt: NOW,
    async fetch({ url }): Promise<TransportResponse> {
      const route = routes.find(([fragment]) => url.includes(fragment));
      if (!route) return { status: 404, headers: {}, body: '' };
      return { status: 200, headers: {}, body: JSON.stringify(route[1]) };
    },
  };
}

const ctx = (transport: Transport, asOf = NOW + 60_000): FetchContext => ({
  transport,
  asOf,
  candleLimit: 48,
  shared: new Map(),
});

const provenance = (venue: string, asOf = NOW) => ({
  venue,
  asOf,
  mode: 'replay' as const,
  estimated: false,
});

/** An asset with only the sections a test gives. */
const asset = (sections: Partial<Omit<AssetMarket, 'symbol'>>): AssetMarket => ({
  ...emptyAsset('ETH'),
  ...sections,
});

/**
 * Binance's `openInterestHist` rows, period 1h, oldest first, the last at NOW: `sumOpenInterest` in coins (both
 * documented as strings), `sumOpenInterestValue` in USDT at each hour's price, `timestamp` as a string as in the
 * documented example.
 */
const openInterestRows = (coinsAt: (hour: number) => number, priceAt: (hour: number) => number) =>
  Array.from({ length: 48 }, (_, hour): BinanceOpenInterestHist => ({
    symbol: 'ETHUSDT',
    sumOpenInterest: coinsAt(hour).toFixed(8),
    sumOpenInterestValue: (coinsAt(hour) * priceAt(hour)).toFixed(8),
    timestamp: String(NOW - (47 - hour) * HOUR),
  }));

const readOi = (openInterest: OpenInterest, priceChange24h: number) =>
  readDerivatives(
    asset({ openInterest: { value: openInterest, provenance: provenance('binance-usdm') } }),
    priceChange24h,
    null,
  );

describe('Binance USDⓈ-M open interest: coins valued at the latest price, as Bybit values its own', () => {
  it('constant coins while the price rises 10 %: the 24-hour change is 0, not the price move', () => {
    const rows = openInterestRows(
      () => 250_000,
      (hour) => 3000 * (1 + 0.1 * (hour / 47)),
    );
    const openInterest = normaliseOpenInterest(rows);
    expect(openInterest.valueUsd).toBe(Number(rows.at(-1)?.sumOpenInterestValue)); // Binance's own latest USD
    const reading = readOi(openInterest, 0.05).openInterest;
    expect(reading?.change24h).toBeCloseTo(0, 12);
    expect(reading?.reading).toBe('flat');
  });

  it("the audit's ETH day (coins +0.90 %, USD -2.28 %) reads flat, not deleveraging", () => {
    // Coins rose 0.90 % over the day while the USD value at each hour's price fell 2.28 %: the price fell 3.15 %.
    const priceChange = (1 - 0.0228) / 1.009 - 1;
    const rows = openInterestRows(
      (hour) => (hour <= 23 ? 1_000_000 : 1_009_000), // hour 23 is 24 hours before the last
      (hour) => (hour <= 23 ? 3000 : 3000 * (1 + priceChange)),
    );
    const reading = readOi(normaliseOpenInterest(rows), priceChange);
    expect(reading.openInterest?.change24h).toBeCloseTo(0.009, 9);
    expect(reading.openInterest?.reading).toBe('flat');
    expect(reading.state).not.toBe('deleveraging');
    expect(reading.evidence.join(' ')).toContain(
      'Open interest changed +0.90% over 24 hours while price changed -3.15%: little change',
    );
  });

  it('a row whose coins or USD value is not above zero refuses the section, naming venue and instrument', async () => {
    for (const [field, value] of [
      ['sumOpenInterestValue', '0'],
      ['sumOpenInterestValue', '-150570784.07809979'],
      ['sumOpenInterest', '0.00000000'],
    ] as const) {
      const rows = openInterestRows(
        () => 20_000,
        () => 3000,
      );
      rows[10] = { ...rows[10]!, [field]: value };
      const transport = transportOf([['/futures/data/openInterestHist', rows]]);
      const error = await binanceUsdmOpenInterest.fetch(['ETH'], ctx(transport)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SourceError);
      expect((error as Error).message).toMatch(
        new RegExp(
          `binance-usdm ETHUSDT open interest refused: .*${field} -?[\\d.e+]+ is not a positive number`,
        ),
      );
    }
  });
});

/** Binance's documented premium index (BTCUSDT "Mark Price" example values), its next settlement at `next`. */
const premiumIndex = (next: number): BinancePremiumIndex => ({
  symbol: 'BTCUSDT',
  markPrice: '11793.63104562',
  indexPrice: '11781.80495970',
  lastFundingRate: '0.00038246',
  nextFundingTime: next,
  time: next - 2 * HOUR,
});

/** Settled rates at these times (Binance "Get Funding Rate History", oldest first), each at `rate`. */
const fundingRows = (times: readonly number[], rate = '0.00010000'): BinanceFundingRate[] =>
  times.map((fundingTime) => ({ symbol: 'BTCUSDT', fundingRate: rate, fundingTime }));

/** Settlement times every `hours`, `count` of them, ending at `last`. */
const every = (hours: number, count: number, last: number): number[] =>
  Array.from({ length: count }, (_, i) => last - (count - 1 - i) * hours * HOUR);

describe('Binance USDⓈ-M funding interval: the running period, from the premium index', () => {
  const last = NOW - 2 * HOUR; // the last settlement L

  it('8-hourly history, next settlement L + 4 h: the contract moved to 4 h, the predicted rate is doubled', () => {
    const funding = normaliseFunding(premiumIndex(last + 4 * HOUR), fundingRows(every(8, 30, last)));
    expect(funding.intervalHours).toBe(4);
    expect(funding.rate8h).toBeCloseTo(2 * 0.00038246, 15);
    expect(funding.history8h.every((rate) => Math.abs(rate - 0.0001) < 1e-15)).toBe(true); // settled at 8 h
  });

  it('the same through the source, with millisecond jitter on the settlement times', async () => {
    const transport = transportOf([
      ['/fapi/v1/premiumIndex', premiumIndex(last + 4 * HOUR + 3)],
      ['/fapi/v1/fundingRate', fundingRows(every(8, 30, last).map((time, i) => time + (i % 3)))],
    ]);
    const answer = await binanceUsdmFunding.fetch(['BTC'], ctx(transport));
    expect(answer.get('BTC')?.value.intervalHours).toBe(4);
    expect(answer.get('BTC')?.value.rate8h).toBeCloseTo(2 * 0.00038246, 15);
  });

  it('a next settlement beyond 8 h of the history (the history lags) falls back to the spacing', () => {
    const funding = normaliseFunding(premiumIndex(last + 16 * HOUR), fundingRows(every(4, 30, last)));
    expect(funding.intervalHours).toBe(4);
  });
});

describe('settled rates per 8 h: a missing row is not a longer interval', () => {
  const perEight = (hours: number, dropped: number) => {
    const times = every(hours, 24, NOW).filter((_, i) => i !== dropped);
    return settledHistory(
      times.map((time) => ({ time, rate: 0.0001 })),
      hours,
    ).history8h;
  };

  it('hourly rows (Hyperliquid) with one dropped keep x8 for every row', () => {
    // Rows missing inside the history; a gap at either end has one neighbour and could be a change of schedule.
    for (const dropped of [2, 12, 21])
      expect(perEight(1, dropped).map((r) => r / 0.0001)).toEqual(Array(23).fill(8));
  });

  it('4-hourly rows with one dropped keep x2 for every row', () => {
    expect(perEight(4, 10).map((r) => r / 0.0001)).toEqual(Array(23).fill(2));
  });

  it('a change of schedule is not a missing row: 8 h rates stay x1, the 4 h ones after them x2', () => {
    const times = [...every(8, 5, NOW - 8 * HOUR), ...every(4, 4, NOW + 8 * HOUR)];
    const { history8h } = settledHistory(times.map((time) => ({ time, rate: 0.0001 })));
    expect(history8h.map((r) => Math.round(r / 0.0001))).toEqual([1, 1, 1, 1, 1, 2, 2, 2, 2]);
  });
});

describe('funding evidence: the days the settled rates span, across a change of interval', () => {
  /** A Binance contract at 8 h for `daysAt8` days, then at 4 h for `daysAt4`, up to `last`; rates near 0.01 %. */
  const history = (first: number, firstDays: number, second: number, secondDays: number, last: number) => {
    const later = every(second, (secondDays * 24) / second, last);
    const earlier = every(first, (firstDays * 24) / first, (later[0] ?? last) - second * HOUR);
    return [...earlier, ...later].map((fundingTime, i) => ({
      symbol: 'BTCUSDT',
      fundingRate: (
        ((i % 7) - 3) * 0.000002 +
        0.00005 * (i < earlier.length ? first / 8 : second / 8)
      ).toFixed(8),
      fundingTime,
    }));
  };
  const evidenceOf = (funding: Funding) =>
    readDerivatives(
      asset({ funding: { value: funding, provenance: provenance('binance-usdm') } }),
      null,
      null,
    ).evidence[0];

  it('8 h to 4 h ten days ago: 120 rates read as the last 30 days, not 20', () => {
    const last = NOW - 2 * HOUR;
    const funding = normaliseFunding(premiumIndex(last + 4 * HOUR), history(8, 20, 4, 10, last));
    expect(funding.history8h).toHaveLength(120);
    expect(readFunding(funding, 'binance-usdm').historyPoints).toBe(120);
    expect(evidenceOf(funding)).toContain('against the 120 settled rates of the last 30 days');
  });

  it('4 h to 8 h ten days ago: the window keeps all 150 rates of the 30 days (was the last 90, 20 days)', () => {
    const last = NOW - 2 * HOUR;
    const funding = normaliseFunding(premiumIndex(last + 8 * HOUR), history(4, 20, 8, 10, last));
    expect(funding.intervalHours).toBe(8);
    expect(readFunding(funding, 'binance-usdm').historyPoints).toBe(150);
    expect(evidenceOf(funding)).toContain('against the 150 settled rates of the last 30 days');
  });

  it('a history without times is still counted at the current interval', () => {
    const funding = normaliseFunding(premiumIndex(NOW + 6 * HOUR), history(8, 20, 8, 10, NOW - 2 * HOUR));
    const withoutTimes: Funding = { ...funding, historyTimes: undefined };
    expect(evidenceOf(withoutTimes)).toContain('against the 90 settled rates of the last 30 days');
    expect(
      readFunding({ ...withoutTimes, history8h: withoutTimes.history8h.slice(-30) }, 'v').historyDays,
    ).toBe(10);
  });
});

describe('leverage proxy: open interest against one venue’s spot volume, never an all-exchange aggregate', () => {
  const openInterest: OpenInterest = {
    valueUsd: 5e9,
    history: [
      { time: NOW - DAY, valueUsd: 5e9 },
      { time: NOW, valueUsd: 5e9 },
    ],
  };
  const withTicker = (ticker: Ticker24h, venue: string) =>
    readDerivatives(
      asset({
        ticker: { value: ticker, provenance: provenance(venue) },
        openInterest: { value: openInterest, provenance: provenance('binance-usdm') },
      }),
      ticker.change24h,
      ticker.quoteVolume24h,
    );

  it("CoinGecko's usd_24h_vol (every exchange's trades) gives no proxy, and a limitation says why", () => {
    // CoinGecko's documented `simple/price` entry: usd_24h_vol counts the coin's trades on all exchanges.
    const ticker = normaliseCoin({
      usd: 3000,
      usd_24h_vol: 2.5e10,
      usd_24h_change: 1.2,
      last_updated_at: NOW / 1000,
    });
    expect(ticker.volumeScope).toBe('all-exchanges');
    const reading = withTicker(ticker, 'coingecko');
    expect(reading.openInterest?.leverageProxy).toBeNull();
    expect(reading.evidence.join(' ')).not.toContain('spot volume');
    expect(reading.limitations).toContainEqual(
      expect.stringMatching(/^ETH: no leverage proxy this run: .*coingecko.*all exchanges/),
    );
  });

  it("one venue's volume gives the proxy, and the evidence names that venue", () => {
    const ticker: Ticker24h = { last: 3000, change24h: 0.012, quoteVolume24h: 1.6e8, bid: null, ask: null };
    const reading = withTicker(ticker, 'binance-spot');
    expect(reading.openInterest?.leverageProxy).toBeCloseTo(5e9 / 1.6e8, 12);
    expect(reading.evidence).toContain(
      // Labelled as every venue of the bodies is (this fixture is a replay).
      "Open interest equals 31.25 times the day's spot volume at binance-spot (replayed).",
    );
    expect(reading.limitations.join(' ')).not.toContain('leverage proxy');
  });
});

describe('OKX amounts that exist only above zero', () => {
  it('an open interest whose oiUsd is not above zero is refused, naming venue and instrument', async () => {
    for (const oiUsd of ['0', '-50000']) {
      // OKX "Get open interest": oi in contracts, oiCcy in coins, oiUsd in USD.
      const body = {
        code: '0',
        msg: '',
        data: [
          { instId: 'BTC-USDT-SWAP', instType: 'SWAP', oi: '5000', oiCcy: '50', oiUsd, ts: String(NOW) },
        ],
      };
      const error = await okxOpenInterest
        .fetch(['BTC'], ctx(transportOf([['/api/v5/public/open-interest', body]])))
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SourceError);
      expect((error as Error).message).toBe(
        `okx BTC-USDT-SWAP open interest refused: oiUsd ${Number(oiUsd)} is not a positive number`,
      );
    }
  });

  it('a liquidation order of a size or bankruptcy price not above zero refuses the day’s totals', async () => {
    for (const [field, value] of [
      ['sz', '0'],
      ['sz', '-3'],
      ['bkPx', '0'],
    ] as const) {
      // OKX "Get liquidation orders": sz in contracts, bkPx in USDT, newest first.
      const order = { bkLoss: '0', bkPx: '60000', ccy: '', posSide: 'short', side: 'buy', sz: '13' };
      const body = {
        code: '0',
        msg: '',
        data: [
          {
            instId: 'BTC-USDT-SWAP',
            uly: 'BTC-USDT',
            details: [
              { ...order, ts: String(NOW - HOUR) },
              { ...order, [field]: value, ts: String(NOW - 2 * HOUR) },
            ],
          },
        ],
      };
      const transport = transportOf([['/api/v5/public/liquidation-orders', body]]);
      const error = await okxLiquidations.fetch(['BTC'], ctx(transport)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SourceError);
      expect((error as Error).message).toBe(
        `okx BTC-USDT-SWAP liquidations refused: the order of ${new Date(NOW - 2 * HOUR).toISOString()}: ` +
          `${field} ${Number(value)} is not a positive number`,
      );
    }
  });
});
