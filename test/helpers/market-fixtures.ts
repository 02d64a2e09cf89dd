// Crafted market snapshots for engine tests: you choose the price path and which sections exist.
import type { DataMode } from '../../schemas/common.ts';
import { REGIME_RULE } from '../../schemas/market-regime.ts';
import type { RunClock } from '../../generator/engines/clock.ts';
import type {
  AssetMarket,
  Candle,
  Funding,
  Liquidations,
  MarketSnapshot,
  Provenance,
  SourceIssue,
} from '../../generator/market/types.ts';

export const HOUR = 3_600_000;

/** An asset no source delivered anything for. */
export const emptyAsset = (symbol: string): AssetMarket => ({
  symbol,
  candles: null,
  ticker: null,
  book: null,
  funding: null,
  openInterest: null,
  liquidations: null,
});
export const AS_OF = Date.UTC(2025, 0, 15, 12, 0, 0);
export const FIXTURE_CLOCK: RunClock = { asOf: AS_OF, generatedAt: AS_OF, nextUpdateDue: AS_OF + 60_000 };

/** Deterministic uniform numbers in [0, 1) (mulberry32), so that fixtures never depend on Math.random. */
export const seededRandom = (seed: number): (() => number) => {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
};

export interface Leg {
  hours: number;
  /** Log drift per hour, e.g. 0.002. */
  drift: number;
  /** Hourly noise amplitude (uniform in +-noise). */
  noise: number;
}

/** Closing prices built from consecutive legs of drift plus noise. */
export const pricePath = (start: number, legs: readonly Leg[], seed = 1): number[] => {
  const rand = seededRandom(seed);
  const closes = [start];
  for (const leg of legs)
    for (let h = 0; h < leg.hours; h++)
      closes.push(closes[closes.length - 1]! * Math.exp(leg.drift + (2 * rand() - 1) * leg.noise));
  return closes;
};

/**
 * Candles a complete history holds: every reading's window (the volatility percentile ranks 480 hours of returns,
 * REGIME_RULE.volatilityRankHours), so that a named market below reads as complete.
 */
export const COMPLETE_HISTORY = REGIME_RULE.volatilityRankHours + 1;

/**
 * A price path of `legs` after a driftless stretch with the first leg's noise, so that it holds COMPLETE_HISTORY
 * closes. The stretch is built backwards from the path's first close with a random stream of its own, so the legs
 * read exactly as `pricePath` draws them.
 */
export const completePath = (start: number, legs: readonly Leg[], seed = 1): number[] => {
  const path = pricePath(start, legs, seed);
  const noise = legs[0]?.noise ?? 0;
  const rand = seededRandom(seed + 1_000);
  const before: number[] = [];
  let close = start;
  for (let h = path.length; h < COMPLETE_HISTORY; h++) {
    close = close / Math.exp((2 * rand() - 1) * noise);
    before.unshift(close);
  }
  return [...before, ...path];
};

export const uptrend = (start = 100, seed = 1): number[] =>
  completePath(start, [{ hours: 240, drift: 0.002, noise: 0.004 }], seed);
export const downtrend = (start = 100, seed = 1): number[] =>
  completePath(start, [{ hours: 240, drift: -0.002, noise: 0.004 }], seed);
/** A calm, slightly rising market that breaks down hard over the last 36 hours. */
export const crash = (start = 100, seed = 1): number[] =>
  completePath(
    start,
    [
      { hours: 204, drift: 0.0003, noise: 0.003 },
      { hours: 36, drift: -0.009, noise: 0.012 },
    ],
    seed,
  );
/** A long uptrend that turns down over the last 12 hours: trend, momentum and direction disagree. */
export const reversal = (start = 100, seed = 1): number[] =>
  completePath(
    start,
    [
      { hours: 216, drift: 0.002, noise: 0.003 },
      { hours: 12, drift: -0.005, noise: 0.003 },
    ],
    seed,
  );

export const provenance = (mode: DataMode, venue: string, estimated = false): Provenance => ({
  venue: mode === 'simulated' ? `sim:${venue}` : venue,
  asOf: AS_OF,
  mode,
  estimated,
});

export const candlesFrom = (closes: readonly number[], volumeBase = 1000): Candle[] =>
  closes.map((close, i) => {
    const open = i === 0 ? close : closes[i - 1]!;
    const wiggle = 0.002 * close;
    return {
      openTime: AS_OF - (closes.length - i) * HOUR,
      open,
      high: Math.max(open, close) + wiggle,
      low: Math.min(open, close) - wiggle,
      close,
      volumeBase,
    };
  });

