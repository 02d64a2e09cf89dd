// Derivatives positioning of one asset: funding (8h, annualised, robust z-score against 30 days), crowding,
// basis, the four open-interest-versus-price readings, a leverage proxy and liquidations.
import type { Bias } from '../../schemas/common.ts';
import {
  FUNDING_RULE,
  LIQUIDATION_SIDE_RULE,
  OPEN_INTEREST_RULE,
  type DerivativesState,
  type FundingLevel,
  type OpenInterestReading,
} from '../../schemas/derivatives.ts';
import type { AssetMarket, Funding, FundingRateKind, OpenInterest } from '../market/types.ts';
import { clamp, mad, median, round } from './math.ts';
import { pct, signedPct, usd } from './format.ts';
import { venueLabel } from './labels.ts';

const HOUR = 3_600_000;
const MAD_TO_SIGMA = 1.4826;
/** Floor of the robust spread (0.001 % per 8h): venues often pin funding at a constant base rate. */
const MIN_FUNDING_SPREAD = 0.00001;
const LEAN_DEAD_BAND = 0.15;

export interface FundingReading {
  rate8h: number;
  /** Whether `rate8h` is the running period's predicted rate or a settled one. */
  rateKind: FundingRateKind;
  annualised: number;
  intervalHours: number;
  z: number | null;
  historyPoints: number;
  /** Whole days the `historyPoints` settled rates span (at most the window's 30). */
  historyDays: number;
  level: FundingLevel;
  /** What decided `level`: a fixed mark (extremes), the z-score, or the fixed bands used without one. */
  levelBasis: 'fixed_mark' | 'history' | 'fixed_band';
  crowding: 'crowded_longs' | 'crowded_shorts' | 'none';
  basis: number | null;
  venue: string;
}

export interface OpenInterestReadingDetail {
  valueUsd: number;
  change24h: number | null;
  priceChange24h: number | null;
  reading: OpenInterestReading | null;
  leverageProxy: number | null;
  /** The venue whose spot volume `leverageProxy` divides by; null with the proxy. */
  volumeVenue: string | null;
  venue: string;
}

export interface LiquidationReading {
  longUsd: number;
  shortUsd: number;
  events: number;
  /** By LIQUIDATION_SIDE_RULE; null for an estimate, which counts voluntary closes too and cannot name a side. */
  dominant: 'longs' | 'shorts' | 'balanced' | 'none' | null;
  estimated: boolean;
  venue: string;
}

export interface DerivativesReading {
  funding: FundingReading | null;
  openInterest: OpenInterestReadingDetail | null;
  liquidations: LiquidationReading | null;
  state: DerivativesState;
  /** Internal lean in [-1, 1] from the inputs that came in (a missing one adds nothing); never published. */
  lean: number;
  /**
   * Internal: the lowest and highest lean the complete evidence could have given, a missing input taking any of its
   * values; both equal `lean` when nothing is missing. Never published.
   */
  leanRange: { min: number; max: number };
  /** Internal: share of the two directional inputs (funding, a readable open-interest change) that came in. */
  coverage: number;
  vote: Bias | null;
  confidence: number | null;
  evidence: string[];
  /** Every limitation of this reading, each starting "SYMBOL: ". */
  limitations: string[];
  /**
   * The limitations of sections that came in but weaker than usual (a settled-only rate, too few settled rates, a
   * one-point open-interest history, estimated liquidations): every body built on the asset lists them, while a
   * missing section is stated by each body in its own words.
   */
  gaps: string[];
}

/**
 * Decimals of the published figures (derivatives-body.ts): `rate_8h_pct`, `z_score_30d`, the open-interest and price
 * `change_24h_pct`. Labels read the figures at these decimals, so that a label never contradicts the number beside
 * it (a rate of 0.099996 % is published as 0.1 and must read `extreme_high`, "at or above +0.1 %").
 */
