// Bybit v5 linear (USDT) perpetuals: one tickers call answers every contract (funding, mark, index, open interest);
// funding history and open-interest history per contract add the past. Raw shapes as documented by Bybit.
import * as z from 'zod';
import type { Funding, OpenInterest, Sourced } from '../../market/types.ts';
import type { VenueDescriptor } from '../venue-descriptor.ts';
import { per8h, settledHistory } from './funding.ts';
import {
  compiledOnFirstUse,
  Decimal,
  MsTime,
  OptionalDecimal,
  parseEntries,
  parseRaw,
  positiveOrNull,
  SourceError,
  venueCalls,
} from './request.ts';
import type { ResponseSchema } from './request.ts';
import type { FetchContext, SectionSource, SectionValues } from './source.ts';
import { callTime, OPEN_INTEREST_HISTORY_HOURS, perSymbolSource, sourced } from './source.ts';
import type { VenueErrors } from './venue-errors.ts';

const VENUE = 'bybit';
const BASE_URL = 'https://api.bybit.com';

/** Bybit names a linear USDT perpetual by concatenation: BTC -> BTCUSDT. */
export const bybitSymbol = (symbol: string): string => `${symbol}USDT`;

/**
 * `{retCode, retMsg}`, often over HTTP 200. 10006 (too many visits) and 10018 (IP rate limit, even with HTTP 403)
 * are rate limits; a 403 without the envelope is a refusal for the run: its CDN's country block, or its IP ban
 * ("403, access too frequent", lifted after 10 minutes at the earliest).
 */
const ERRORS: VenueErrors = {
  envelope: (body) =>
    typeof body.retCode === 'number' && body.retCode !== 0
      ? { code: String(body.retCode), message: String(body.retMsg ?? '') }
      : null,
  rateLimitCodes: ['10006', '10018'],
};
const calls = venueCalls('Bybit', ERRORS);
const TICKERS_URL = `${BASE_URL}/v5/market/tickers?category=linear`;
/** Bybit serves at most 200 rows of funding history per call. */
const HISTORY_ROWS = 200;

// ---- raw shapes -------------------------------------------------------------------------------------------------

/** Bybit's envelope: the result is read only once retCode says it is one (an error sends `result: {}`). */
const BybitEnvelope = z.object({ retCode: z.number().int(), retMsg: z.string(), result: z.unknown() });

/**
 * One row of the linear tickers list. Dated futures (BTC-26DEC25) share the list and send `fundingRate: ""` and
 * `nextFundingTime: ""`; a contract in pre-listing sends empty prices. Empty means "not stated", never zero.
 */
export const BybitLinearTicker = z.object({
  symbol: z.string(),
  lastPrice: OptionalDecimal,
  markPrice: OptionalDecimal,
  indexPrice: OptionalDecimal,
  price24hPcnt: OptionalDecimal, // a fraction: "0.017103" is +1.71 %
  openInterest: OptionalDecimal, // base coin, both sides (see normaliseOpenInterest)
  openInterestValue: OptionalDecimal, // USDT, both sides
  fundingRate: OptionalDecimal, // the current period's predicted rate, per the contract's interval
  nextFundingTime: z.union([MsTime, z.literal('')]).optional(),
  fundingIntervalHour: OptionalDecimal, // newer answers state the interval
});
export type BybitLinearTicker = z.infer<typeof BybitLinearTicker>;
/** `list` entries are parsed one by one (a dated future's empty fields must not fail the rest). */
export const BybitTickers = z.object({ category: z.string(), list: z.array(z.unknown()) });

export const BybitFundingRow = z.object({
  symbol: z.string(),
  fundingRate: Decimal, // settled rate of the interval ending at the timestamp
  fundingRateTimestamp: MsTime,
});
export type BybitFundingRow = z.infer<typeof BybitFundingRow>;
export const BybitFundingHistory = z.object({ list: z.array(BybitFundingRow) });
const FUNDING_ROWS = compiledOnFirstUse(BybitFundingHistory);

/**
 * Bybit has documented `openInterest` of this endpoint as both sides added since November 2023
 * (bybit-exchange/docs 5802d3ed); since June 2026 it also sends the one-sided figure as `singleOpenInterest`, which
 * older answers lack.
 */
export const BybitOpenInterestRow = z.object({
  openInterest: Decimal,
  singleOpenInterest: OptionalDecimal,
  timestamp: MsTime,
});
export type BybitOpenInterestRow = z.infer<typeof BybitOpenInterestRow>;
export const BybitOpenInterest = z.object({ list: z.array(BybitOpenInterestRow) });
const OPEN_INTEREST_ROWS = compiledOnFirstUse(BybitOpenInterest);

// ---- normalisers --------------------------------------------------------------------------------------------------

/** Bybit reports failures inside its envelope: a non-zero retCode (often with HTTP 200), message kept. */
function unwrap<T>(raw: z.infer<typeof BybitEnvelope>, result: ResponseSchema<T>): T {
  if (raw.retCode !== 0) throw calls.envelopeFailure(String(raw.retCode), raw.retMsg);
  return parseRaw(result, raw.result);
}

/**
 * Rates normalised to 8 h; the interval is the ticker's own when stated, else read off settlement spacing. The
 * ticker's rate is the predicted rate of the running period; the history holds settled rates. A contract without a
 * current rate (a dated future, a halted perpetual) has no funding: unavailable, not zero.
 */
