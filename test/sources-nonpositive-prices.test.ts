// Zero, negative and impossible prices from a venue are refused for their asset and section, naming the venue, the
// instrument and why, so the plan's next venue is asked and the run records an issue. Before, Binance's "0" last
// price (a pair without trades) went through: the run published `price: null` as verified, status ok, no issue.
// Answers are the venues' documented shapes (see test/fixtures/venues/README.md) with the prices altered.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runPipeline } from '../generator/pipeline.ts';
import {
  binanceSpotBook,
  binanceSpotCandles,
  binanceSpotTicker,
} from '../generator/sources/adapters/binance-spot.ts';
import { coinbaseBook, coinbaseCandles, coinbaseTicker } from '../generator/sources/adapters/coinbase.ts';
import { coingeckoTicker } from '../generator/sources/adapters/coingecko.ts';
import { krakenCandles, krakenTicker } from '../generator/sources/adapters/kraken.ts';
import { buildPlan, SIMULATOR_ORDER, SOURCE_CATALOG } from '../generator/sources/adapters/plan.ts';
import { SourceError } from '../generator/sources/adapters/request.ts';
import type { FetchContext, SectionName, SectionSource } from '../generator/sources/adapters/source.ts';
import { collectMarket } from '../generator/sources/collect.ts';
import { createSimulatedTransport } from '../generator/sources/simulator/transport.ts';
import type { Transport, TransportResponse } from '../generator/sources/transport.ts';
import { simulatedRun } from './helpers/simulated-run.ts';

const HOUR_MS = 3_600_000;
const AS_OF = Date.UTC(2026, 4, 2, 9, 41, 0);
/** The open time of the last closed hourly bar at AS_OF, and of the bar 24 h before the current one. */
const LAST_OPEN = Math.floor(AS_OF / HOUR_MS) * HOUR_MS - HOUR_MS;
const DAY_AGO = LAST_OPEN + HOUR_MS - 24 * HOUR_MS;

/** Answers by URL fragment (first match wins); anything else is a 404. */
function transportOf(routes: Array<[fragment: string, body: unknown]>): Transport {
  return {
    mode: 'replay',
    answersAt: AS_OF,
    async fetch({ url }): Promise<TransportResponse> {
      const route = routes.find(([fragment]) => url.includes(fragment));
      if (!route) return { status: 404, headers: {}, body: '' };
      return { status: 200, headers: {}, body: JSON.stringify(route[1]) };
    },
  };
}

const ctx = (transport: Transport): FetchContext => ({
  transport,
  asOf: AS_OF,
  candleLimit: 3,
  shared: new Map(),
});

/** The reason a source gives for leaving `symbol` out: its thrown SourceError, or its batch answer's reason. */
async function refusal<S extends SectionName>(
  source: SectionSource<S>,
  symbol: string,
  context: FetchContext,
): Promise<string> {
  const outcome = await source.fetch([symbol], context).then(
    (answer) => answer,
    (error: unknown) => error,
  );
  if (outcome instanceof Error) {
    expect(outcome).toBeInstanceOf(SourceError);
    return outcome.message;
  }
  const answer = outcome as Awaited<ReturnType<SectionSource<S>['fetch']>>;
  expect(answer.has(symbol)).toBe(false);
  const reason = answer.reasons?.get(symbol);
  expect(reason).toBeTypeOf('string');
  return reason ?? '';
}

/** One bar's [open, high, low, close, volume]. */
type Bar = [open: number, high: number, low: number, close: number, volume: number];
const GOOD_BAR: Bar = [100, 110, 95, 105, 12];
/** Three closed hourly bars as [openTime, ...Bar], the last at the last closed hour; `middle` is the second. */
const bars = (middle: Bar): Array<[number, ...Bar]> =>
  [GOOD_BAR, middle, GOOD_BAR].map((bar, i) => [LAST_OPEN - (2 - i) * HOUR_MS, ...bar]);
const NEGATIVE_LOW: Bar = [100, 110, -5, 105, 12];
const HIGH_UNDER_LOW: Bar = [100, 90, 95, 100, 12];
const HIGH_UNDER_CLOSE: Bar = [100, 104, 95, 105, 12];
const NEGATIVE_VOLUME: Bar = [100, 110, 95, 105, -1];

// ---- venue answers in their documented shapes ---------------------------------------------------------------------