export const PUBLISHED_DECIMALS = { fundingPct: 4, zScore: 2, changePct: 2 } as const;

/** A funding rate (fraction per 8 h) as published: percent at `fundingPct` decimals. */
const publishedFundingPct = (rate8h: number): number => round(rate8h * 100, PUBLISHED_DECIMALS.fundingPct);

/** A 24-hour change (fraction) at the precision it is published with, back as a fraction. */
const publishedChange = (fraction: number): number =>
  round(fraction * 100, PUBLISHED_DECIMALS.changePct) / 100;

/** A change in evidence, at the published decimals: "+2.0 %" beside "little change" would contradict the ±2 % band. */
const shownChange = (fraction: number): string =>
  signedPct(publishedChange(fraction), PUBLISHED_DECIMALS.changePct);

/**
 * `level` by FUNDING_RULE (its published description says the same): fixed marks first, then the z-score. Rate and
 * z-score are read as published, the marks at the same precision.
 */
const fundingLevel = (rate8h: number, rawZ: number | null): Pick<FundingReading, 'level' | 'levelBasis'> => {
  const r = FUNDING_RULE;
  const rate = publishedFundingPct(rate8h);
  const mark = publishedFundingPct;
  const z = rawZ === null ? null : round(rawZ, PUBLISHED_DECIMALS.zScore);
  if (rate >= mark(r.extremeHigh8h)) return { level: 'extreme_high', levelBasis: 'fixed_mark' };
  if (z !== null && z >= r.extremeZ) return { level: 'extreme_high', levelBasis: 'history' };
  if (rate <= mark(r.extremeLow8h)) return { level: 'extreme_low', levelBasis: 'fixed_mark' };
  if (z !== null) {
    const level = z <= -r.extremeZ ? 'extreme_low' : z >= r.highZ ? 'high' : z <= -r.highZ ? 'low' : 'normal';
    return { level, levelBasis: 'history' };
  }
  const level = rate >= mark(r.high8h) ? 'high' : rate <= mark(r.low8h) ? 'low' : 'normal';
  return { level, levelBasis: 'fixed_band' };
};

/** Crowding by the published rate too: "above the base rate" and "negative" as a reader of `rate_8h_pct` sees them. */
const crowdingOf = (level: FundingLevel, rate8h: number): FundingReading['crowding'] => {
  const rate = publishedFundingPct(rate8h);
  if (level === 'extreme_high' && rate > publishedFundingPct(FUNDING_RULE.base8h)) return 'crowded_longs';
  if (level === 'extreme_low' && rate < 0) return 'crowded_shorts';
  return 'none';
};

const DAY = 24 * HOUR;

/** Settled rates and the whole days they span. */
interface FundingWindow {
  rates: number[];
  days: number;
}

/**
 * The settled rates of the last 30 days before the latest settlement, and the days they span: from each rate's
 * settlement time where the history carries them (the span starts one interval before the oldest settlement, the
 * period it paid for), so a change of interval inside the window (8 h rates, then 4 h) is read as it happened.
 * Without times they are counted at the venue's current interval (90 at 8 h, 180 at 4 h, 720 at 1 h). A venue that
 * gave less history gives fewer.
 */
const lastWindow = (funding: Funding): FundingWindow => {
  const { history8h, historyTimes: times, intervalHours } = funding;
  const newest = times?.at(-1);
  if (times === undefined || times.length !== history8h.length || newest === undefined) {
    const rates = history8h.slice(-Math.round((FUNDING_RULE.windowDays * 24) / Math.max(1, intervalHours)));
    return {
      rates,
      days: Math.min(FUNDING_RULE.windowDays, Math.round((rates.length * intervalHours) / 24)),
    };
  }
  const first = times.findIndex((time) => time > newest - FUNDING_RULE.windowDays * DAY);
  const oldest = times[first] ?? newest;
  const oldestInterval =
    first + 1 < times.length ? (times[first + 1] ?? newest) - oldest : intervalHours * HOUR;
  const days = Math.round((newest - oldest + oldestInterval) / DAY);
  return { rates: history8h.slice(first), days: Math.min(FUNDING_RULE.windowDays, days) };
};

