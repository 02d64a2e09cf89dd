// Trend and momentum of one asset from its hourly candles: EMA20 vs EMA50 in ATR units, volatility-scaled
// momentum (time-series momentum) and Wilder's directional movement (DMI/ADX).
import type { Candle } from '../market/types.ts';
import { clamp, emaSeries, last, logReturns, squash, stdev } from './math.ts';

const FAST = 20;
const SLOW = 50;
const ATR_PERIOD = 14;
const MOMENTUM_HOURS = 48;
const HOUR_MS = 3_600_000;
const VOL_WINDOW = 168;
/** EMA50 needs 50 bars to seed and the momentum window needs a little more. */
export const MIN_TREND_CANDLES = SLOW + 10;

/** A smoothed reading counts as settled once its seed weighs under 5 % of it. */
const SETTLED_SEED_WEIGHT = 0.05;
/** Bars after the seed until a smoothing that keeps `keep` of itself each bar carries under 5 % of that seed. */
const barsToForgetSeed = (keep: number): number => Math.ceil(Math.log(SETTLED_SEED_WEIGHT) / Math.log(keep));
/**
 * EMA50 is seeded with the mean of its first 50 closes and keeps 49/51 of itself each bar: 50 + 75 = 125 candles
 * before that seed weighs under 5 %. Fewer, and the 20/50 gap still depends on where the history was cut.
 */
export const EMA_SETTLED_CANDLES = SLOW + barsToForgetSeed(1 - 2 / (SLOW + 1));
/**
 * ADX: 14 true ranges seed the smoothed ranges, 14 DX values then seed ADX (29 candles for its first value), and
 * Wilder's smoothing keeps 13/14 of itself each bar: 29 + 41 = 70 candles before the seeds weigh under 5 %.
 */
export const ADX_SETTLED_CANDLES = 2 * ATR_PERIOD + 1 + barsToForgetSeed(1 - 1 / ATR_PERIOD);
/** Momentum is scaled by the volatility of a week of hourly returns: 169 candles. */
export const MOMENTUM_SETTLED_CANDLES = VOL_WINDOW + 1;
export type TrendSignal = 'ema' | 'momentum' | 'dmi';
/** The candles each trend signal needs to read as it would from a long history. */
export const SETTLED_CANDLES: Readonly<Record<TrendSignal, number>> = {
  ema: EMA_SETTLED_CANDLES,
  momentum: MOMENTUM_SETTLED_CANDLES,
  dmi: ADX_SETTLED_CANDLES,
};

/**
 * How far a trend signal still is from settled: 1 at the first trend reading (MIN_TREND_CANDLES), falling in step
 * with each candle to 0 at the count it needs (SETTLED_CANDLES). Confidence grades with it (PROVISIONAL_RULE).
 */
export const unsettledShare = (name: TrendSignal, candles: number): number =>
  clamp((SETTLED_CANDLES[name] - candles) / (SETTLED_CANDLES[name] - MIN_TREND_CANDLES), 0, 1);

/**
 * Where the settled value of a signal read from `candles` candles could lie: the value read, widened by twice its
 * unsettled share either way (the whole range [-1, 1] at the first reading, the value itself once settled). So a
 * short history is weaker evidence, more so the shorter it is, never none and never stronger than a settled one.
 */
export const provisionalRange = (
  name: TrendSignal,
  value: number,
  candles: number,
): { min: number; max: number } => {
  const widen = 2 * unsettledShare(name, candles);
  return { min: Math.max(-1, value - widen), max: Math.min(1, value + widen) };
};

/**
 * The published rule of a short history (quoted by the main brain's `method`): what each part of the trend needs
 * to settle, and how confidence counts a part still provisional.
 */
export const PROVISIONAL_RULE =
  `A trend part read from fewer candles than it needs to settle (${EMA_SETTLED_CANDLES} hourly candles for the ` +
  `50-hour average, ${ADX_SETTLED_CANDLES} for ADX, ${MOMENTUM_SETTLED_CANDLES} for the week of volatility that ` +
  'scales momentum) is provisional and named in the limitations: confidence counts it as if its settled value ' +
  `could lie anywhere within a margin that is the whole range at the first trend reading (${MIN_TREND_CANDLES} ` +
  'candles) and narrows with each further candle to nothing once the part has settled. Each part reads only the ' +
  'last candles it needs to settle, so an older candle never changes a reading and a shorter history never reads ' +
  'more confident than a longer one of the same market.';