const binanceTicker = (lastPrice: string) => [
  {
    symbol: 'BTCUSDT',
    priceChange: '-94.99999800',
    priceChangePercent: '-95.960',
    weightedAvgPrice: '0.29628482',
    prevClosePrice: '0.10002000',
    lastPrice,
    lastQty: '200.00000000',
    bidPrice: '4.00000000',
    bidQty: '100.00000000',
    askPrice: '4.00000200',
    askQty: '100.00000000',
    openPrice: '99.00000000',
    highPrice: '100.00000000',
    lowPrice: '0.10000000',
    volume: '8913.30000000',
    quoteVolume: '15.30000000',
    openTime: AS_OF - 24 * HOUR_MS,
    closeTime: AS_OF - 1_000,
    firstId: 28385,
    lastId: 28460,
    count: 76,
  },
];
const binanceKlines = (middle: Bar) =>
  bars(middle)
    .map(([time, open, high, low, close, volume]) => [
      time,
      String(open),
      String(high),
      String(low),
      String(close),
      String(volume),
      time + HOUR_MS - 1,
      '1000.0',
      10,
      '5.0',
      '500.0',
      '0',
    ])
    // Binance's last row is the bar still forming.
    .concat([[LAST_OPEN + HOUR_MS, '105', '106', '104', '105', '1', AS_OF + HOUR_MS, '1', 1, '1', '1', '0']]);
const binanceDepth = (bestBid: [string, string]) => ({
  lastUpdateId: 1027024,
  bids: [bestBid, ['99.00000000', '2.00000000']],
  asks: [
    ['101.00000000', '1.00000000'],
    ['102.00000000', '3.00000000'],
  ],
});

const coinbaseStats = (last: string) => ({
  open: '100.00',
  high: '110.00',
  low: '90.00',
  last,
  volume: '1234.5',
  volume_30day: '40000.1',
});
/** [time (s), low, high, open, close, volume], newest first. */
const coinbaseCandleRows = (middle: Bar) =>
  bars(middle)
    .map(([time, open, high, low, close, volume]) => [time / 1000, low, high, open, close, volume])
    .reverse();
const coinbaseLevelTwo = (bestBid: [string, string]) => ({
  bids: [
    [...bestBid, 3],
    ['99.00', '2.0', 1],
  ],
  asks: [
    ['101.00', '1.0', 2],
    ['102.00', '3.0', 1],
  ],
  sequence: 3,
  time: new Date(AS_OF).toISOString(),
});

const krakenTickerAnswer = (btcLast: string) => ({
  error: [],
  result: {
    XXBTZUSD: {
      a: ['100010.0', '1', '1.000'],
      b: ['100000.0', '2', '2.000'],
      c: [btcLast, '0.01'],
      v: ['10', '200'],
      p: ['100000.0', '99000.0'],
      t: [10, 200],
      l: ['97000.0', '97000.0'],
      h: ['101000.0', '101000.0'],
      o: '98000.0',
    },
    SOLUSD: {
      a: ['150.1', '1', '1.000'],
      b: ['150.0', '1', '1.000'],
      c: ['150.05', '2'],
      v: ['10', '20'],
      p: ['150', '149'],
      t: [5, 20],
      l: ['140', '140'],
      h: ['155', '155'],
      o: '148',
    },
  },
});
/** Hourly OHLC [time (s), open, high, low, close, vwap, volume, count] for both pairs, the bar of 24 h ago first. */
const krakenOhlc = (middle: Bar) => {
  const rows = [[DAY_AGO, ...GOOD_BAR] as [number, ...Bar], ...bars(middle)].map(
    ([time, open, high, low, close, volume]) => [
      time / 1000,
      String(open),
      String(high),
      String(low),
      String(close),
      String(close),
      String(volume),
      7,
    ],
  );
  return { error: [], result: { XXBTZUSD: rows, SOLUSD: rows, last: LAST_OPEN / 1000 } };
};

const coingeckoPrice = (usd: number) => ({
  bitcoin: { usd, usd_24h_vol: 3.0e10, usd_24h_change: 1.5, last_updated_at: Math.floor(AS_OF / 1000) - 60 },
});

// ---- tests ----------------------------------------------------------------------------------------------------------

