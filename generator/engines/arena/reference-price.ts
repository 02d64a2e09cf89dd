// A round's reference price: the first price at or after its start. Hourly candles open on the hour, as rounds
// do, so the open of a closed candle opening at or after the start is exactly that price. Adapters keep closed
// candles only (a venue's last bar is still forming), so within a round's entry window there is usually none, and
// the price a run saw is used, when its own time (a ticker's time, a candle's close) is at or after the start
// (OUTCOME_RULE says both). The same holds for the end price: a price from before the round end is not one.
import { assetPrice } from '../asset-analysis.ts';
import type { Candle, MarketSnapshot } from '../../market/types.ts';

export const firstOpenAtOrAfter = (candles: readonly Candle[], startMs: number): number | null => {
  const candle = candles.find((c) => c.openTime >= startMs && Number.isFinite(c.open) && c.open > 0);
  return candle ? candle.open : null;
};

/** Per asset symbol, the reference price for a round starting at `startMs`; null when no candle covers it. */
export const referencePricesAt = (snapshot: MarketSnapshot, startMs: number): Record<string, number | null> =>
  Object.fromEntries(
    snapshot.assets.map((a) => [a.symbol, firstOpenAtOrAfter(a.candles?.value ?? [], startMs)]),
  );

/**
 * Per asset symbol, the venue's time of the price the run publishes (assetPrice): the ticker's time, or the close
 * of the last closed hourly candle; null when there is no price.
 */
export const priceTimesOf = (snapshot: MarketSnapshot): Record<string, number | null> =>
  Object.fromEntries(snapshot.assets.map((a) => [a.symbol, assetPrice(a).at]));
