// Kraken: the ticker of the USD pairs (one call for all) and hourly OHLC. Kraken renames pairs in its answers
// (XBTUSD -> XXBTZUSD), wraps everything in {error, result} and sends its last OHLC row while it is still forming.
import * as z from 'zod';
import type { Candle, Sourced, Ticker24h } from '../../market/types.ts';
import type { VenueDescriptor } from '../venue-descriptor.ts';
import { compiledOnFirstUse, DecimalString, positiveOrNull, SourceError, venueCalls } from './request.ts';
import { checkedCandles, checkedTicker } from './price-checks.ts';
import { callTime, perSymbolSource, sourced, withReasons } from './source.ts';
import type { FetchContext, SectionSource } from './source.ts';
import type { VenueErrors } from './venue-errors.ts';

const VENUE = 'kraken';
const BASE_URL = 'https://api.kraken.com';

/** Kraken calls bitcoin XBT: BTC -> XBTUSD. */
export const krakenPair = (symbol: string): string => `${symbol === 'BTC' ? 'XBT' : symbol}USD`;

/** Kraken answers older pairs under their legacy names (XXBTZUSD); newer ones keep the name asked for (SOLUSD). */
const KRAKEN_LEGACY_PAIRS: Readonly<Record<string, string>> = {
  BTC: 'XXBTZUSD',
  ETH: 'XETHZUSD',
  XRP: 'XXRPZUSD',
  XLM: 'XXLMZUSD',
};

/** The keys under which Kraken may answer a symbol's USD pair, most likely first. */
export const krakenResultKeys = (symbol: string): string[] => {
  const pair = krakenPair(symbol);
  const legacy = KRAKEN_LEGACY_PAIRS[symbol];
  return legacy ? [legacy, pair] : [pair];
};

/** `{error: ["EQuery:Unknown asset pair"], result}`, usually over HTTP 200; rate limits are worded, not coded. */
const ERRORS: VenueErrors = {
  envelope: (body) =>
    Array.isArray(body.error) && body.error.length > 0
      ? { code: String(body.error[0]), message: body.error.map(String).join('; ') }
      : null,
  rateLimitCodes: [],
};
const calls = venueCalls('Kraken', ERRORS);
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
/** Kraken serves at most the 720 most recent bars of an interval. */
const OHLC_MAX = 720;

// ---- raw shapes -------------------------------------------------------------------------------------------------

const envelope = <T extends z.ZodType>(result: T) =>
  z.object({ error: z.array(z.string()), result: result.optional() });

/** Ticker of one pair: a/b [price, whole lot volume, lot volume], c [price, lot volume], v/p [today, last 24 h]. */
export const KrakenTickerPair = z.object({
  a: z.tuple([DecimalString, DecimalString, DecimalString]),
  b: z.tuple([DecimalString, DecimalString, DecimalString]),
  c: z.tuple([DecimalString, DecimalString]),
  v: z.tuple([DecimalString, DecimalString]), // base volume
  p: z.tuple([DecimalString, DecimalString]), // volume-weighted average price
  o: DecimalString, // today's open (since 00:00 UTC), not 24 h ago
});
export type KrakenTickerPair = z.infer<typeof KrakenTickerPair>;
/** Pairs are parsed one by one: one odd pair costs its own asset only. */
export const KrakenTicker = envelope(z.record(z.string(), z.unknown()));

/** [time (s), open, high, low, close, vwap, volume, count]. */
export const KrakenOhlcRow = z.tuple([
  z.number().int().nonnegative(),
  DecimalString,
  DecimalString,
  DecimalString,
  DecimalString,
  DecimalString,
  DecimalString,
  z.number().int(),
]);
export type KrakenOhlcRow = z.infer<typeof KrakenOhlcRow>;
/** The result holds one pair key (renamed) and `last`, the id to pass as `since` for the next increment. */
export const KrakenOhlc = envelope(z.record(z.string(), z.union([z.array(KrakenOhlcRow), z.number()])));
const OHLC_ROWS = compiledOnFirstUse(KrakenOhlc);

// ---- normalisers --------------------------------------------------------------------------------------------------

/** Kraken reports failures inside its envelope ("EQuery:Unknown asset pair"), over HTTP 200. */
function unwrap<T>(raw: { error: string[]; result?: T }): T {
  const [first] = raw.error;
  if (first !== undefined) throw calls.envelopeFailure(first, raw.error.join('; '));
  if (raw.result === undefined) throw new SourceError('Kraken answer without a result');
  return raw.result;
}

const UNKNOWN_PAIR = 'EQuery:Unknown asset pair';

/** The entry of a symbol's pair under whichever name Kraken answered with. */
export function pairEntry<T>(result: Readonly<Record<string, T>>, symbol: string): T | undefined {
  for (const key of krakenResultKeys(symbol)) if (result[key] !== undefined) return result[key];
  return undefined;
}

/** Hourly bars closed before `asOf`, seconds turned into ms, oldest first (Kraken's last row is still forming). */
export function normaliseOhlc(rows: readonly KrakenOhlcRow[], asOf: number, limit: number): Candle[] {
  return rows
    .map((row) => ({
      openTime: row[0] * 1000,
      open: Number(row[1]),
      high: Number(row[2]),
      low: Number(row[3]),
      close: Number(row[4]),
      volumeBase: Number(row[6]),
    }))
    .filter((candle) => candle.openTime + HOUR_MS <= asOf)
    .sort((a, b) => a.openTime - b.openTime)
    .slice(-limit);
}