export const readFunding = (funding: Funding, venue: string): FundingReading => {
  const { rates: history, days } = lastWindow(funding);
  const centre = median(history);
  const spread = mad(history);
  const z =
    history.length >= FUNDING_RULE.minHistory && centre !== null && spread !== null
      ? (funding.rate8h - centre) / Math.max(MAD_TO_SIGMA * spread, MIN_FUNDING_SPREAD)
      : null;
  const { level, levelBasis } = fundingLevel(funding.rate8h, z);
  const crowding = crowdingOf(level, funding.rate8h);
  const basis =
    funding.markPrice !== null && funding.indexPrice !== null && funding.indexPrice > 0
      ? (funding.markPrice - funding.indexPrice) / funding.indexPrice
      : null;
  return {
    rate8h: funding.rate8h,
    rateKind: funding.rateKind,
    annualised: funding.rate8h * 3 * 365,
    intervalHours: funding.intervalHours,
    z,
    historyPoints: history.length,
    historyDays: days,
    level,
    levelBasis,
    crowding,
    basis,
    venue,
  };
};

/** Open interest about 24 hours before the reference time (nearest hourly point within 90 minutes). */
const valueDayAgo = (oi: OpenInterest, referenceMs: number): number | null => {
  const target = referenceMs - 24 * HOUR;
  let best: { gap: number; value: number } | null = null;
  for (const p of oi.history) {
    const gap = Math.abs(p.time - target);
    if (best === null || gap < best.gap) best = { gap, value: p.valueUsd };
  }
  return best !== null && best.gap <= 1.5 * HOUR && best.value > 0 ? best.value : null;
};

/**
 * Open interest against price by OPEN_INTEREST_RULE (its published description says the same), for changes as given;
 * readOpenInterest gives them as published.
 */
export const oiReading = (oiChange: number, priceChange: number): OpenInterestReading => {
  if (Math.abs(oiChange) < OPEN_INTEREST_RULE.flatBand) return 'flat';
  // A price that barely moved names no side: a sign alone would flip the reading, and the lean, on noise.
  if (Math.abs(priceChange) < OPEN_INTEREST_RULE.priceFlatBand)
    return oiChange > 0 ? 'new_positions' : 'closing_positions';
  if (oiChange > 0) return priceChange > 0 ? 'new_longs' : 'new_shorts';
  return priceChange > 0 ? 'short_covering' : 'deleveraging';
};

/**
 * The day's spot volume of the asset as the leverage proxy's denominator: the ticker's, with the venue it counts.
 * CoinGecko's is every exchange's trades together (a hundred times one venue's and more): open interest against it
 * reads nothing about leverage and is not set against it (`aggregateOf` names it for the limitation).
 */
interface SpotVolume {
  usd: number | null;
  venue: string | null;
  aggregateOf: string | null;
}

const spotVolumeOf = (asset: AssetMarket, volume24hUsd: number | null): SpotVolume => {
  const ticker = asset.ticker;
  // Named as every venue of the bodies is: "binance-spot (simulated)" on a simulated run.
  const named = ticker ? venueLabel(ticker.provenance.venue, ticker.provenance.mode) : null;
  if (ticker?.value.volumeScope === 'all-exchanges') return { usd: null, venue: null, aggregateOf: named };
  return { usd: volume24hUsd, venue: named, aggregateOf: null };
};

