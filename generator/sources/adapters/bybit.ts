// Bybit v5 linear (USDT) perpetuals: one tickers call answers every contract (funding, mark, index, open interest);
// funding history and open-interest history per contract add the past. Raw shapes as documented by Bybit.
import { z } from 'zod';
import type { Funding, OpenInterest, Sourced } from '../../market/types.ts';
import { binanceSymbol, VENUE_BASE_URLS } from '../venues.ts';
import { per8h, settledHistory } from './funding.ts';
import { DecimalString, fetchParsed, fetchShared, MsTime, positiveOrNull, SourceError } from './request.ts';
import type { FetchContext, SectionSource, SectionValues } from './source.ts';
import { perSymbolSource, sourced } from './source.ts';

const VENUE = 'bybit';
const BASE_URL = VENUE_BASE_URLS[VENUE];
const TICKERS_URL = `${BASE_URL}/v5/market/tickers?category=linear`;
/** Bybit serves at most 200 rows of funding or open-interest history per call. */
const HISTORY_ROWS = 200;

// ---- raw shapes -------------------------------------------------------------------------------------------------

const envelope = <T extends z.ZodType>(result: T) =>
  z.object({ retCode: z.number().int(), retMsg: z.string(), result });

export const BybitLinearTicker = z.object({
  symbol: z.string(),
  lastPrice: DecimalString,
  markPrice: DecimalString,
  indexPrice: DecimalString,
  price24hPcnt: DecimalString, // a fraction: "0.017103" is +1.71 %
  openInterest: DecimalString, // base coin
  openInterestValue: DecimalString, // USDT
  fundingRate: DecimalString, // per the contract's interval
  nextFundingTime: MsTime,
  fundingIntervalHour: DecimalString.optional(), // newer answers state the interval
});
export type BybitLinearTicker = z.infer<typeof BybitLinearTicker>;
export const BybitTickers = envelope(z.object({ category: z.string(), list: z.array(BybitLinearTicker) }));

export const BybitFundingRow = z.object({
  symbol: z.string(),
  fundingRate: DecimalString,
  fundingRateTimestamp: MsTime,
});
export type BybitFundingRow = z.infer<typeof BybitFundingRow>;
export const BybitFundingHistory = envelope(z.object({ list: z.array(BybitFundingRow) }));

export const BybitOpenInterestRow = z.object({ openInterest: DecimalString, timestamp: MsTime });
export type BybitOpenInterestRow = z.infer<typeof BybitOpenInterestRow>;
export const BybitOpenInterest = envelope(z.object({ list: z.array(BybitOpenInterestRow) }));

// ---- normalisers --------------------------------------------------------------------------------------------------

/** Bybit reports failures inside its envelope: a non-zero retCode (often with HTTP 200). */
function unwrap<T>(raw: { retCode: number; retMsg: string; result: T }): T {
  if (raw.retCode !== 0) throw new SourceError(`Bybit error ${raw.retCode}: ${raw.retMsg}`);
  return raw.result;
}

/** Rates normalised to 8 h; the interval is the ticker's own when stated, else read off settlement spacing. */
export function normaliseFunding(ticker: BybitLinearTicker, history: readonly BybitFundingRow[]): Funding {
  const { history8h, latestIntervalHours } = settledHistory(
    history.map((row) => ({ time: Number(row.fundingRateTimestamp), rate: Number(row.fundingRate) })),
  );
  const stated = Number(ticker.fundingIntervalHour);
  const intervalHours = stated > 0 ? stated : (latestIntervalHours ?? 8);
  return {
    rate8h: per8h(Number(ticker.fundingRate), intervalHours),
    intervalHours,
    markPrice: positiveOrNull(ticker.markPrice),
    indexPrice: positiveOrNull(ticker.indexPrice),
    history8h,
  };
}

/**
 * History in coins valued at today's mark price: the change then reads positions opened or closed, not the price
 * move (which the engines compare it against). The latest point is the ticker's own USD value.
 */
export function normaliseOpenInterest(
  ticker: BybitLinearTicker,
  rows: readonly BybitOpenInterestRow[],
  asOf: number,
): OpenInterest {
  const mark = Number(ticker.markPrice);
  const history = rows
    .map((row) => ({ time: Number(row.timestamp), valueUsd: Number(row.openInterest) * mark }))
    .filter((point) => point.time <= asOf)
    .sort((a, b) => a.time - b.time);
  return { valueUsd: Number(ticker.openInterestValue), history };
}

// ---- sources ------------------------------------------------------------------------------------------------------

async function tickersBySymbol(context: FetchContext): Promise<Map<string, BybitLinearTicker>> {
  const raw = await fetchShared(context.shared, context.transport, TICKERS_URL, BybitTickers, context.signal);
  return new Map(unwrap(raw).list.map((row) => [row.symbol, row]));
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
    const ticker = (await tickersBySymbol(context)).get(binanceSymbol(symbol));
    if (!ticker) throw new SourceError(`no linear contract ${binanceSymbol(symbol)} in the tickers answer`);
    return load(symbol, ticker, context);
  });
}

export const bybitFunding = bybitSource<'funding'>(async (symbol, ticker, context) => {
  const url = `${BASE_URL}/v5/market/funding/history?category=linear&symbol=${binanceSymbol(symbol)}&limit=${HISTORY_ROWS}`;
  const history = unwrap(await fetchParsed(context.transport, url, BybitFundingHistory, context.signal)).list;
  return sourced(normaliseFunding(ticker, history), VENUE, context.asOf, context);
});

export const bybitOpenInterest = bybitSource<'openInterest'>(async (symbol, ticker, context) => {
  const url = `${BASE_URL}/v5/market/open-interest?category=linear&symbol=${binanceSymbol(symbol)}&intervalTime=1h&limit=${HISTORY_ROWS}`;
  const rows = unwrap(await fetchParsed(context.transport, url, BybitOpenInterest, context.signal)).list;
  return sourced(normaliseOpenInterest(ticker, rows, context.asOf), VENUE, context.asOf, context);
});
