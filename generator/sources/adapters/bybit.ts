// Bybit v5 linear (USDT) perpetuals: one tickers call answers every contract (funding, mark, index, open interest);
// funding history and open-interest history per contract add the past. Raw shapes as documented by Bybit.
import { z } from 'zod';
import type { Funding, OpenInterest, Sourced } from '../../market/types.ts';
import { binanceSymbol, VENUE_BASE_URLS } from '../venues.ts';
import { per8h, settledHistory } from './funding.ts';
import {
  Decimal,
  envelopeFailure,
  fetchParsed,
  fetchShared,
  MsTime,
  OptionalDecimal,
  parseEntries,
  parseRaw,
  positiveOrNull,
  SourceError,
} from './request.ts';
import type { FetchContext, SectionSource, SectionValues } from './source.ts';
import { perSymbolSource, sourced } from './source.ts';

const VENUE = 'bybit';
const BASE_URL = VENUE_BASE_URLS[VENUE];
const TICKERS_URL = `${BASE_URL}/v5/market/tickers?category=linear`;
/** Bybit serves at most 200 rows of funding or open-interest history per call. */
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

/**
 * Since June 2026 Bybit documents `openInterest` of this endpoint as both sides added and sends the one-sided
 * figure as `singleOpenInterest`; older answers lack the latter.
 */
export const BybitOpenInterestRow = z.object({
  openInterest: Decimal,
  singleOpenInterest: OptionalDecimal,
  timestamp: MsTime,
});
export type BybitOpenInterestRow = z.infer<typeof BybitOpenInterestRow>;
export const BybitOpenInterest = z.object({ list: z.array(BybitOpenInterestRow) });

// ---- normalisers --------------------------------------------------------------------------------------------------

/** Bybit reports failures inside its envelope: a non-zero retCode (often with HTTP 200), message kept. */
function unwrap<T>(raw: z.infer<typeof BybitEnvelope>, result: z.ZodType<T>): T {
  if (raw.retCode !== 0) throw envelopeFailure('Bybit', String(raw.retCode), raw.retMsg);
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
  const { history8h, latestIntervalHours } = settledHistory(
    history.map((row) => ({ time: Number(row.fundingRateTimestamp), rate: Number(row.fundingRate) })),
  );
  const stated = Number(ticker.fundingIntervalHour);
  const intervalHours = stated > 0 ? stated : (latestIntervalHours ?? 8);
  return {
    rate8h: per8h(Number(ticker.fundingRate), intervalHours),
    intervalHours,
    markPrice: ticker.markPrice === null ? null : positiveOrNull(ticker.markPrice),
    indexPrice: ticker.indexPrice === null ? null : positiveOrNull(ticker.indexPrice),
    history8h,
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
  const raw = await fetchShared(
    context.shared,
    context.transport,
    TICKERS_URL,
    BybitEnvelope,
    context.signal,
  );
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
    const ticker = good.get(binanceSymbol(symbol));
    const reason = bad.get(binanceSymbol(symbol));
    if (reason) throw new SourceError(`${binanceSymbol(symbol)}: ${reason}`);
    if (!ticker)
      throw new SourceError(`no linear contract ${binanceSymbol(symbol)} in the tickers answer (delisted?)`);
    return load(symbol, ticker, context);
  });
}

export const bybitFunding = bybitSource<'funding'>(async (symbol, ticker, context) => {
  const url = `${BASE_URL}/v5/market/funding/history?category=linear&symbol=${binanceSymbol(symbol)}&limit=${HISTORY_ROWS}`;
  const history = unwrap(
    await fetchParsed(context.transport, url, BybitEnvelope, context.signal),
    BybitFundingHistory,
  ).list;
  return sourced(normaliseFunding(ticker, history), VENUE, context.asOf, context);
});

export const bybitOpenInterest = bybitSource<'openInterest'>(async (symbol, ticker, context) => {
  const url = `${BASE_URL}/v5/market/open-interest?category=linear&symbol=${binanceSymbol(symbol)}&intervalTime=1h&limit=${HISTORY_ROWS}`;
  const rows = unwrap(
    await fetchParsed(context.transport, url, BybitEnvelope, context.signal),
    BybitOpenInterest,
  ).list;
  return sourced(normaliseOpenInterest(ticker, rows, context.asOf), VENUE, context.asOf, context);
});