const readOpenInterest = (
  oi: OpenInterest,
  referenceMs: number,
  venue: string,
  priceChange24h: number | null,
  volume: SpotVolume,
): OpenInterestReadingDetail => {
  const leverageProxy =
    volume.usd !== null && volume.usd > 0 && volume.venue !== null ? oi.valueUsd / volume.usd : null;
  const before = valueDayAgo(oi, referenceMs);
  const change24h = before === null ? null : oi.valueUsd / before - 1;
  // Read as published: a change of 1.9996 % is published as 2 and is not "less than 2 % either way".
  return {
    valueUsd: oi.valueUsd,
    change24h,
    priceChange24h,
    reading:
      change24h !== null && priceChange24h !== null
        ? oiReading(publishedChange(change24h), publishedChange(priceChange24h))
        : null,
    leverageProxy,
    volumeVenue: leverageProxy === null ? null : volume.venue,
    venue,
  };
};

/**
 * What each open-interest reading gives: its internal lean, its words in the evidence, and the asset's state when
 * funding is not crowded (a reading that names no side leaves it `balanced`).
 */
const OI_READINGS: Record<OpenInterestReading, { lean: number; words: string; state: DerivativesState }> = {
  new_longs: { lean: 0.5, words: 'a pattern usually read as new long positions', state: 'new_longs' },
  short_covering: {
    lean: 0.25,
    words: 'a pattern usually read as short positions being closed',
    state: 'short_covering',
  },
  new_shorts: { lean: -0.5, words: 'a pattern usually read as new short positions', state: 'new_shorts' },
  deleveraging: {
    lean: -0.25,
    words: 'a pattern usually read as positions being closed on the long side (deleveraging)',
    state: 'deleveraging',
  },
  new_positions: {
    lean: 0,
    words: 'positions opened with the price too flat to say which side opened them',
    state: 'balanced',
  },
  closing_positions: {
    lean: 0,
    words: 'positions closed with the price too flat to say which side closed them',
    state: 'balanced',
  },
  flat: { lean: 0, words: 'little change in positioning', state: 'balanced' },
};

/** How the level was decided, in words: the fixed mark, or the z-score against the last 30 days. */
const levelWords = (f: FundingReading): string => {
  const level = f.level.replace('_', ' ');
  const days = f.historyDays;
  const history =
    f.z === null
      ? ''
      : `a robust z-score of ${round(f.z, 2).toFixed(2)} against the ${f.historyPoints} settled rates of ` +
        `the last ${days} days`;
  if (f.levelBasis === 'fixed_mark') {
    const mark = f.level === 'extreme_high' ? FUNDING_RULE.extremeHigh8h : FUNDING_RULE.extremeLow8h;
    const side = f.level === 'extreme_high' ? 'above' : 'below';
    return `: ${level}, at or ${side} the fixed mark of ${signedPct(mark, 2)} per 8 hours${history && ` (${history})`}`;
  }
  if (f.levelBasis === 'history') return `: ${level} against its recent history (${history})`;
  return f.level === 'normal' ? '' : `: ${level} by the fixed bands used without enough history`;
};

const describeFunding = (f: FundingReading): string[] => {
  const rate = `${pct(f.rate8h, 4)} per 8 hours (${pct(f.annualised, 1)} annualised)`;
  const lines = [
    (f.rateKind === 'predicted'
      ? `Funding predicted for the period now running is ${rate}`
      : `The last settled funding rate is ${rate}`) +
      levelWords(f) +
      '.',
  ];
  if (f.crowding === 'crowded_longs')
    lines.push('Longs pay an unusually high premium: positioning looks crowded long.');
  if (f.crowding === 'crowded_shorts')
    lines.push('Shorts pay to stay short: positioning looks crowded short.');
  if (f.basis !== null) lines.push(`The perpetual trades ${signedPct(f.basis, 3)} against its index.`);
  return lines;
};

/**
 * An estimate is said to be one before any figure: it counts every position closed as open interest fell (voluntary
 * closes too, which dominate), so it is an upper bound, never liquidations observed.
 */