/** A book of ten levels per side, 0.1 % apart, each holding `levelUsd` dollars. */
export const bookAround = (mid: number, levelUsd: number, bidBoost = 1) => ({
  bids: Array.from({ length: 10 }, (_, i): [number, number] => {
    const px = mid * (1 - 0.0002 - i * 0.001);
    return [px, (levelUsd * bidBoost) / px];
  }),
  asks: Array.from({ length: 10 }, (_, i): [number, number] => {
    const px = mid * (1 + 0.0002 + i * 0.001);
    return [px, levelUsd / px];
  }),
});

/** Hourly open interest: flat until a day ago, then a straight line to `now` (a change of `change` in 24 h). */
const openInterestHistory = (now: number, change: number) => {
  const before = now / (1 + change);
  return Array.from({ length: 48 }, (_, i) => {
    const hoursAgo = 47 - i;
    return {
      time: AS_OF - hoursAgo * HOUR,
      valueUsd: hoursAgo >= 24 ? before : before + ((now - before) * (24 - hoursAgo)) / 24,
    };
  });
};

export interface AssetOptions {
  mode?: DataMode;
  candles?: boolean;
  ticker?: boolean;
  book?: boolean;
  /** Funding per 8h; null drops the section. History defaults to 90 rates near the 0.01 % base rate. */
  fundingRate?: number | null;
  /** How open interest moved over the last day, as a fraction; null drops the section. */
  openInterestChange?: number | null;
  liquidations?: (Liquidations & { estimated?: boolean }) | null;
}

export function fixtureAsset(
  symbol: string,
  closes: readonly number[],
  options: AssetOptions = {},
): AssetMarket {
  const mode = options.mode ?? 'simulated';
  const candles = candlesFrom(closes);
  const last = closes[closes.length - 1]!;
  const dayAgo = closes[closes.length - 25]!;
  const fundingRate = options.fundingRate === undefined ? 0.0001 : options.fundingRate;
  const oiChange = options.openInterestChange === undefined ? 0.05 : options.openInterestChange;
  const rand = seededRandom(symbol.length * 7919);
  const funding: Funding | null =
    fundingRate === null
      ? null
      : {
          rate8h: fundingRate,
          rateKind: 'predicted',
          intervalHours: 8,
          markPrice: last * 1.0002,
          indexPrice: last,
          history8h: Array.from({ length: 90 }, () => 0.0001 + (rand() - 0.5) * 0.00004),
        };
  const oiNow = 50_000_000;
  const liquidations =
    options.liquidations === undefined
      ? { longUsd24h: 1e5, shortUsd24h: 1e5, events: 12 }
      : options.liquidations;
  return {
    symbol,
    candles:
      options.candles === false ? null : { value: candles, provenance: provenance(mode, 'binance-spot') },
    ticker:
      options.ticker === false
        ? null
        : {
            value: {
              last,
              change24h: last / dayAgo - 1,
              quoteVolume24h: 1000 * last * 24,
              bid: last * 0.9998,
              ask: last * 1.0002,
            },
            provenance: provenance(mode, 'binance-spot'),
          },
    book:
      options.book === false
        ? null
        : { value: bookAround(last, 300_000), provenance: provenance(mode, 'binance-spot') },
    funding: funding && { value: funding, provenance: provenance(mode, 'binance-usdm') },
    openInterest:
      oiChange === null
        ? null
        : {
            value: {
              valueUsd: oiNow,
              history: openInterestHistory(oiNow, oiChange),
            },
            provenance: provenance(mode, 'binance-usdm'),
          },
    liquidations: liquidations && {
      value: {
        longUsd24h: liquidations.longUsd24h,
        shortUsd24h: liquidations.shortUsd24h,
        events: liquidations.events,
      },
      provenance: provenance(mode, 'okx', liquidations.estimated ?? false),
    },
  };
}

export function fixtureSnapshot(
  assets: AssetMarket[],
  options: { mode?: DataMode; seed?: number | null; issues?: SourceIssue[] } = {},
): MarketSnapshot {
  const mode = options.mode ?? 'simulated';
  return {
    asOf: AS_OF,
    mode,
    seed: options.seed !== undefined ? options.seed : mode === 'simulated' ? 42 : null,
    provider: mode === 'simulated' ? 'seeded market simulator' : 'public venues',
    assets,
    issues: options.issues ?? [],
  };
}

/** The seven tracked assets, each on the given path shape (seeds differ so paths are not identical). */
export const SEVEN = ['BTC', 'ETH', 'XRP', 'SOL', 'ALGO', 'XLM', 'HBAR'] as const;

export const universe = (
  path: (start: number, seed: number) => number[],
  options: AssetOptions = {},
  symbols: readonly string[] = SEVEN,
): AssetMarket[] => symbols.map((s, i) => fixtureAsset(s, path(10 + 10 * i, i + 1), options));