describe('a ticker whose last price is not positive', () => {
  it.each(['0', '-5'])(
    'is refused at Binance spot (lastPrice "%s"), naming the pair and the reason',
    async (last) => {
      const context = ctx(transportOf([['/api/v3/ticker/24hr', binanceTicker(last)]]));
      expect(await refusal(binanceSpotTicker, 'BTC', context)).toBe(
        `binance-spot BTCUSDT ticker refused: last price ${last} is not a positive number`,
      );
      // The same answer with a price goes through (the refusal is the price's, not the shape's).
      const fine = ctx(transportOf([['/api/v3/ticker/24hr', binanceTicker('4.00000200')]]));
      expect((await binanceSpotTicker.fetch(['BTC'], fine)).get('BTC')?.value.last).toBe(4.000002);
    },
  );

  it.each(['0', '-5'])(
    'is refused at Coinbase (last "%s"), naming the product and the reason',
    async (last) => {
      const context = ctx(transportOf([['/products/BTC-USD/stats', coinbaseStats(last)]]));
      expect(await refusal(coinbaseTicker, 'BTC', context)).toBe(
        `coinbase BTC-USD ticker refused: last price ${last} is not a positive number`,
      );
      const fine = ctx(transportOf([['/products/BTC-USD/stats', coinbaseStats('105.00')]]));
      expect((await coinbaseTicker.fetch(['BTC'], fine)).get('BTC')?.value.last).toBe(105);
    },
  );

  it.each(['0', '-5'])(
    'is refused at Kraken (last "%s") for its own pair: the other pair of the batch is still served',
    async (last) => {
      const context = ctx(
        transportOf([
          ['/Ticker', krakenTickerAnswer(last)],
          ['/OHLC', krakenOhlc(GOOD_BAR)],
        ]),
      );
      const answer = await krakenTicker.fetch(['BTC', 'SOL'], context);
      expect(answer.has('BTC')).toBe(false);
      expect(answer.reasons?.get('BTC')).toBe(
        `kraken XBTUSD ticker refused: last price ${last} is not a positive number`,
      );
      expect(answer.get('SOL')?.value.last).toBe(150.05);
    },
  );

  it.each([0, -5])('is refused at CoinGecko (usd %s), naming the coin and the reason', async (usd) => {
    const context = ctx(transportOf([['/simple/price', coingeckoPrice(usd)]]));
    expect(await refusal(coingeckoTicker, 'BTC', context)).toBe(
      `coingecko bitcoin ticker refused: last price ${usd} is not a positive number`,
    );
  });
});

describe('impossible hourly bars refuse the candle section', () => {
  const cases: Array<[string, Bar, RegExp]> = [
    [
      'a negative low',
      NEGATIVE_LOW,
      /a price is not a positive number \(open 100, high 110, low -5, close 105\)/,
    ],
    ['a high under the low', HIGH_UNDER_LOW, /low 95 and high 90 do not hold open 100 and close 100/],
    ['a high under the close', HIGH_UNDER_CLOSE, /low 95 and high 104 do not hold open 100 and close 105/],
    ['a negative volume', NEGATIVE_VOLUME, /volume -1 is not a number of zero or more/],
  ];
  const middleBar = new Date(LAST_OPEN - HOUR_MS).toISOString();

  it.each(cases)('at Binance spot: %s', async (_name, bar, reason) => {
    const message = await refusal(
      binanceSpotCandles,
      'BTC',
      ctx(transportOf([['/api/v3/klines', binanceKlines(bar)]])),
    );
    expect(message).toMatch(
      `binance-spot BTCUSDT candles refused: 1 of 3 hourly bars impossible; the bar of ${middleBar}`,
    );
    expect(message).toMatch(reason);
  });

  it.each(cases)('at Coinbase: %s', async (_name, bar, reason) => {
    const message = await refusal(
      coinbaseCandles,
      'BTC',
      ctx(transportOf([['/candles', coinbaseCandleRows(bar)]])),
    );
    expect(message).toMatch(
      `coinbase BTC-USD candles refused: 1 of 3 hourly bars impossible; the bar of ${middleBar}`,
    );
    expect(message).toMatch(reason);
  });

  it.each(cases)('at Kraken: %s', async (_name, bar, reason) => {
    const message = await refusal(krakenCandles, 'BTC', ctx(transportOf([['/OHLC', krakenOhlc(bar)]])));
    expect(message).toMatch(
      `kraken XBTUSD candles refused: 1 of 3 hourly bars impossible; the bar of ${middleBar}`,
    );
    expect(message).toMatch(reason);
  });

  it('keeps possible bars, a flat hour without trades included', async () => {
    const flat: Bar = [100, 100, 100, 100, 0];
    const candles = await binanceSpotCandles.fetch(
      ['BTC'],
      ctx(transportOf([['/api/v3/klines', binanceKlines(flat)]])),
    );
    expect(candles.get('BTC')?.value.map((bar) => bar.low)).toEqual([95, 100, 95]);
    const coinbase = await coinbaseCandles.fetch(
      ['BTC'],
      ctx(transportOf([['/candles', coinbaseCandleRows(flat)]])),
    );
    expect(coinbase.get('BTC')?.value).toHaveLength(3);
  });
});