const describeLiquidations = (l: LiquidationReading): string =>
  l.estimated
    ? 'An estimated upper bound, not liquidations observed: over 24 hours open interest fell by ' +
      `${usd(l.longUsd)} in hours the price fell (counted as longs) and ${usd(l.shortUsd)} in hours it rose ` +
      '(counted as shorts); voluntary closes count too, so liquidations were at most that, and no side is named ' +
      'as liquidated more.'
    : `Liquidations over 24 hours: ${usd(l.longUsd)} of longs and ${usd(l.shortUsd)} of shorts.`;

/** `dominant_side` by LIQUIDATION_SIDE_RULE (its published description says the same). */
const dominantSide = (longUsd: number, shortUsd: number): NonNullable<LiquidationReading['dominant']> => {
  const total = longUsd + shortUsd;
  if (total <= 0) return 'none';
  const longShare = longUsd / total;
  const r = LIQUIDATION_SIDE_RULE;
  return longShare > r.longsAbove ? 'longs' : longShare < r.shortsBelow ? 'shorts' : 'balanced';
};

/**
 * `balanced` is a reading (what came in shows no side), so it needs funding or a readable open-interest change: an
 * open-interest value alone, with no 24-hour comparison, reads nothing and is `unavailable`.
 */
const stateOf = (f: FundingReading | null, o: OpenInterestReadingDetail | null): DerivativesState => {
  if (f === null && !o?.reading) return 'unavailable';
  if (f !== null && f.crowding !== 'none') return f.crowding;
  return o?.reading ? OI_READINGS[o.reading].state : 'balanced';
};

/** Crowding is read against the crowd: a crowded side is the one at risk of a squeeze. */
const CROWDING_LEAN: Record<FundingReading['crowding'], number> = {
  crowded_longs: -0.4,
  crowded_shorts: 0.4,
  none: 0,
};

/**
 * Every lean the complete evidence could give: the inputs that came in at their value, a missing one at each of
 * its possible values. A single value when nothing is missing.
 */
/**
 * Open interest's lean plus crowding's, within [-1, 1]. Rounded to hundredths, as the parts are: in binary,
 * -0.25 + 0.4 is 0.15000000000000002, which read past the dead band and voted bullish at its very edge.
 */
const leanOf = (openInterestLean: number, crowdingLean: number): number =>
  round(clamp(openInterestLean + crowdingLean, -1, 1), 2);

const possibleLeans = (f: FundingReading | null, o: OpenInterestReadingDetail | null): number[] => {
  const oiLeans = o?.reading ? [OI_READINGS[o.reading].lean] : Object.values(OI_READINGS).map((r) => r.lean);
  const crowdingLeans = f ? [CROWDING_LEAN[f.crowding]] : Object.values(CROWDING_LEAN);
  return oiLeans.flatMap((oi) => crowdingLeans.map((c) => leanOf(oi, c)));
};