/**
 * Kraken's ticker has no 24 h change (its `o` is the UTC-midnight open), so the change is read against the open of
 * the hourly bar that began 24 h before the last one; the 24 h quote volume is volume x volume-weighted price. The
 * change needs a positive open; the last price is checked with every venue's (price-checks.ts).
 */
export function normaliseTicker(raw: KrakenTickerPair, open24h: number): Ticker24h {
  const last = Number(raw.c[0]);
  if (!(open24h > 0)) throw new SourceError(`ticker without a positive 24 h open price (open ${open24h})`);
  return {
    last,
    change24h: last / open24h - 1,
    quoteVolume24h: Number(raw.v[1]) * Number(raw.p[1]),
    bid: positiveOrNull(raw.b[0]),
    ask: positiveOrNull(raw.a[0]),
  };
}

// ---- sources ------------------------------------------------------------------------------------------------------

async function fetchOhlc(
  symbol: string,
  since: number | null,
  context: FetchContext,
): Promise<KrakenOhlcRow[]> {
  const url =
    `${BASE_URL}/0/public/OHLC?pair=${krakenPair(symbol)}&interval=60` +
    (since === null ? '' : `&since=${Math.floor(since / 1000)}`);
  const result = unwrap(await calls.parsed(context, url, OHLC_ROWS));
  const rows = pairEntry(result, symbol);
  if (!Array.isArray(rows)) throw new SourceError(`OHLC answer without the pair ${krakenPair(symbol)}`);
  return rows;
}

/**
 * One Ticker call for the batch. Kraken fails the whole call when one pair is unknown (a delisted or renamed
 * symbol), so that answer is split into one call per pair: the unknown one fails alone.
 */
async function tickerEntries(
  symbols: readonly string[],
  context: FetchContext,
): Promise<Map<string, unknown>> {
  const url = `${BASE_URL}/0/public/Ticker?pair=${symbols.map(krakenPair).join(',')}`;
  try {
    const result = unwrap(await calls.parsed(context, url, KrakenTicker));
    return new Map(symbols.map((symbol) => [symbol, pairEntry(result, symbol)]));
  } catch (error) {
    if (!(error instanceof SourceError && error.code === UNKNOWN_PAIR && symbols.length > 1)) throw error;
    const alone = await Promise.all(
      symbols.map((symbol) => tickerEntries([symbol], context).catch((e: unknown) => new Map([[symbol, e]]))),
    );
    return new Map(alone.flatMap((entries) => [...entries]));
  }
}

export const krakenTicker: SectionSource<'ticker'> = {
  venue: VENUE,
  batchSize: 20,
  async fetch(symbols, context) {
    const entries = await tickerEntries(symbols, context);
    const values = new Map<string, Sourced<Ticker24h>>();
    const reasons = new Map<string, string>();
    for (const symbol of symbols) {
      const raw = entries.get(symbol);
      if (raw instanceof Error) {
        reasons.set(symbol, raw.message);
        continue;
      }
      if (raw === undefined) {
        reasons.set(symbol, `the answer has no entry under ${krakenResultKeys(symbol).join(' or ')}`);
        continue;
      }
      const parsed = KrakenTickerPair.safeParse(raw);
      if (!parsed.success) {
        reasons.set(symbol, `unexpected entry shape: ${z.prettifyError(parsed.error).replace(/\s+/g, ' ')}`);
        continue;
      }
      // The bar that opened 24 h before the current hour began: its open is the price a day ago.
      const dayAgo = Math.floor(context.asOf / HOUR_MS) * HOUR_MS - DAY_MS;
      const bars = await fetchOhlc(symbol, dayAgo - HOUR_MS, context).catch((e: unknown) => e);
      // The OHLC call's own failure (a rate limit, most often) is the reason, not a missing bar.
      if (!Array.isArray(bars)) {
        const why = bars instanceof Error ? bars.message : String(bars);
        reasons.set(symbol, `no 24 h change: the hourly bars failed (${why})`);
        continue;
      }
      const open24h = bars.find((row) => row[0] * 1000 === dayAgo)?.[1];
      if (open24h === undefined) {
        reasons.set(symbol, 'no hourly bar from 24 h ago to read the change against');
        continue;
      }
      // Refused for its own pair only: a throw here would fail every pair of the batch.
      try {
        const origin = { venue: VENUE, instrument: krakenPair(symbol) };
        const ticker = checkedTicker(origin, normaliseTicker(parsed.data, Number(open24h)));
        values.set(symbol, sourced(ticker, VENUE, callTime(context), context));
      } catch (error) {
        reasons.set(symbol, error instanceof Error ? error.message : String(error));
      }
    }
    return withReasons(values, reasons);
  },
};

export const krakenCandles = perSymbolSource<'candles'>(VENUE, async (symbol, context) => {
  const limit = Math.min(OHLC_MAX - 1, context.candleLimit);
  const rows = await fetchOhlc(symbol, null, context);
  const candles = checkedCandles(
    { venue: VENUE, instrument: krakenPair(symbol) },
    normaliseOhlc(rows, context.asOf, limit),
  );
  const last = candles.at(-1);
  if (!last) throw new SourceError('no closed hourly bar in the response');
  return sourced(candles, VENUE, last.openTime + HOUR_MS, context);
});

export const KRAKEN: VenueDescriptor<'kraken'> = {
  id: VENUE,
  name: 'Kraken',
  baseUrl: BASE_URL,
  method: 'GET',
  // Its keyless counter refills about once a second.
  requestsPerSecond: 1,
  errors: ERRORS,
  instrument: krakenPair,
  // USD pairs, no book: after Coinbase.
  serves: {
    candles: { source: krakenCandles, rank: 3 },
    ticker: { source: krakenTicker, rank: 3 },
  },
};
