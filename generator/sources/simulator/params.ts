// Per-asset character of the simulated market: price level, volatility, market beta, liquidity, derivatives size.
import { streamKey, uniform } from './random.ts';

export interface AssetParams {
  /** USD level the simulated price wanders around (the seed shifts it a little). */
  price: number;
  /** Exposure to the common market factor. */
  beta: number;
  /** Hourly idiosyncratic volatility (log return). */
  idioVol: number;
  /** Typical 24 h spot turnover, USD. */
  quoteVolume24h: number;
  /** Typical perpetual open interest, USD. */
  openInterestUsd: number;
  /** Typical bid-ask spread, basis points. */
  spreadBps: number;
  /** Typical resting size per order-book level, USD. */
  levelUsd: number;
  /** Perpetual funding interval (Binance settles some contracts every 4 h). */
  fundingIntervalHours: 4 | 8;
  /** Price tick = 10^-priceDecimals. */
  priceDecimals: number;
}

/** Hourly volatility of the common market factor (about 42 % a year before regime and clustering effects). */
export const MARKET_FACTOR_VOL = 0.0045;

const TRACKED: Readonly<Record<string, AssetParams>> = {
  BTC: asset(95_000, 1.0, 0.0018, 1.6e9, 8e9, 0.1, 120_000, 8),
  ETH: asset(3_300, 1.15, 0.0034, 9e8, 5e9, 0.3, 80_000, 8),
  XRP: asset(2.2, 1.1, 0.0058, 3.5e8, 1.2e9, 0.6, 40_000, 8),
  SOL: asset(180, 1.35, 0.0052, 4.5e8, 1.6e9, 0.6, 35_000, 8),
  ALGO: asset(0.25, 1.3, 0.0072, 1.8e7, 5e7, 3, 3_000, 4),
  XLM: asset(0.32, 1.05, 0.0062, 3e7, 8e7, 2, 4_000, 8),
  HBAR: asset(0.22, 1.3, 0.0068, 4e7, 1.2e8, 2, 5_000, 4),
};

function asset(
  price: number,
  beta: number,
  idioVol: number,
  quoteVolume24h: number,
  openInterestUsd: number,
  spreadBps: number,
  levelUsd: number,
  fundingIntervalHours: 4 | 8,
): AssetParams {
  return {
    price,
    beta,
    idioVol,
    quoteVolume24h,
    openInterestUsd,
    spreadBps,
    levelUsd,
    fundingIntervalHours,
    priceDecimals: Math.min(8, Math.max(2, 4 - Math.floor(Math.log10(price)))),
  };
}

/** Parameters of a symbol: the tracked assets have hand-set ones, any other symbol gets them from a hash of its name. */
export function assetParams(symbol: string): AssetParams {
  const known = TRACKED[symbol];
  if (known) return known;
  const key = streamKey(0, 'synthetic-asset', symbol);
  const u = (i: number): number => uniform(key, i);
  const quoteVolume24h = 10 ** (6.5 + 2.5 * u(3));
  const spreadBps = 0.5 + 7.5 * u(5);
  return asset(
    10 ** (-3 + 7 * u(0)),
    0.6 + 1.0 * u(1),
    0.002 + 0.008 * u(2),
    quoteVolume24h,
    quoteVolume24h * (0.5 + 2.5 * u(4)),
    spreadBps,
    quoteVolume24h / 20_000 / spreadBps,
    u(6) < 0.25 ? 4 : 8,
  );
}
