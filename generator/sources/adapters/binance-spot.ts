// Binance spot: 24 h ticker, hourly klines and depth. The venue's facts, raw shapes as documented by Binance, pure
// normalisers into the market types, the sources the collector calls and the venue's descriptor.
import * as z from 'zod';
import type { Candle, OrderBook, Sourced, Ticker24h } from '../../market/types.ts';
import type { VenueDescriptor } from '../venue-descriptor.ts';
import {
  compiledOnFirstUse,
  DecimalString,
  parseEntries,
  positiveOrNull,
  SourceError,
  venueCalls,
} from './request.ts';
import { checkedBook, checkedCandles, refusedBecause, tickerProblem } from './price-checks.ts';
import { callTime, perSymbolSource, sourced, withReasons } from './source.ts';
import type { FetchContext, SectionSource } from './source.ts';
import type { VenueErrors } from './venue-errors.ts';

const VENUE = 'binance-spot';
const BASE_URL = 'https://api.binance.com';

/** Binance names a USDT market by concatenation: BTC -> BTCUSDT. */
export const binanceSymbol = (symbol: string): string => `${symbol}USDT`;

/**
 * Binance's errors: an HTTP 4xx with `{code: -1121, msg}` (`code` a number); -1003 is "too many requests" over 429,
 * and comes with its IP ban over 418 too (a refusal for the run, see venue-errors.ts).
 */
export const BINANCE_ERRORS: VenueErrors = {
  envelope: (body) =>
    typeof body.code === 'number' || (typeof body.code === 'string' && body.code !== '0')
      ? { code: String(body.code), message: String(body.msg ?? '') }
      : null,
  rateLimitCodes: ['-1003'],
};
const calls = venueCalls('Binance', BINANCE_ERRORS);
const HOUR_MS = 3_600_000;
/** Up to 20 symbols cost the least request weight per call. */
const TICKER_BATCH = 20;
const KLINES_MAX = 1000;
/** Binance's code for an unknown symbol. */
const INVALID_SYMBOL = '-1121';

// ---- raw shapes -------------------------------------------------------------------------------------------------

export const BinanceTicker24h = z.object({
  symbol: z.string(),
  priceChangePercent: DecimalString, // percent
  lastPrice: DecimalString,
  bidPrice: DecimalString,
  askPrice: DecimalString,
  volume: DecimalString, // base asset
  quoteVolume: DecimalString, // quote asset (USDT)
  openTime: z.number().int(),
  closeTime: z.number().int(),
});
export type BinanceTicker24h = z.infer<typeof BinanceTicker24h>;

/** [openTime, open, high, low, close, volume, closeTime, quoteVolume, trades, takerBuyBase, takerBuyQuote, ignore] */
export const BinanceKline = z
  .tuple([
    z.number().int(),
    DecimalString,
    DecimalString,
    DecimalString,
    DecimalString,
    DecimalString,
    z.number().int(),
    DecimalString,
    z.number().int(),
    DecimalString,
    DecimalString,
  ])
  .rest(z.unknown());
export type BinanceKline = z.infer<typeof BinanceKline>;

const BookLevel = z.tuple([DecimalString, DecimalString]);
export const BinanceDepth = z.object({
  lastUpdateId: z.number().int(),
  bids: z.array(BookLevel),
  asks: z.array(BookLevel),
});
export type BinanceDepth = z.infer<typeof BinanceDepth>;
const KLINE_ROWS = compiledOnFirstUse(z.array(BinanceKline));
const DEPTH_ROWS = compiledOnFirstUse(BinanceDepth);

// ---- normalisers --------------------------------------------------------------------------------------------------

/** USDT turnover is taken as USD (the stablecoin's peg). */
export function normaliseTicker(raw: BinanceTicker24h): Ticker24h {
  return {
    last: Number(raw.lastPrice),
    change24h: Number(raw.priceChangePercent) / 100,
    quoteVolume24h: Number(raw.quoteVolume),
    bid: positiveOrNull(raw.bidPrice),
    ask: positiveOrNull(raw.askPrice),
  };
}

/** Closed bars only (Binance's last row is the bar still forming at `asOf`), the newest `limit`, oldest first. */
export function normaliseKlines(rows: readonly BinanceKline[], asOf: number, limit: number): Candle[] {
  return rows
    .filter((row) => row[6] < asOf)
    .slice(-limit)
    .map((row) => ({
      openTime: row[0],
      open: Number(row[1]),
      high: Number(row[2]),
      low: Number(row[3]),
      close: Number(row[4]),
      volumeBase: Number(row[5]),
    }));
}

/**
 * An empty level (quantity 0, how Binance's depth streams say a level was emptied) holds nothing and is dropped; any
 * other level is kept as sent, for price-checks.ts to refuse a price or quantity below zero.
 */