describe('a book level of a price not above zero or a negative size refuses the book', () => {
  it.each([
    [['0.00000000', '1.00000000'], /bids level 1: price 0 is not a positive number/],
    [['-1.00000000', '1.00000000'], /bids level 1: price -1 is not a positive number/],
    [['100.00000000', '-1.00000000'], /bids level 1: size -1 is not a positive number/],
  ] as Array<[[string, string], RegExp]>)('at Binance spot: %j', async (level, reason) => {
    const message = await refusal(
      binanceSpotBook,
      'BTC',
      ctx(transportOf([['/api/v3/depth', binanceDepth(level)]])),
    );
    expect(message).toMatch(/^binance-spot BTCUSDT book refused: /);
    expect(message).toMatch(reason);
  });

  it.each([
    [['0.00', '1.0'], /bids level 1: price 0 is not a positive number/],
    [['100.00', '-2.0'], /bids level 1: size -2 is not a positive number/],
  ] as Array<[[string, string], RegExp]>)('at Coinbase: %j', async (level, reason) => {
    const message = await refusal(
      coinbaseBook,
      'BTC',
      ctx(transportOf([['/book', coinbaseLevelTwo(level)]])),
    );
    expect(message).toMatch(/^coinbase BTC-USD book refused: /);
    expect(message).toMatch(reason);
  });

  it('serves a book of positive levels as sent, an empty level (size 0) dropped', async () => {
    const answer = await binanceSpotBook.fetch(
      ['BTC'],
      ctx(transportOf([['/api/v3/depth', binanceDepth(['100.00000000', '1.00000000'])]])),
    );
    expect(answer.get('BTC')?.value.bids).toEqual([
      [100, 1],
      [99, 2],
    ]);
    const emptied = await coinbaseBook.fetch(
      ['BTC'],
      ctx(transportOf([['/book', coinbaseLevelTwo(['100.00', '0'])]])),
    );
    expect(emptied.get('BTC')?.value.bids).toEqual([[99, 2]]);
  });
});

it('every venue serving tickers, candles or books is covered above', () => {
  // A venue added to these sections needs its own cases here.
  expect(Object.keys(SOURCE_CATALOG.ticker).sort()).toEqual([
    'binance-spot',
    'coinbase',
    'coingecko',
    'kraken',
  ]);
  expect(Object.keys(SOURCE_CATALOG.candles).sort()).toEqual(['binance-spot', 'coinbase', 'kraken']);
  expect(Object.keys(SOURCE_CATALOG.book).sort()).toEqual(['binance-spot', 'coinbase']);
});

describe('a run whose only ticker venue answers a zero price', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'emi-nonpositive-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** The simulator, with Binance spot's 24 h ticker answering `lastPrice` for BTCUSDT. */
  const zeroPriced = (lastPrice: string, inner: Transport): Transport => ({
    mode: inner.mode,
    answersAt: inner.answersAt,
    async fetch(request, signal) {
      const response = await inner.fetch(request, signal);
      if (!request.url.includes('/api/v3/ticker/24hr')) return response;
      const rows = JSON.parse(response.body) as Array<Record<string, unknown>>;
      const altered = rows.map((row) => (row.symbol === 'BTCUSDT' ? { ...row, lastPrice } : row));
      return { status: response.status, headers: response.headers, body: JSON.stringify(altered) };
    },
  });

  it('records an issue for BTC and is degraded, not ok with no issue and a null price', async () => {
    const report = await runPipeline(
      simulatedRun(dir, AS_OF, {
        symbols: ['BTC', 'ETH'],
        now: () => AS_OF + 1_000,
        collector: (request) =>
          collectMarket({
            transport: zeroPriced('0', createSimulatedTransport({ seed: request.seed, asOf: request.asOf })),
            symbols: request.symbols,
            asOf: request.asOf,
            seed: request.seed,
            candleLimit: 48,
            plan: buildPlan(SIMULATOR_ORDER),
          }),
      }),
    );
    expect(report.error).toBeNull();
    expect(report.status).toBe('degraded');
    expect(report.issues).toEqual([
      {
        venue: 'binance-spot',
        symbol: 'BTC',
        section: 'ticker',
        message: 'binance-spot BTCUSDT ticker refused: last price 0 is not a positive number',
      },
    ]);
    const brain = JSON.parse(await readFile(join(dir, 'site', 'api', 'main-brain.php'), 'utf8')) as {
      coins: Record<string, { price: number | null; data_status: string }>;
    };
    // BTC is read from its closed bars, and says some evidence is missing.
    expect(brain.coins.BTC?.data_status).toBe('partial');
    expect(brain.coins.BTC?.price).toBeGreaterThan(0);
    expect(brain.coins.ETH?.price).toBeGreaterThan(0);
  });
});