/** Thresholds of the words for a price move and of a flat price (published by MOVE_RULE_TEXT). */
export const MOVE_RULE = {
  /** The window of the move the evidence words ("over the last 48 hours"). */
  windowHours: MOMENTUM_HOURS,
  /** Flat: the price moved less than this (percent, either way) and the 20-hour average is within it of the 50-hour one. */
  flatBelowPct: 1,
  /** A move of at least this (percent, either way) is large, whatever the recent volatility. */
  largeFromPct: 10,
  /** Otherwise scaled by recent volatility: moderate from this many expected moves, large from `largeFromZ`. */
  moderateFromZ: 1,
  largeFromZ: 2,
} as const;

export const MOVE_RULE_TEXT =
  `A price that moved less than ${MOVE_RULE.flatBelowPct}% either way over the last ${MOVE_RULE.windowHours} ` +
  `hours, with its 20-hour average within ${MOVE_RULE.flatBelowPct}% of its 50-hour average, is flat: its trend, ` +
  'momentum and directional movement read no direction and its lean is neutral. A move of ' +
  `${MOVE_RULE.largeFromPct}% or more either way is worded large; a smaller one large from ` +
  `${MOVE_RULE.largeFromZ} times the move its recent volatility leads one to expect, moderate from ` +
  `${MOVE_RULE.moderateFromZ} time.`;

export type MoveSize = 'flat' | 'usual' | 'moderate' | 'large';

/** The size of a move over the momentum window, by MOVE_RULE: the words of the evidence and of the lean. */
export const moveSizeOf = (moveFraction: number, z: number): MoveSize => {
  const pct = Math.abs(moveFraction) * 100;
  if (pct < MOVE_RULE.flatBelowPct) return 'flat';
  if (pct >= MOVE_RULE.largeFromPct || Math.abs(z) >= MOVE_RULE.largeFromZ) return 'large';
  return Math.abs(z) >= MOVE_RULE.moderateFromZ ? 'moderate' : 'usual';
};

export interface TrendReading {
  close: number;
  ema20: number;
  ema50: number;
  atr14: number;
  /** Gap between EMA20 and EMA50 measured in ATRs. */
  emaGapAtr: number;
  /** Log return over the momentum window. */
  momentumReturn: number;
  /** The window's hours: 48, or fewer when the history is shorter. */
  momentumHours: number;
  /** Momentum divided by the volatility expected over the window (a z-like value). */
  momentumZ: number;
  adx: number;
  plusDi: number;
  minusDi: number;
  /** Standard deviation of hourly log returns over the last week. */
  hourlyVol: number;
  /** MOVE_RULE's size of the move over the momentum window. */
  moveSize: MoveSize;
  /** Flat price (MOVE_RULE): the move is flat and the 20-hour average within the same margin of the 50-hour one. */
  flat: boolean;
  /** Internal signals in [-1, 1]; never published. */
  signals: Record<TrendSignal, number>;
  /** Number of candles read. */
  candles: number;
  /**
   * The signals that had too few candles to settle (SETTLED_CANDLES): read, but still depending on where the history
   * was cut, so confidence counts them as if they could have read either way.
   */
  unsettled: TrendSignal[];
}

/** A signal as every reading counts it (the asset's lean, the regime's median trend): none for a flat price (MOVE_RULE). */
export const directedSignal = (trend: TrendReading, name: TrendSignal): number =>
  trend.flat ? 0 : trend.signals[name];

const trueRange = (c: Candle, prevClose: number): number =>
  Math.max(c.high - c.low, Math.abs(c.high - prevClose), Math.abs(c.low - prevClose));

/** Wilder's smoothing: a running sum that forgets 1/period of itself each bar. */
const wilderSums = (xs: readonly number[], period: number): number[] => {
  if (xs.length < period) return [];
  let s = xs.slice(0, period).reduce((a, b) => a + b, 0);
  const out = [s];
  for (let i = period; i < xs.length; i++) {
    s = s - s / period + xs[i]!;
    out.push(s);
  }
  return out;
};

interface Dmi {
  adx: number;
  plusDi: number;
  minusDi: number;
  atr: number;
}

