// Coinbase Exchange: 24 h stats (ticker), hourly candles and the level-2 book of the USD products. The venue's facts,
// raw shapes as documented by Coinbase, pure normalisers into the market types, the sources and the descriptor.
import * as z from 'zod';
import type { Candle, OrderBook, Ticker24h } from '../../market/types.ts';
import type { VenueDescriptor } from '../venue-descriptor.ts';
import { compiledOnFirstUse, DecimalString, SourceError, venueCalls } from './request.ts';
import { checkedBook, checkedCandles, checkedTicker } from './price-checks.ts';
import { callTime, perSymbolSource, sourced } from './source.ts';
import type { VenueErrors } from './venue-errors.ts';

const VENUE = 'coinbase';
const BASE_URL = 'https://api.exchange.coinbase.com';

/** Coinbase Exchange trades the tracked assets against USD: BTC -> BTC-USD. */
export const coinbaseProduct = (symbol: string): string => `${symbol}-USD`;

/** Errors come as `{message}` with the HTTP status ("NotFound" 404, "Public rate limit exceeded" 429). */
const ERRORS: VenueErrors = {
  envelope: (body) => (typeof body.message === 'string' ? { code: null, message: body.message } : null),
  rateLimitCodes: [],
};
const calls = venueCalls('Coinbase', ERRORS);
const HOUR_MS = 3_600_000;
/** Coinbase rejects a candle request that would span more than 300 buckets. */
const CANDLES_PER_PAGE = 300;

// ---- raw shapes -------------------------------------------------------------------------------------------------

/** `/products/{id}/stats`: a rolling 24 h window; `volume` in the base asset, prices in USD. */
export const CoinbaseStats = z.object({
  open: DecimalString,
  high: DecimalString,
  low: DecimalString,
  last: DecimalString,
  volume: DecimalString,
});
export type CoinbaseStats = z.infer<typeof CoinbaseStats>;

/**
 * `/products/{id}/candles`: [time (s), low, high, open, close, volume] as numbers, newest first. Note the order.
 * Impossible bars (a low of zero, a high under the low) pass the shape and are refused in price-checks.ts.
 */
export const CoinbaseCandle = z.tuple([
  z.number().int().nonnegative(),
  z.number(),
  z.number(),
  z.number(),
  z.number(),
  z.number(),
]);
export type CoinbaseCandle = z.infer<typeof CoinbaseCandle>;
const CANDLE_ROWS = compiledOnFirstUse(z.array(CoinbaseCandle));

/** `/products/{id}/book?level=2`: [price, size, number of orders], best first. */
const BookLevel = z.tuple([DecimalString, DecimalString, z.number().int()]);
export const CoinbaseBook = z.object({ bids: z.array(BookLevel), asks: z.array(BookLevel) });
export type CoinbaseBook = z.infer<typeof CoinbaseBook>;
/** A product in auction mode answers with indicative prices and its `auction_status` instead of bids and asks. */
const CoinbaseAuction = z.object({ auction_status: z.string() });
const CoinbaseBookAnswer = z.union([CoinbaseBook, CoinbaseAuction]);
const BOOK_ROWS = compiledOnFirstUse(CoinbaseBookAnswer);

// ---- normalisers --------------------------------------------------------------------------------------------------

/**
 * Coinbase gives no quote volume: base volume x last price stands in for it; bid and ask are not in the stats. The
 * change needs a positive open; the last price is checked with every venue's (price-checks.ts).
 */
export function normaliseStats(raw: CoinbaseStats): Ticker24h {
  const [open, last] = [Number(raw.open), Number(raw.last)];
  if (!(open > 0)) throw new SourceError(`stats without a positive 24 h open price (open ${raw.open})`);
  return {
    last,
    change24h: last / open - 1,
    quoteVolume24h: Number(raw.volume) * last,
    bid: null,
    ask: null,
  };
}

/** Hourly bars closed before `asOf`, seconds turned into ms, duplicates (page overlaps) dropped, oldest first. */
export function normaliseCandles(rows: readonly CoinbaseCandle[], asOf: number, limit: number): Candle[] {
  const byTime = new Map<number, Candle>();
  for (const [time, low, high, open, close, volume] of rows) {
    const openTime = time * 1000;
    if (openTime + HOUR_MS > asOf) continue; // still forming
    byTime.set(openTime, { openTime, open, high, low, close, volumeBase: volume });
  }
  return [...byTime.values()].sort((a, b) => a.openTime - b.openTime).slice(-limit);
}