export function normaliseFunding(ticker: BybitLinearTicker, history: readonly BybitFundingRow[]): Funding {
  if (ticker.fundingRate === null)
    throw new SourceError(`${ticker.symbol} states no funding rate (empty field): not available`);
  const { history8h, historyTimes, latestIntervalHours } = settledHistory(
    history.map((row) => ({ time: Number(row.fundingRateTimestamp), rate: Number(row.fundingRate) })),
  );
  const stated = Number(ticker.fundingIntervalHour);
  const intervalHours = stated > 0 ? stated : (latestIntervalHours ?? 8);
  return {
    rate8h: per8h(Number(ticker.fundingRate), intervalHours),
    rateKind: 'predicted', // the running period's rate, not yet settled
    intervalHours,
    markPrice: ticker.markPrice === null ? null : positiveOrNull(ticker.markPrice),
    indexPrice: ticker.indexPrice === null ? null : positiveOrNull(ticker.indexPrice),
    history8h,
    historyTimes,
  };
}

/** One side's share of a row: `singleOpenInterest / openInterest` when stated, else a half (both sides are equal). */
const oneSidedCoins = (row: BybitOpenInterestRow): number =>
  row.singleOpenInterest === null ? Number(row.openInterest) / 2 : Number(row.singleOpenInterest);

/**
 * One-sided open interest (every long has its short; other venues publish one side). History in coins valued at
 * today's mark price: the change then reads positions opened or closed, not the price move. The latest point is the
 * ticker's USD value, which counts both sides like the history's `openInterest`, so it is halved the same way.
 */
export function normaliseOpenInterest(
  ticker: BybitLinearTicker,
  rows: readonly BybitOpenInterestRow[],
  asOf: number,
): OpenInterest {
  const mark = Number(ticker.markPrice);
  const totalUsd = Number(ticker.openInterestValue);
  if (!(mark > 0) || !(totalUsd > 0))
    throw new SourceError(
      `${ticker.symbol} has no mark price or open interest (halted or delisted): not available`,
    );
  const history = rows
    .map((row) => ({ time: Number(row.timestamp), valueUsd: oneSidedCoins(row) * mark }))
    .filter((point) => point.time <= asOf)
    .sort((a, b) => a.time - b.time);
  const latest = [...rows].sort((a, b) => Number(b.timestamp) - Number(a.timestamp))[0];
  const share =
    latest && Number(latest.openInterest) > 0 ? oneSidedCoins(latest) / Number(latest.openInterest) : 0.5;
  return { valueUsd: totalUsd * share, history };
}

// ---- sources ------------------------------------------------------------------------------------------------------

/** The list by symbol; entries that do not parse keep their reason (so only their own symbol fails). */
async function tickersBySymbol(
  context: FetchContext,
): Promise<ReturnType<typeof parseEntries<BybitLinearTicker>>> {
  const raw = await calls.shared(context, TICKERS_URL, BybitEnvelope);
  const entries = unwrap(raw, BybitTickers).list.map((row): [string, unknown] => [
    typeof (row as { symbol?: unknown })?.symbol === 'string' ? (row as { symbol: string }).symbol : '?',
    row,
  ]);
  return parseEntries(BybitLinearTicker, entries);
}

/** Per symbol (so one failed history call costs one symbol), on the tickers call every symbol shares. */
function bybitSource<S extends 'funding' | 'openInterest'>(
  load: (
    symbol: string,
    ticker: BybitLinearTicker,
    context: FetchContext,
  ) => Promise<Sourced<SectionValues[S]>>,
): SectionSource<S> {
  return perSymbolSource<S>(VENUE, async (symbol, context) => {
    const { good, bad } = await tickersBySymbol(context);
    const ticker = good.get(bybitSymbol(symbol));
    const reason = bad.get(bybitSymbol(symbol));
    if (reason) throw new SourceError(`${bybitSymbol(symbol)}: ${reason}`);
    if (!ticker)
      throw new SourceError(`no linear contract ${bybitSymbol(symbol)} in the tickers answer (delisted?)`);
    return load(symbol, ticker, context);
  });
}

export const bybitFunding = bybitSource<'funding'>(async (symbol, ticker, context) => {
  const url = `${BASE_URL}/v5/market/funding/history?category=linear&symbol=${bybitSymbol(symbol)}&limit=${HISTORY_ROWS}`;
  const history = unwrap(await calls.parsed(context, url, BybitEnvelope), FUNDING_ROWS).list;
  return sourced(normaliseFunding(ticker, history), VENUE, callTime(context), context);
});

export const bybitOpenInterest = bybitSource<'openInterest'>(async (symbol, ticker, context) => {
  const url = `${BASE_URL}/v5/market/open-interest?category=linear&symbol=${bybitSymbol(symbol)}&intervalTime=1h&limit=${OPEN_INTEREST_HISTORY_HOURS}`;
  const rows = unwrap(await calls.parsed(context, url, BybitEnvelope), OPEN_INTEREST_ROWS).list;
  return sourced(normaliseOpenInterest(ticker, rows, context.asOf), VENUE, callTime(context), context);
});

export const BYBIT: VenueDescriptor<'bybit'> = {
  id: VENUE,
  name: 'Bybit',
  baseUrl: BASE_URL,
  method: 'GET',
  errors: ERRORS,
  instrument: bybitSymbol,
  // Hourly history of both kinds: right after Binance.
  serves: {
    funding: { source: bybitFunding, rank: 2 },
    openInterest: { source: bybitOpenInterest, rank: 2 },
  },
};