export function readDerivatives(
  asset: AssetMarket,
  priceChange24h: number | null,
  volume24hUsd: number | null,
): DerivativesReading {
  const evidence: string[] = [];
  const limitations: string[] = [];
  const gaps: string[] = [];
  const s = asset.symbol;
  const gap = (text: string) => {
    gaps.push(`${s}: ${text}`);
    limitations.push(`${s}: ${text}`);
  };

  const funding = asset.funding ? readFunding(asset.funding.value, asset.funding.provenance.venue) : null;
  if (funding) {
    evidence.push(...describeFunding(funding));
    if (funding.rateKind === 'settled')
      gap('funding is the last settled rate; the venue gave no prediction for the period now running.');
    if (funding.z === null)
      gap(
        `only ${funding.historyPoints} settled funding rates; no comparison with the last ${FUNDING_RULE.windowDays} days.`,
      );
  } else limitations.push(`${s}: no funding data this run.`);

  const oi = asset.openInterest;
  const volume = spotVolumeOf(asset, volume24hUsd);
  const openInterest = oi
    ? readOpenInterest(oi.value, oi.provenance.asOf, oi.provenance.venue, priceChange24h, volume)
    : null;
  if (openInterest?.reading && openInterest.change24h !== null && openInterest.priceChange24h !== null) {
    evidence.push(
      `Open interest changed ${shownChange(openInterest.change24h)} over 24 hours while price changed ` +
        `${shownChange(openInterest.priceChange24h)}: ${OI_READINGS[openInterest.reading].words}.`,
    );
  } else if (openInterest)
    gap(
      openInterest.change24h === null
        ? 'open-interest history too short for a 24-hour comparison.'
        : 'no 24-hour price change to read the open-interest change against.',
    );
  else limitations.push(`${s}: no open-interest data this run.`);
  if (openInterest?.leverageProxy != null && openInterest.volumeVenue !== null)
    evidence.push(
      `Open interest equals ${openInterest.leverageProxy.toFixed(2)} times the day's spot volume at ` +
        `${openInterest.volumeVenue}.`,
    );
  else if (openInterest && volume.aggregateOf !== null)
    limitations.push(
      `${s}: no leverage proxy this run: the only 24-hour volume came from ${volume.aggregateOf}, the trades of ` +
        "all exchanges together, not one venue's spot volume to set open interest against.",
    );

  const liq = asset.liquidations;
  const liquidations: LiquidationReading | null = liq
    ? {
        longUsd: liq.value.longUsd24h,
        shortUsd: liq.value.shortUsd24h,
        events: liq.value.events,
        dominant: liq.provenance.estimated ? null : dominantSide(liq.value.longUsd24h, liq.value.shortUsd24h),
        estimated: liq.provenance.estimated,
        venue: liq.provenance.venue,
      }
    : null;
  if (liquidations) {
    evidence.push(describeLiquidations(liquidations));
    if (liquidations.estimated)
      gap(
        'liquidation figures are estimates, not observed liquidations: an upper bound from open-interest drops.',
      );
  } else limitations.push(`${s}: no liquidation data this run.`);

  const lean = leanOf(
    openInterest?.reading ? OI_READINGS[openInterest.reading].lean : 0,
    funding ? CROWDING_LEAN[funding.crowding] : 0,
  );
  const possible = possibleLeans(funding, openInterest);
  const leanRange = { min: Math.min(...possible), max: Math.max(...possible) };
  const coverage = ((funding ? 1 : 0) + (openInterest?.reading ? 1 : 0)) / 2;

  const state = stateOf(funding, openInterest);
  if (state === 'unavailable' && openInterest)
    limitations.push(
      `${s}: no positioning reading this run: no funding, and open interest without a 24-hour comparison reads nothing.`,
    );
  // An estimate is read from the open interest already counted: no evidence of its own.
  const observedLiquidations = liquidations !== null && !liquidations.estimated;
  const availability =
    (funding ? 0.45 : 0) + (openInterest?.reading ? 0.45 : 0) + (observedLiquidations ? 0.1 : 0);
  // A missing input counts as its least favourable value (the weakest lean it could give, funding without enough
  // history), so that confidence never rises when a section goes missing.
  const historyFactor = funding === null || funding.z === null ? 0.85 : 1;
  const weakest = Math.min(...possible.map(Math.abs));
  const confidence =
    state === 'unavailable'
      ? null
      : Math.round(
          Math.min(95, 100 * availability * historyFactor * (0.4 + 0.6 * Math.min(1, weakest / 0.5))),
        );
  const vote: Bias | null =
    state === 'unavailable'
      ? null
      : lean > LEAN_DEAD_BAND
        ? 'bullish'
        : lean < -LEAN_DEAD_BAND
          ? 'bearish'
          : 'neutral';
  return {
    funding,
    openInterest,
    liquidations,
    state,
    lean,
    leanRange,
    coverage,
    vote,
    confidence,
    evidence,
    limitations,
    gaps,
  };
}
