// Where no venue reports liquidations, an estimate from open-interest drops: each hourly fall in open interest over
// the last 24 h counts as positions closed, on the long side when the hour's price fell, the short side when it rose.
// It is an upper bound (voluntary closes count too) and is always labelled estimated.
import type { Candle, Liquidations, OpenInterest, Sourced } from '../market/types.ts';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

export function estimateLiquidations(
  openInterest: Sourced<OpenInterest>,
  candles: readonly Candle[],
  asOf: number,
): Sourced<Liquidations> | null {
  const points = openInterest.value.history.filter((p) => p.time > asOf - DAY_MS - HOUR_MS && p.time <= asOf);
  if (points.length < 2) return null; // one point has no change to read
  const closes = new Map(candles.map((c) => [c.openTime, c]));
  const totals: Liquidations = { longUsd24h: 0, shortUsd24h: 0, events: 0 };
  for (let i = 1; i < points.length; i++) {
    const [before, after] = [points[i - 1]!, points[i]!];
    const drop = before.valueUsd - after.valueUsd;
    if (drop <= 0) continue;
    const hour = closes.get(Math.floor(before.time / HOUR_MS) * HOUR_MS);
    const longShare =
      hour === undefined ? 0.5 : hour.close < hour.open ? 1 : hour.close > hour.open ? 0 : 0.5;
    totals.longUsd24h += drop * longShare;
    totals.shortUsd24h += drop * (1 - longShare);
    totals.events += 1; // hours with a drop, not orders: an estimate has no order count
  }
  return {
    value: totals,
    provenance: { ...openInterest.provenance, estimated: true },
  };
}