/**
 * An empty level (size 0, how Coinbase's level-2 feed says a level was emptied) holds nothing and is dropped; any
 * other level is kept as sent, for price-checks.ts to refuse a price or size below zero.
 */
export function normaliseBook(raw: CoinbaseBook): OrderBook {
  const levels = (side: CoinbaseBook['bids']): Array<[number, number]> =>
    side
      .map(([price, size]): [number, number] => [Number(price), Number(size)])
      .filter(([, size]) => size !== 0);
  return { bids: levels(raw.bids), asks: levels(raw.asks) };
}

// ---- sources ------------------------------------------------------------------------------------------------------

export const coinbaseTicker = perSymbolSource<'ticker'>(VENUE, async (symbol, context) => {
  const url = `${BASE_URL}/products/${coinbaseProduct(symbol)}/stats`;
  const raw = await calls.parsed(context, url, CoinbaseStats);
  const ticker = checkedTicker({ venue: VENUE, instrument: coinbaseProduct(symbol) }, normaliseStats(raw));
  // The stats carry no time of their own: they are as fresh as the call.
  return sourced(ticker, VENUE, callTime(context), context);
});

/** Pages of 300 hourly buckets ending at the last closed hour, newest page first. */
export function candlePages(asOf: number, limit: number): Array<{ start: string; end: string }> {
  const lastOpen = Math.floor(asOf / HOUR_MS) * HOUR_MS - HOUR_MS;
  const pages: Array<{ start: string; end: string }> = [];
  for (let done = 0; done < limit; done += CANDLES_PER_PAGE) {
    const end = lastOpen - done * HOUR_MS;
    const start = end - (Math.min(CANDLES_PER_PAGE, limit - done) - 1) * HOUR_MS;
    pages.push({ start: new Date(start).toISOString(), end: new Date(end).toISOString() });
  }
  return pages;
}

export const coinbaseCandles = perSymbolSource<'candles'>(VENUE, async (symbol, context) => {
  const base = `${BASE_URL}/products/${coinbaseProduct(symbol)}/candles?granularity=3600`;
  const rows: CoinbaseCandle[] = [];
  for (const page of candlePages(context.asOf, context.candleLimit)) {
    const url = `${base}&start=${encodeURIComponent(page.start)}&end=${encodeURIComponent(page.end)}`;
    const pageRows = await calls.parsed(context, url, CANDLE_ROWS);
    rows.push(...pageRows);
    if (pageRows.length === 0) break; // nothing older: the product is younger than the window
  }
  const origin = { venue: VENUE, instrument: coinbaseProduct(symbol) };
  const candles = checkedCandles(origin, normaliseCandles(rows, context.asOf, context.candleLimit));
  const last = candles.at(-1);
  if (!last) throw new SourceError('no closed hourly bar in the response');
  return sourced(candles, VENUE, last.openTime + HOUR_MS, context);
});

export const coinbaseBook = perSymbolSource<'book'>(VENUE, async (symbol, context) => {
  const url = `${BASE_URL}/products/${coinbaseProduct(symbol)}/book?level=2`;
  const raw = await calls.parsed(context, url, BOOK_ROWS);
  // Indicative auction prices are not a book anyone can trade against: not available, never an empty book.
  if (!('bids' in raw)) {
    throw new SourceError(
      `${coinbaseProduct(symbol)} is in auction mode (${raw.auction_status}): no order book`,
    );
  }
  const book = checkedBook({ venue: VENUE, instrument: coinbaseProduct(symbol) }, normaliseBook(raw));
  return sourced(book, VENUE, callTime(context), context);
});

export const COINBASE: VenueDescriptor<'coinbase'> = {
  id: VENUE,
  name: 'Coinbase',
  baseUrl: BASE_URL,
  method: 'GET',
  requestsPerSecond: 8,
  errors: ERRORS,
  instrument: coinbaseProduct,
  // USD books, second to Binance's depth.
  serves: {
    candles: { source: coinbaseCandles, rank: 2 },
    ticker: { source: coinbaseTicker, rank: 2 },
    book: { source: coinbaseBook, rank: 2 },
  },
};
