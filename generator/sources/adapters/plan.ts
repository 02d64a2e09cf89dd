// Which venue serves which kind of data, in fallback order. Live and simulated runs share this plan; a new venue is
// a new source added to a list here.
import { binanceSpotBook, binanceSpotCandles, binanceSpotTicker } from './binance-spot.ts';
import { binanceUsdmFunding, binanceUsdmOpenInterest } from './binance-usdm.ts';
import { okxLiquidations } from './okx.ts';
import type { SourcePlan } from './source.ts';

export const DEFAULT_SOURCE_PLAN: SourcePlan = {
  candles: [binanceSpotCandles],
  ticker: [binanceSpotTicker],
  book: [binanceSpotBook],
  funding: [binanceUsdmFunding],
  openInterest: [binanceUsdmOpenInterest],
  liquidations: [okxLiquidations],
};

/** Venues named in a plan, in first-use order (for a snapshot's provider line). */
export function planVenues(plan: SourcePlan): string[] {
  return [...new Set(Object.values(plan).flatMap((sources) => sources.map((source) => source.venue)))];
}
