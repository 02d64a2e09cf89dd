// Binance USDⓈ-M perpetuals: premium index and funding history (funding), open-interest history. Raw shapes as
// documented by Binance, pure normalisers into the market types, and the sources the collector calls.
import { z } from 'zod';
import type { Funding, OpenInterest } from '../../market/types.ts';
import { binanceSymbol, VENUE_BASE_URLS } from '../venues.ts';
import { DecimalString, fetchParsed, MsTime, SourceError } from './request.ts';
import { perSymbolSource, sourced } from './source.ts';

const VENUE = 'binance-usdm';
const BASE_URL = VENUE_BASE_URLS[VENUE];
const HOUR_MS = 3_600_000;
const FUNDING_HISTORY_DAYS = 30;
/** Binance keeps a month of hourly open interest and serves at most 500 rows. */
const OPEN_INTEREST_ROWS = 500;

// ---- raw shapes -------------------------------------------------------------------------------------------------

export const BinancePremiumIndex = z.object({
  symbol: z.string(),
  markPrice: DecimalString,
  indexPrice: DecimalString,
  lastFundingRate: DecimalString, // per the contract's funding interval
  nextFundingTime: z.number().int(),
  time: z.number().int(),
});
export type BinancePremiumIndex = z.infer<typeof BinancePremiumIndex>;

export const BinanceFundingRate = z.object({
  symbol: z.string(),
  fundingRate: DecimalString, // per the interval that ended at fundingTime
  fundingTime: z.number().int(),
});
export type BinanceFundingRate = z.infer<typeof BinanceFundingRate>;

export const BinanceOpenInterestHist = z.object({
  symbol: z.string(),
  sumOpenInterest: DecimalString, // base asset
  sumOpenInterestValue: DecimalString, // USDT
  timestamp: MsTime,
});
export type BinanceOpenInterestHist = z.infer<typeof BinanceOpenInterestHist>;

// ---- normalisers --------------------------------------------------------------------------------------------------

/**
 * Hours of the funding interval ending at each settlement. Binance does not state it in these responses (it moves
 * some contracts between 8 h, 4 h and 1 h), so it is read off the spacing of settlements: rounded to whole hours
 * (settlement times jitter by milliseconds) and capped at 8 h (a gap of 16 h is a missing row, not a 16 h interval).
 */
export function settlementIntervals(times: readonly number[], fallbackHours = 8): number[] {
  return times.map((time, i) => {
    const gap = i > 0 ? time - (times[i - 1] ?? NaN) : (times[1] ?? NaN) - time;
    const hours = Math.round(gap / HOUR_MS);
    return Number.isFinite(hours) && hours >= 1 ? Math.min(8, hours) : fallbackHours;
  });
}

const positiveOrNull = (value: string): number | null => (Number(value) > 0 ? Number(value) : null);

/** Every rate normalised to 8 h: a 4 h rate of 0.0001 is 0.0002 per 8 h. */
export function normaliseFunding(
  premium: BinancePremiumIndex,
  history: readonly BinanceFundingRate[],
): Funding {
  const settled = [...history].sort((a, b) => a.fundingTime - b.fundingTime);
  const intervals = settlementIntervals(settled.map((row) => row.fundingTime));
  const intervalHours = intervals.at(-1) ?? 8;
  return {
    rate8h: (Number(premium.lastFundingRate) * 8) / intervalHours,
    intervalHours,
    markPrice: positiveOrNull(premium.markPrice),
    indexPrice: positiveOrNull(premium.indexPrice),
    history8h: settled.map((row, i) => (Number(row.fundingRate) * 8) / (intervals[i] ?? intervalHours)),
  };
}

export function normaliseOpenInterest(rows: readonly BinanceOpenInterestHist[]): OpenInterest {
  const history = rows
    .map((row) => ({ time: Number(row.timestamp), valueUsd: Number(row.sumOpenInterestValue) }))
    .sort((a, b) => a.time - b.time);
  const latest = history.at(-1);
  if (!latest) throw new SourceError('no open-interest rows in the response');
  return { valueUsd: latest.valueUsd, history };
}

// ---- sources ------------------------------------------------------------------------------------------------------

export const binanceUsdmFunding = perSymbolSource<'funding'>(VENUE, async (symbol, context) => {
  const instrument = binanceSymbol(symbol);
  const since = context.asOf - FUNDING_HISTORY_DAYS * 24 * HOUR_MS;
  const [premium, history] = await Promise.all([
    fetchParsed(
      context.transport,
      `${BASE_URL}/fapi/v1/premiumIndex?symbol=${instrument}`,
      BinancePremiumIndex,
      context.signal,
    ),
    fetchParsed(
      context.transport,
      `${BASE_URL}/fapi/v1/fundingRate?symbol=${instrument}&startTime=${since}&limit=1000`,
      z.array(BinanceFundingRate),
      context.signal,
    ),
  ]);
  return sourced(normaliseFunding(premium, history), VENUE, premium.time, context);
});

export const binanceUsdmOpenInterest = perSymbolSource<'openInterest'>(VENUE, async (symbol, context) => {
  const url = `${BASE_URL}/futures/data/openInterestHist?symbol=${binanceSymbol(symbol)}&period=1h&limit=${OPEN_INTEREST_ROWS}`;
  const rows = await fetchParsed(context.transport, url, z.array(BinanceOpenInterestHist), context.signal);
  const value = normaliseOpenInterest(rows);
  return sourced(value, VENUE, value.history.at(-1)?.time ?? context.asOf, context);
});
