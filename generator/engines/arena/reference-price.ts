// A round's reference price: the first price at or after its start. Hourly candles open on the hour, as rounds
// do, so the open of a closed candle opening at or after the start is exactly that price. Adapters keep closed
// candles only (a venue's last bar is still forming), so within a round's entry window there is usually none, and
// the recording run's own price is used (OUTCOME_RULE says both).
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