export function normaliseDepth(raw: BinanceDepth): OrderBook {
  const levels = (side: ReadonlyArray<readonly [string, string]>): Array<[number, number]> =>
    side
      .map(([price, quantity]): [number, number] => [Number(price), Number(quantity)])
      .filter(([, quantity]) => quantity !== 0);
  return { bids: levels(raw.bids), asks: levels(raw.asks) };
}

// ---- sources ------------------------------------------------------------------------------------------------------

/**
 * Binance refuses the whole `symbols=[...]` call when one symbol is unknown (-1121, a delisted pair), so that answer
 * is split into one call per symbol. Rows are parsed one by one: an odd row costs its own asset only.
 */
async function tickerRows(symbols: readonly string[], context: FetchContext): Promise<Map<string, unknown>> {
  const list = encodeURIComponent(JSON.stringify(symbols.map(binanceSymbol)));
  const url = `${BASE_URL}/api/v3/ticker/24hr?symbols=${list}`;
  try {
    const rows = await calls.parsed(context, url, z.array(z.unknown()));
    const bySymbol = new Map(rows.map((row) => [(row as { symbol?: unknown } | null)?.symbol, row]));
    return new Map(symbols.map((symbol) => [symbol, bySymbol.get(binanceSymbol(symbol))]));
  } catch (error) {
    if (!(error instanceof SourceError && error.code === INVALID_SYMBOL && symbols.length > 1)) throw error;
    const alone = await Promise.all(
      symbols.map((symbol) => tickerRows([symbol], context).catch((e: unknown) => new Map([[symbol, e]]))),
    );
    return new Map(alone.flatMap((rows) => [...rows]));
  }
}

export const binanceSpotTicker: SectionSource<'ticker'> = {
  venue: VENUE,
  batchSize: TICKER_BATCH,
  async fetch(symbols, context) {
    const rows = await tickerRows(symbols, context);
    const failed = new Map<string, string>();
    const present: Array<readonly [string, unknown]> = [];
    for (const [symbol, row] of rows) {
      if (row instanceof Error) failed.set(symbol, row.message);
      else if (row !== undefined) present.push([symbol, row]);
    }
    const { good, bad } = parseEntries(BinanceTicker24h, present);
    const values = new Map<string, Sourced<Ticker24h>>();
    for (const [symbol, row] of good) {
      // A pair without trades answers a last price of "0": refused for its asset, the next venue is asked.
      const ticker = normaliseTicker(row);
      const problem = tickerProblem(ticker);
      if (problem === null) values.set(symbol, sourced(ticker, VENUE, row.closeTime, context));
      else bad.set(symbol, refusedBecause({ venue: VENUE, instrument: row.symbol }, 'ticker', problem));
    }
    return withReasons(values, new Map([...failed, ...bad]));
  },
};

export const binanceSpotCandles = perSymbolSource<'candles'>(VENUE, async (symbol, context) => {
  // One extra row: the last one is still forming and gets dropped.
  const limit = Math.min(KLINES_MAX, context.candleLimit + 1);
  const url = `${BASE_URL}/api/v3/klines?symbol=${binanceSymbol(symbol)}&interval=1h&limit=${limit}`;
  const rows = await calls.parsed(context, url, KLINE_ROWS);
  const origin = { venue: VENUE, instrument: binanceSymbol(symbol) };
  const candles = checkedCandles(origin, normaliseKlines(rows, context.asOf, context.candleLimit));
  const last = candles.at(-1);
  if (!last) throw new SourceError('no closed hourly bar in the response');
  return sourced(candles, VENUE, last.openTime + HOUR_MS, context);
});

export const binanceSpotBook = perSymbolSource<'book'>(VENUE, async (symbol, context) => {
  const url = `${BASE_URL}/api/v3/depth?symbol=${binanceSymbol(symbol)}&limit=100`;
  const raw = await calls.parsed(context, url, DEPTH_ROWS);
  // The depth snapshot carries no time of its own: it is as fresh as the call.
  const book = checkedBook({ venue: VENUE, instrument: binanceSymbol(symbol) }, normaliseDepth(raw));
  return sourced(book, VENUE, callTime(context), context);
});

export const BINANCE_SPOT: VenueDescriptor<'binance-spot'> = {
  id: VENUE,
  name: 'Binance',
  baseUrl: BASE_URL,
  method: 'GET',
  errors: BINANCE_ERRORS,
  instrument: binanceSymbol,
  // Deepest books and longest histories: first for every spot kind of data.
  serves: {
    candles: { source: binanceSpotCandles, rank: 1 },
    ticker: { source: binanceSpotTicker, rank: 1 },
    book: { source: binanceSpotBook, rank: 1 },
  },
};