export const directionalMovement = (candles: readonly Candle[], period = ATR_PERIOD): Dmi | null => {
  if (candles.length < 2 * period + 1) return null;
  const tr: number[] = [];
  const plusDm: number[] = [];
  const minusDm: number[] = [];
  for (let i = 1; i < candles.length; i++) {
    const c = candles[i]!;
    const p = candles[i - 1]!;
    const up = c.high - p.high;
    const down = p.low - c.low;
    tr.push(trueRange(c, p.close));
    plusDm.push(up > down && up > 0 ? up : 0);
    minusDm.push(down > up && down > 0 ? down : 0);
  }
  const str = wilderSums(tr, period);
  const spdm = wilderSums(plusDm, period);
  const smdm = wilderSums(minusDm, period);
  const dx: number[] = [];
  let plusDi = 0;
  let minusDi = 0;
  for (let i = 0; i < str.length; i++) {
    plusDi = str[i]! > 0 ? (100 * spdm[i]!) / str[i]! : 0;
    minusDi = str[i]! > 0 ? (100 * smdm[i]!) / str[i]! : 0;
    const total = plusDi + minusDi;
    dx.push(total > 0 ? (100 * Math.abs(plusDi - minusDi)) / total : 0);
  }
  let adx = dx.slice(0, period).reduce((a, b) => a + b, 0) / period;
  for (let i = period; i < dx.length; i++) adx = (adx * (period - 1) + dx[i]!) / period;
  return { adx, plusDi, minusDi, atr: last(str)! / period };
};

/**
 * The price `hours` hours before the last candle's close: the close of the latest candle that opened at or before
 * that many hours before the last one (an hour with no candle had no trade, so the close before it stands), or the
 * first candle's when the history is shorter; `hours` is the span that was read. Counting candles instead would
 * stretch the window by an hour for every one missing.
 */
export function closeHoursBefore(
  candles: readonly Candle[],
  hours: number,
): { close: number; hours: number } {
  const lastOpen = last(candles)!.openTime;
  let i = candles.length - 1;
  while (i > 0 && candles[i]!.openTime > lastOpen - hours * HOUR_MS) i--;
  return {
    close: candles[i]!.close,
    hours: Math.min(hours, Math.round((lastOpen - candles[i]!.openTime) / HOUR_MS)),
  };
}

export function readTrend(candles: readonly Candle[]): TrendReading | null {
  if (candles.length < MIN_TREND_CANDLES) return null;
  const closes = candles.map((c) => c.close);
  if (closes.some((c) => !(c > 0))) return null;
  // Each part reads only the last candles it needs to settle (SETTLED_CANDLES, PROVISIONAL_RULE): an older candle
  // never changes it, so a longer history reads exactly as a settled one, and two venues' limits read alike.
  const emaCloses = closes.slice(-EMA_SETTLED_CANDLES);
  const ema20 = last(emaSeries(emaCloses, FAST))!;
  const ema50 = last(emaSeries(emaCloses, SLOW))!;
  const dmi = directionalMovement(candles.slice(-ADX_SETTLED_CANDLES));
  if (dmi === null || !(dmi.atr > 0)) return null;

  const returns = logReturns(closes);
  const hourlyVol = stdev(returns.slice(-VOL_WINDOW)) ?? 0;
  const close = last(closes)!;
  const { close: before, hours: momentumHours } = closeHoursBefore(candles, MOMENTUM_HOURS);
  const momentumReturn = Math.log(close / before);
  const momentumZ = hourlyVol > 0 ? momentumReturn / (hourlyVol * Math.sqrt(momentumHours)) : 0;
  const emaGapAtr = (ema20 - ema50) / dmi.atr;
  const moveSize = moveSizeOf(Math.expm1(momentumReturn), momentumZ);
  const flat = moveSize === 'flat' && (100 * Math.abs(ema20 - ema50)) / ema50 < MOVE_RULE.flatBelowPct;

  // DMI direction only counts once ADX says there is a trend (Wilder: < 20 none, > 25 trending).
  const diTotal = dmi.plusDi + dmi.minusDi;
  const diBalance = diTotal > 0 ? (dmi.plusDi - dmi.minusDi) / diTotal : 0;
  const trendiness = clamp((dmi.adx - 15) / 10, 0, 1);

  return {
    close,
    ema20,
    ema50,
    atr14: dmi.atr,
    emaGapAtr,
    momentumReturn,
    momentumHours,
    momentumZ,
    adx: dmi.adx,
    plusDi: dmi.plusDi,
    minusDi: dmi.minusDi,
    hourlyVol,
    moveSize,
    flat,
    signals: {
      ema: squash(emaGapAtr, 2),
      momentum: squash(momentumZ, 1.5),
      dmi: clamp(diBalance * 2, -1, 1) * trendiness,
    },
    candles: candles.length,
    unsettled: (['ema', 'momentum', 'dmi'] as const).filter((name) => candles.length < SETTLED_CANDLES[name]),
  };
}
