// Binance USDⓈ-M perpetuals: premium index and funding history (funding), open-interest history. The venue's facts,
// raw shapes as documented by Binance, pure normalisers into the market types, the sources and the descriptor.
import * as z from 'zod';
import type { Funding, OpenInterest } from '../../market/types.ts';
import type { VenueDescriptor } from '../venue-descriptor.ts';
import { BINANCE_ERRORS, binanceSymbol } from './binance-spot.ts';
import { per8h, settledHistory } from './funding.ts';
import { amountProblem, refusal } from './price-checks.ts';
import {
  compiledOnFirstUse,
  DecimalString,
  MsTime,
  positiveOrNull,
  SourceError,
  venueCalls,
} from './request.ts';
import { callTime, OPEN_INTEREST_HISTORY_HOURS, perSymbolSource, sourced } from './source.ts';

const VENUE = 'binance-usdm';
const BASE_URL = 'https://fapi.binance.com';
/** Same naming and error envelope as Binance spot. */
const calls = venueCalls('Binance', BINANCE_ERRORS);
const HOUR_MS = 3_600_000;
const FUNDING_HISTORY_DAYS = 30;

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
const FUNDING_ROWS = compiledOnFirstUse(z.array(BinanceFundingRate));
const OPEN_INTEREST_ROWS = compiledOnFirstUse(z.array(BinanceOpenInterestHist));

// ---- normalisers --------------------------------------------------------------------------------------------------

/**
 * Every rate normalised to 8 h. The running period is the one from the latest settlement to `nextFundingTime`
 * (the premium index states it): its length is the current interval, right from the first period after Binance
 * moves a contract between 8 h, 4 h and 1 h. When that is not a length of 1 to 8 h (the history lags behind a
 * settlement, or is empty), the interval is that of the latest settlement, read off the spacing of the history.
 */
export function normaliseFunding(
  premium: BinancePremiumIndex,
  history: readonly BinanceFundingRate[],
): Funding {
  const { history8h, historyTimes, latestIntervalHours } = settledHistory(
    history.map((row) => ({ time: row.fundingTime, rate: Number(row.fundingRate) })),
  );
  const latestSettlement = historyTimes.at(-1);
  const running =
    latestSettlement === undefined ? NaN : Math.round((premium.nextFundingTime - latestSettlement) / HOUR_MS);
  const intervalHours = running >= 1 && running <= 8 ? running : (latestIntervalHours ?? 8);
  return {
    rate8h: per8h(Number(premium.lastFundingRate), intervalHours),
    rateKind: 'predicted', // the running period's rate, not yet settled
    intervalHours,
    markPrice: positiveOrNull(premium.markPrice),
    indexPrice: positiveOrNull(premium.indexPrice),
    history8h,
    historyTimes,
  };
}

/** Why an hourly row cannot be read (its coins or their USD value not above zero), or null. */
const openInterestRowProblem = (row: BinanceOpenInterestHist): string | null =>
  amountProblem('sumOpenInterest', Number(row.sumOpenInterest)) ??
  amountProblem('sumOpenInterestValue', Number(row.sumOpenInterestValue));

/**
 * Open interest in coins (`sumOpenInterest`) valued at the latest hour's price (`sumOpenInterestValue /
 * sumOpenInterest` of the latest row), as Bybit's is valued at today's mark: the 24-hour change then reads positions
 * opened or closed, not the price move (each hour's `sumOpenInterestValue` is at that hour's price, so a day of
 * falling prices read as positions closed). The latest point is Binance's own USD value. A row whose coins or value
 * is not above zero refuses the section, like an impossible bar (price-checks.ts).
 */
export function normaliseOpenInterest(rows: readonly BinanceOpenInterestHist[]): OpenInterest {
  const sorted = [...rows].sort((a, b) => Number(a.timestamp) - Number(b.timestamp));
  const latest = sorted.at(-1);
  if (!latest) throw new SourceError('no open-interest rows in the response');
  const bad = sorted.find((row) => openInterestRowProblem(row) !== null);
  if (bad !== undefined) {
    const at = new Date(Number(bad.timestamp)).toISOString();
    const problem = openInterestRowProblem(bad) ?? '';
    throw refusal({ venue: VENUE, instrument: bad.symbol }, 'open interest', `the row of ${at}: ${problem}`);
  }
  const valueUsd = Number(latest.sumOpenInterestValue);
  const usdPerCoin = valueUsd / Number(latest.sumOpenInterest);
  const history = sorted.map((row) => ({
    time: Number(row.timestamp),
    valueUsd: Number(row.sumOpenInterest) * usdPerCoin,
  }));
  return { valueUsd, history };
}

// ---- sources ------------------------------------------------------------------------------------------------------

export const binanceUsdmFunding = perSymbolSource<'funding'>(VENUE, async (symbol, context) => {
  const instrument = binanceSymbol(symbol);
  const since = context.asOf - FUNDING_HISTORY_DAYS * 24 * HOUR_MS;
  const [premium, history] = await Promise.all([
    calls.parsed(context, `${BASE_URL}/fapi/v1/premiumIndex?symbol=${instrument}`, BinancePremiumIndex),
    calls.parsed(
      context,
      `${BASE_URL}/fapi/v1/fundingRate?symbol=${instrument}&startTime=${since}&limit=1000`,
      FUNDING_ROWS,
    ),
  ]);
  return sourced(normaliseFunding(premium, history), VENUE, premium.time, context);
});

export const binanceUsdmOpenInterest = perSymbolSource<'openInterest'>(VENUE, async (symbol, context) => {
  const url = `${BASE_URL}/futures/data/openInterestHist?symbol=${binanceSymbol(symbol)}&period=1h&limit=${OPEN_INTEREST_HISTORY_HOURS}`;
  const rows = await calls.parsed(context, url, OPEN_INTEREST_ROWS);
  const value = normaliseOpenInterest(rows);
  return sourced(value, VENUE, value.history.at(-1)?.time ?? callTime(context), context);
});

export const BINANCE_USDM: VenueDescriptor<'binance-usdm'> = {
  id: VENUE,
  name: 'Binance USDⓈ-M',
  baseUrl: BASE_URL,
  method: 'GET',
  errors: BINANCE_ERRORS,
  instrument: binanceSymbol,
  // The longest funding and open-interest histories: first.
  serves: {
    funding: { source: binanceUsdmFunding, rank: 1 },
    openInterest: { source: binanceUsdmOpenInterest, rank: 1 },
  },
};
