// The rolling 24 h ending at the as-of time, as the venues' 24 h statistics describe it (shared by the spot dialects).
import { HOUR_MS } from './market-model.ts';
import type { SimulatedMarket } from './market-model.ts';

export const DAY_MS = 24 * HOUR_MS;

export interface DayWindow {
  openTime: number;
  open: number;
  last: number;
  high: number;
  low: number;
  volumeBase: number;
  quoteVolume: number;
  trades: number;
}

/** Bars overlapping the window count in proportion to the part of them inside it. */
export function dayWindow(market: SimulatedMarket, symbol: string): DayWindow {
  const openTime = market.asOf - DAY_MS;
  const open = market.priceAt(symbol, openTime);
  const last = market.priceAt(symbol, market.asOf);
  let [high, low, volumeBase, quoteVolume, trades] = [Math.max(open, last), Math.min(open, last), 0, 0, 0];
  for (let hour = Math.floor(openTime / HOUR_MS); hour <= market.currentHour; hour++) {
    const bar = market.candle(symbol, hour);
    const inside = hour * HOUR_MS < openTime ? (hour * HOUR_MS + HOUR_MS - openTime) / HOUR_MS : 1;
    high = Math.max(high, bar.high);
    low = Math.min(low, bar.low);
    volumeBase += bar.volumeBase * inside;
    quoteVolume += bar.quoteVolume * inside;
    trades += Math.round(bar.trades * inside);
  }
  return { openTime, open, last, high, low, volumeBase, quoteVolume, trades };
}
