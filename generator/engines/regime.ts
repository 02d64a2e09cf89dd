// The market-wide regime: breadth, median trend, realised volatility and its percentile, drawdown from the
// recent high and average pairwise correlation, folded into a 0-100 risk score, a mode and a state.
//
// Confidence is the strength and agreement of the evidence at the least it could be whatever the missing inputs
// would have said: each reading is a range of what its true value could be (a point when everything came in), and
// confidence is read at the end of those ranges nearest to no lean at all. So an asset, a component or a stretch
// of history going missing can lower confidence but never raise it. Labels are read from the values as published.
import {
  REGIME_RULE,
  type MarketMode,
  type MarketState,
  type RiskLevel,
} from '../../schemas/market-regime.ts';
import type { AssetMarket, Candle } from '../market/types.ts';
import type { AssetAnalysis } from './asset-analysis.ts';
import { clamp, correlation, last, median, percentileRank, round, stdev } from './math.ts';
import { pct } from './format.ts';
import { symbolList } from './labels.ts';
import { directedSignal, EMA_SETTLED_CANDLES, provisionalRange, type TrendReading } from './trend.ts';

const VOL_WINDOW = 24;
const HOURS_PER_YEAR = 24 * 365;
const DRAWDOWN_LOOKBACK = REGIME_RULE.drawdownLookbackHours;
const CORRELATION_BARS = 72;
/** Pairwise correlation is O(n²): average it over the first assets only (30 assets = 435 pairs). */
export const CORRELATION_SAMPLE = 30;
/** The parts of the risk score, in the order the limitations name them. */
export const RISK_COMPONENTS = ['breadth', 'trend', 'volatility', 'drawdown', 'correlation'] as const;
export type RiskComponent = (typeof RISK_COMPONENTS)[number];
/** Internal weights of the risk components (sum 1); never published. */
const RISK_WEIGHTS: Readonly<Record<RiskComponent, number>> = {
  breadth: 0.25,
  trend: 0.25,
  volatility: 0.2,
  drawdown: 0.2,
  correlation: 0.1,
};
/** Drawdown this deep (median, from the 7-day high) counts as a full risk-off reading. */
const FULL_DRAWDOWN = 0.15;
const MAX_CONFIDENCE = 95;

export type VolatilityLevel = 'calm' | 'normal' | 'elevated' | 'extreme';

export interface RegimeReading {
  mode: MarketMode;
  state: MarketState;
  /** As published (REGIME_RULE.riskScoreDecimals): the mode and the risk level are read from this value. */
  riskScore: number | null;
  riskLevel: RiskLevel | null;
  confidence: number;
  assetsCovered: number;
  assetsTotal: number;
  breadth: { above: number; withData: number; share: number | null };
  /** Internal median EMA signal in [-1, 1]; only its direction is published. */
  medianTrend: number | null;
  medianDirection: 'up' | 'down' | 'flat' | null;
  /** `percentile` as published (REGIME_RULE.percentileDecimals); `level` is read from it. */
  volatility: { annualised: number | null; percentile: number | null; level: VolatilityLevel | null };
  drawdown: {
    median: number | null;
    deepestAsset: string | null;
    deepest: number | null;
    /** The shortest window any asset's history allowed, up to 168 hours. */
    lookbackHours: number;
  };
  /** `average` as published (REGIME_RULE.correlationDecimals); `level` is read from it. */
  correlation: {
    average: number | null;
    assetsSampled: number;
    pairs: number;
    level: 'low' | 'moderate' | 'high' | null;
  };
  evidence: string[];
  limitations: string[];
  summary: string;
  /** True when the reading rests on partial evidence: an asset, a component or part of the history missing. */
  degraded: boolean;
}

export interface RegimeOptions {
  /**
   * Components to treat as if they had not come in. Tests use it to show that losing any one of them never raises
   * confidence; a run never sets it.
   */
  leaveOut?: readonly RiskComponent[];
}

const HOUR_MS = 3_600_000;
/** `2026-11-20 10:00 UTC` */
const utcHour = (ms: number): string => `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;

/**
 * The latest hour every series has a bar for: the market's readings end there. Venues may be an hour late with
 * their last bar (the freshness check allows it), and reading series by position from their ends would pair one
 * asset's hour with another's previous hour.
 */
const commonLastHour = (series: readonly (readonly Candle[])[]): number | null =>
  series.length === 0 ? null : Math.min(...series.map((candles) => last(candles)?.openTime ?? -Infinity));

/**
 * A series' hourly log returns, indexed by how many hours before `end` their bar opened (0 = the bar of `end`): a
 * return is read only between bars an hour apart (one across a missing bar spans more than an hour), and bars after
 * `end` are left out. Hours without a return are holes.
 */
const returnsByHour = (candles: readonly Candle[], end: number): number[] => {
  const byHour: number[] = [];
  for (let i = candles.length - 1; i > 0; i--) {
    const bar = candles[i]!;
    const previous = candles[i - 1]!;
    if (bar.openTime > end || bar.openTime - previous.openTime !== HOUR_MS) continue;
    const r = Math.log(bar.close / previous.close);
    if (Number.isFinite(r)) byHour[Math.round((end - bar.openTime) / HOUR_MS)] = r;
  }
  return byHour;
};

/** Every series' returnsByHour up to their commonLastHour (`end`), read once for volatility and correlation. */
const hourlyReturns = (
  series: readonly (readonly Candle[])[],
): { end: number | null; byHour: number[][] } => {
  const end = commonLastHour(series);
  const readable = end !== null && Number.isFinite(end);
  return { end, byHour: series.map((candles) => (readable ? returnsByHour(candles, end) : [])) };
};

/** Equal-weighted hourly market return, oldest first, each hour's from the series with a return for that hour. */
const averageByHour = (byHour: readonly (readonly number[])[]): number[] => {
  const sums: number[] = [];
  const counts: number[] = [];
  for (const returns of byHour)
    returns.forEach((r, k) => {
      sums[k] = (sums[k] ?? 0) + r;
      counts[k] = (counts[k] ?? 0) + 1;
    });
  const returns: number[] = [];
  for (let k = sums.length - 1; k >= 0; k--) if (counts[k]) returns.push(sums[k]! / counts[k]!);
  return returns;
};

/** Equal-weighted hourly market return of candle series, oldest first (averageByHour of their hourly returns). */
export const marketReturns = (series: readonly (readonly Candle[])[]): number[] =>
  averageByHour(hourlyReturns(series).byHour);

const R = REGIME_RULE;
/** Labels of the published values (REGIME_RULE). */
const volatilityLevelOf = (percentile: number): VolatilityLevel =>
  percentile >= R.volatilityPercentile.extremeFrom
    ? 'extreme'
    : percentile >= R.volatilityPercentile.elevatedFrom
      ? 'elevated'
      : percentile <= R.volatilityPercentile.calmAtMost
        ? 'calm'
        : 'normal';
const correlationLevelOf = (average: number): RegimeReading['correlation']['level'] =>
  average >= R.correlationFrom.high ? 'high' : average >= R.correlationFrom.moderate ? 'moderate' : 'low';
const riskLevelOf = (risk: number): RiskLevel =>
  risk < R.riskLevelFrom.moderate
    ? 'low'
    : risk < R.riskLevelFrom.elevated
      ? 'moderate'
      : risk < R.riskLevelFrom.high
        ? 'elevated'
        : 'high';
const modeOf = (risk: number | null): MarketMode =>
  risk === null
    ? 'UNKNOWN'
    : risk < R.riskOnBelow
      ? 'RISK_ON'
      : risk >= R.riskOffFrom
        ? 'RISK_OFF'
        : 'NEUTRAL';

/** The rolling 24-hour readings a full rank window holds, and the fewest a percentile is ranked among. */
const RANKED_READINGS = R.volatilityRankHours - VOL_WINDOW + 1;
const MIN_RANKED_READINGS = 2 * VOL_WINDOW;

/**
 * Current rolling volatility and its unrounded percentile rank among the rolling readings of the last
 * REGIME_RULE.volatilityRankHours returns (null without enough history to rank it); `hours` is how many it ranked.
 * `fullRank` bounds the rank (0-1) the full window would give: the missing older readings could all lie below the
 * current one or all above it.
 */
const volatilityOf = (
  allReturns: readonly number[],
): { annualised: number | null; percentile: number | null; hours: number; fullRank: Range } => {
  const returns = allReturns.slice(-R.volatilityRankHours);
  const hours = returns.length;
  if (returns.length < VOL_WINDOW) return { annualised: null, percentile: null, hours, fullRank: UNREAD };
  const rolling: number[] = [];
  for (let end = VOL_WINDOW; end <= returns.length; end++)
    rolling.push(stdev(returns.slice(end - VOL_WINDOW, end))!);
  const current = last(rolling)!;
  const percentile = rolling.length >= MIN_RANKED_READINGS ? percentileRank(rolling, current) : null;
  const below = percentile === null ? 0 : (percentile / 100) * rolling.length;
  const older = RANKED_READINGS - rolling.length;
  const fullRank =
    percentile === null ? UNREAD : { lo: below / RANKED_READINGS, hi: (below + older) / RANKED_READINGS };
  return { annualised: current * Math.sqrt(HOURS_PER_YEAR), percentile, hours, fullRank };
};

/** Distance below the high of the last 168 bars, or of every bar when there are fewer (`window` says how many). */
const drawdownOf = (candles: readonly Candle[]): { dd: number | null; window: number } => {
  const recent = candles.slice(-DRAWDOWN_LOOKBACK);
  const high = Math.max(...recent.map((c) => c.high));
  const close = last(recent)?.close;
  return {
    dd: close !== undefined && high > 0 ? Math.min(0, close / high - 1) : null,
    window: recent.length,
  };
};

/** Unrounded average pairwise correlation of the hours both assets of a pair have, with the sum the bounds need. */
const correlationOf = (byHour: readonly (readonly number[])[]) => {
  const sampled = byHour.slice(0, CORRELATION_SAMPLE).map((returns) => returns.slice(0, CORRELATION_BARS));
  const values: number[] = [];
  for (let i = 0; i < sampled.length; i++)
    for (let j = i + 1; j < sampled.length; j++) {
      const c = correlation(...sharedHours(sampled[i]!, sampled[j]!));
      if (c !== null) values.push(c);
    }
  const sum = values.reduce((a, b) => a + b, 0);
  return {
    average: values.length > 0 ? sum / values.length : null,
    sum,
    assetsSampled: sampled.length,
    pairs: values.length,
  };
};

/** The returns of two series (indexed by hour) for the hours both have. */
const sharedHours = (a: readonly number[], b: readonly number[]): [number[], number[]] => {
  const xa: number[] = [];
  const xb: number[] = [];
  a.forEach((r, k) => {
    if (b[k] === undefined) return;
    xa.push(r);
    xb.push(b[k]);
  });
  return [xa, xb];
};

/** What a component's true risk reading (0 = risk-on, 1 = risk-off) could be, given what came in. */
interface Range {
  lo: number;
  hi: number;
}
/** A reading that did not come in could have said anything. */
const UNREAD: Range = { lo: 0, hi: 1 };
const pairsOf = (n: number) => (n * (n - 1)) / 2;
const drawdownRisk = (dd: number) => clamp(-dd / FULL_DRAWDOWN, 0, 1);
const correlationRisk = (average: number) => clamp((average - 0.2) / 0.6, 0, 1);

/**
 * Strength x agreement of the evidence at its weakest: every component at the end of its range nearest to no lean
 * (0 when the ranges allow no lean at all). With every range a point this is the reading of the evidence itself.
 */
function lowerBoundConfidence(ranges: ReadonlyMap<RiskComponent, Range>): number {
  let low = 0;
  let high = 0;
  let applicable = 0;
  for (const [name, r] of ranges) {
    low += RISK_WEIGHTS[name] * (2 * r.lo - 1);
    high += RISK_WEIGHTS[name] * (2 * r.hi - 1);
    applicable += RISK_WEIGHTS[name];
  }
  if (applicable === 0 || (low <= 0 && high >= 0)) return 0;
  let directed = 0;
  let magnitude = 0;
  for (const [name, r] of ranges) {
    const d = 2 * (high < 0 ? r.hi : r.lo) - 1;
    directed += RISK_WEIGHTS[name] * d;
    magnitude += RISK_WEIGHTS[name] * Math.abs(d);
  }
  const strength = Math.min(1, Math.abs(directed) / applicable / 0.5);
  const agreement = magnitude > 0 ? Math.abs(directed) / magnitude : 0;
  return Math.round(Math.min(MAX_CONFIDENCE, 100 * strength * agreement));
}

const MODE_WORDS: Record<MarketMode, string> = {
  RISK_ON: 'a risk-on market',
  RISK_OFF: 'a risk-off market',
  NEUTRAL: 'a market between risk-on and risk-off',
  UNKNOWN: 'no readable market regime',
};
const COMPONENT_WORDS: Record<RiskComponent, string> = {
  breadth: 'Breadth',
  trend: 'The median trend',
  volatility: 'Volatility',
  drawdown: 'Drawdown',
  correlation: 'Correlation',
};

/** An asset with a trend reading, with the candles it was read from: the regime reads only these. */
interface CoveredAsset {
  symbol: string;
  trend: TrendReading;
  candles: readonly Candle[];
}

/** Who the reading covers, so every step reads the assets with a trend and the missing ones from one place. */
interface Coverage {
  /** Every tracked asset, with a trend reading or without. */
  total: number;
  covered: CoveredAsset[];
  /** The symbols without a trend reading: left out of the reading, and counted as missing by the ranges. */
  missing: string[];
  /** Whether every asset of the correlation sample (the first CORRELATION_SAMPLE tracked) has a trend reading. */
  sampleCovered: boolean;
}

/** `analyses[i]` is the reading of `assets[i]`: pair each asset with a trend reading with its candles once. */
const coverageOf = (assets: readonly AssetMarket[], analyses: readonly AssetAnalysis[]): Coverage => ({
  total: analyses.length,
  covered: analyses.flatMap(({ symbol, trend }, i) =>
    trend === null ? [] : [{ symbol, trend, candles: assets[i]!.candles!.value }],
  ),
  missing: analyses.filter((a) => a.trend === null).map((a) => a.symbol),
  sampleCovered: analyses.slice(0, CORRELATION_SAMPLE).every((a) => a.trend !== null),
});

/** Correlation needs two assets: a universe of one has none to read, and it is not counted as missing. */
const correlationApplies = (coverage: Coverage): boolean => coverage.total >= 2;

/** Breadth's test: the asset closes above its 50-hour average. */
const isAbove = ({ trend }: CoveredAsset): boolean => trend.close > trend.ema50;
/** A flat price's trend reads no direction (MOVE_RULE), in the regime as in the asset's own lean. */
const emaSignal = ({ trend }: CoveredAsset): number => directedSignal(trend, 'ema');

/** Breadth, and the assets whose 50-hour average it counts provisionally. */
const readBreadth = (covered: readonly CoveredAsset[]) => {
  const above = covered.filter(isAbove).length;
  // A 50-hour average read from too few candles counts, as asset analysis counts it, but provisionally: breadth
  // counts the asset as if its settled average could put it either side, the median trend widens its signal by
  // the same margin asset analysis does (trend.ts provisionalRange), and the evidence names it.
  const provisional = covered.filter(({ trend }) => trend.unsettled.includes('ema'));
  const breadth: RegimeReading['breadth'] = {
    above,
    withData: covered.length,
    share: covered.length ? above / covered.length : null,
  };
  return { breadth, provisional, provisionalAbove: provisional.filter(isAbove).length };
};

/** The median EMA signal and the direction published for it. */
const readTrend = (covered: readonly CoveredAsset[]) => {
  const medianTrend = median(covered.map(emaSignal));
  const medianDirection: RegimeReading['medianDirection'] =
    medianTrend === null ? null : medianTrend > 0.1 ? 'up' : medianTrend < -0.1 ? 'down' : 'flat';
  return { medianTrend, medianDirection };
};

/** Volatility of the equal-weighted market's hourly returns, its percentile as published and its level. */
const readVolatility = (returns: readonly number[]) => {
  const rawVolatility = volatilityOf(returns);
  // Ranked against fewer hours than the full window: the limitations say so and give the bounds.
  const shortRank = rawVolatility.percentile !== null && rawVolatility.hours < R.volatilityRankHours;
  const percentile =
    rawVolatility.percentile === null ? null : round(rawVolatility.percentile, R.percentileDecimals);
  const volatility: RegimeReading['volatility'] = {
    annualised: rawVolatility.annualised,
    percentile,
    level: percentile === null ? null : volatilityLevelOf(percentile),
  };
  return { rawVolatility, shortRank, volatility };
};

/** One asset's drawdown (drawdownOf), named. */
interface AssetDrawdown {
  symbol: string;
  dd: number | null;
  window: number;
}

/** Every covered asset's drawdown, the deepest, those read from a short window, and the published median. */
const readDrawdown = (covered: readonly CoveredAsset[]) => {
  const drawdowns: AssetDrawdown[] = covered.map((a) => ({ symbol: a.symbol, ...drawdownOf(a.candles) }));
  const deepest = drawdowns.reduce<{ symbol: string; dd: number } | null>(
    (worst, d) =>
      d.dd !== null && (worst === null || d.dd < worst.dd) ? { symbol: d.symbol, dd: d.dd } : worst,
    null,
  );
  const shortWindows = drawdowns.filter((d) => d.window < DRAWDOWN_LOOKBACK);
  const drawdown: RegimeReading['drawdown'] = {
    median: median(drawdowns.flatMap((d) => (d.dd === null ? [] : [d.dd]))),
    deepestAsset: deepest?.symbol ?? null,
    deepest: deepest?.dd ?? null,
    lookbackHours: Math.min(DRAWDOWN_LOOKBACK, ...drawdowns.map((d) => d.window)),
  };
  return { drawdowns, deepest, shortWindows, drawdown };
};

/** Average pairwise correlation, as published, and the level read from it. */
const readCorrelation = (byHour: readonly (readonly number[])[]) => {
  const rawCorrelation = correlationOf(byHour);
  const average =
    rawCorrelation.average === null ? null : round(rawCorrelation.average, R.correlationDecimals);
  const correlation: RegimeReading['correlation'] = {
    average,
    assetsSampled: rawCorrelation.assetsSampled,
    pairs: rawCorrelation.pairs,
    level: average === null ? null : correlationLevelOf(average),
  };
  return { rawCorrelation, correlation };
};

/** Every reading of the covered assets: the published values and what the ranges, evidence and limitations need. */
const readComponents = (covered: readonly CoveredAsset[]) => {
  const hourly = hourlyReturns(covered.map((a) => a.candles));
  return {
    ...readBreadth(covered),
    ...readTrend(covered),
    /** The hour the market's volatility and correlation end with (commonLastHour). */
    end: hourly.end,
    ...readVolatility(averageByHour(hourly.byHour)),
    ...readDrawdown(covered),
    ...readCorrelation(hourly.byHour),
  };
};
type Components = ReturnType<typeof readComponents>;

// Each component as a risk reading in [0, 1] (1 = risk-off): the point read from what came in (null when it
// could not be read), and the range its true value could take had every input come in.

/** The points of the components that came in and are not left out, in RISK_COMPONENTS order. */
const componentPoints = (c: Components, leaveOut: ReadonlySet<RiskComponent>): Map<RiskComponent, number> => {
  const points = new Map<RiskComponent, number>();
  if (c.breadth.share !== null) points.set('breadth', 1 - c.breadth.share);
  if (c.medianTrend !== null) points.set('trend', (1 - c.medianTrend) / 2);
  if (c.rawVolatility.percentile !== null) points.set('volatility', c.rawVolatility.percentile / 100);
  if (c.drawdown.median !== null) points.set('drawdown', drawdownRisk(c.drawdown.median));
  if (c.rawCorrelation.average !== null) points.set('correlation', correlationRisk(c.rawCorrelation.average));
  for (const name of leaveOut) points.delete(name);
  return points;
};

/** A provisional average could put its asset either side of it, and a missing asset could lie either side. */
const breadthRange = (c: Components, { total, missing }: Coverage): Range => {
  if (c.breadth.share === null) return UNREAD;
  const settledAbove = c.breadth.above - c.provisionalAbove;
  return {
    lo: 1 - (settledAbove + c.provisional.length + missing.length) / total,
    hi: 1 - settledAbove / total,
  };
};

/** The median trend's range: provisional signals widened (provisionalRange), missing ones at either end. */
const trendRange = (c: Components, { covered, missing }: Coverage): Range => {
  if (c.medianTrend === null) return UNREAD;
  // A missing asset's trend signal lies in [-1, 1]; the median moves most with all of them at one end.
  const bounds = covered.map((asset) => {
    const signal = emaSignal(asset);
    return asset.trend.unsettled.includes('ema')
      ? provisionalRange('ema', signal, asset.trend.candles)
      : { min: signal, max: signal };
  });
  const low = median([...bounds.map((b) => b.min), ...Array<number>(missing.length).fill(-1)])!;
  const high = median([...bounds.map((b) => b.max), ...Array<number>(missing.length).fill(1)])!;
  return { lo: (1 - high) / 2, hi: (1 - low) / 2 };
};

// The equal-weighted market without an asset is another market: its volatility could rank anywhere.
// A shorter history bounds the rank the full window would give (volatilityOf).
const volatilityRange = (c: Components, { missing }: Coverage): Range =>
  c.rawVolatility.percentile !== null && missing.length === 0 ? c.rawVolatility.fullRank : UNREAD;

/** The median drawdown's range, over the drawdowns each asset's history leaves possible. */
const drawdownRange = (c: Components, { missing }: Coverage): Range => {
  if (c.drawdown.median === null) return UNREAD;
  // The 7-day high is at least the high of a shorter window, so a short history bounds the drawdown on one side
  // only; a missing asset's drawdown could be anything.
  const bounds = [
    ...c.drawdowns.map((d) =>
      d.dd === null ? { lo: -1, hi: 0 } : { lo: d.window < DRAWDOWN_LOOKBACK ? -1 : d.dd, hi: d.dd },
    ),
    ...Array.from({ length: missing.length }, () => ({ lo: -1, hi: 0 })),
  ];
  const deepestMedian = median(bounds.map((b) => b.lo))!;
  const shallowestMedian = median(bounds.map((b) => b.hi))!;
  return { lo: drawdownRisk(shallowestMedian), hi: drawdownRisk(deepestMedian) };
};

/** null where correlation does not apply (correlationApplies): it is then no component of the reading. */
const correlationRange = (c: Components, coverage: Coverage): Range | null => {
  if (!correlationApplies(coverage)) return null;
  const { total, covered } = coverage;
  const missingFromSample =
    total <= CORRELATION_SAMPLE
      ? pairsOf(total) - pairsOf(covered.length)
      : coverage.sampleCovered
        ? 0
        : null;
  if (c.rawCorrelation.average === null || missingFromSample === null) return UNREAD;
  // Each pair a missing asset would have formed has a correlation in [-1, 1].
  const k = missingFromSample;
  const n = c.rawCorrelation.pairs;
  const s = c.rawCorrelation.sum;
  return { lo: correlationRisk((s - k) / (n + k)), hi: correlationRisk((s + k) / (n + k)) };
};

/** Each component's range by name, so componentRanges reads them in RISK_COMPONENTS order. */
const RANGE_OF: Record<RiskComponent, (c: Components, coverage: Coverage) => Range | null> = {
  breadth: breadthRange,
  trend: trendRange,
  volatility: volatilityRange,
  drawdown: drawdownRange,
  correlation: correlationRange,
};

/** The range of every component that applies, in RISK_COMPONENTS order; a left-out one could have said anything. */
const componentRanges = (
  c: Components,
  coverage: Coverage,
  leaveOut: ReadonlySet<RiskComponent>,
): Map<RiskComponent, Range> => {
  const ranges = new Map<RiskComponent, Range>();
  for (const name of RISK_COMPONENTS) {
    const range = RANGE_OF[name](c, coverage);
    if (range !== null) ranges.set(name, leaveOut.has(name) ? UNREAD : range);
  }
  return ranges;
};

/** The weighted mean of the points that came in, as published (REGIME_RULE.riskScoreDecimals); null with none. */
const riskScoreOf = (points: ReadonlyMap<RiskComponent, number>): number | null => {
  let weighted = 0;
  let weightAvailable = 0;
  for (const [name, c] of points) {
    weighted += RISK_WEIGHTS[name] * c;
    weightAvailable += RISK_WEIGHTS[name];
  }
  return weightAvailable > 0 ? round((100 * weighted) / weightAvailable, R.riskScoreDecimals) : null;
};

/** Caution for a risk-off or extremely volatile market; opportunity only for a confident risk-on one. */
const stateOf = (mode: MarketMode, volatility: VolatilityLevel | null, confidence: number): MarketState =>
  mode === 'UNKNOWN'
    ? 'UNKNOWN'
    : mode === 'RISK_OFF' || volatility === 'extreme'
      ? 'CAUTION'
      : mode === 'RISK_ON' && confidence >= R.opportunityConfidenceFrom
        ? 'OPPORTUNITY'
        : 'WAIT';

/**
 * Where the risk score could lie had everything come in, or null when the evidence is whole. Partial evidence:
 * anything that could have come in and did not (a single tracked asset has no correlation to miss). The mode stays
 * the band of the published score; the reading says what the gaps could have changed.
 */
const partialScoreRange = (
  riskScore: number,
  c: Components,
  coverage: Coverage,
  points: ReadonlyMap<RiskComponent, number>,
  ranges: ReadonlyMap<RiskComponent, Range>,
): { from: number; to: number } | null => {
  const partial =
    coverage.missing.length > 0 ||
    c.shortWindows.length > 0 ||
    c.shortRank ||
    c.provisional.length > 0 ||
    [...ranges.keys()].some((name) => !points.has(name));
  if (!partial) return null;
  let low = 0;
  let high = 0;
  let applicable = 0;
  for (const [name, r] of ranges) {
    low += RISK_WEIGHTS[name] * r.lo;
    high += RISK_WEIGHTS[name] * r.hi;
    applicable += RISK_WEIGHTS[name];
  }
  return {
    from: Math.min(riskScore, round((100 * low) / applicable, R.riskScoreDecimals)),
    to: Math.max(riskScore, round((100 * high) / applicable, R.riskScoreDecimals)),
  };
};

/** The evidence names the provisional averages after breadth and the median trend. */
const provisionalWords = (provisional: readonly CoveredAsset[]): string =>
  provisional.length === 0
    ? ''
    : ` (provisional for ${symbolList(provisional.map((a) => a.symbol))}: fewer than ${EMA_SETTLED_CANDLES} ` +
      'hourly candles for the average to settle)';

/** The high the drawdown evidence measures from: the 7-day high, or the shorter windows the history allowed. */
const recentHighWords = (c: Components): string => {
  const window = c.drawdown.lookbackHours;
  const longest = Math.max(...c.drawdowns.map((d) => d.window));
  return c.shortWindows.length === 0
    ? 'its 7-day high'
    : c.shortWindows.length < c.drawdowns.length
      ? `its recent high (the 7-day high; a shorter window for ${symbolList(c.shortWindows.map((d) => d.symbol))}, see limitations)`
      : longest === window
        ? `its ${window}-hour high`
        : `its recent high (a ${window}- to ${longest}-hour window, as each asset’s history allowed; see limitations)`;
};

/** One sentence for each component that was read, in RISK_COMPONENTS order. */
const regimeEvidence = (c: Components): string[] => {
  const evidence: string[] = [];
  const provisional = provisionalWords(c.provisional);
  if (c.breadth.share !== null)
    evidence.push(
      `${c.breadth.above} of ${c.breadth.withData} assets trade above their 50-hour exponential average${provisional}.`,
    );
  if (c.medianDirection !== null)
    evidence.push(
      `The typical asset's trend points ${c.medianDirection}` +
        (c.provisional.length === 0
          ? '.'
          : `, read partly from a provisional 50-hour average${provisional}.`),
    );
  const { annualised, percentile } = c.volatility;
  if (annualised !== null)
    evidence.push(
      `Market volatility over the last 24 hours is ${pct(annualised, 0)} annualised` +
        (percentile === null
          ? '.'
          : `, at percentile ${percentile} of its rolling 24-hour readings over the last ` +
            (c.shortRank
              ? `${c.rawVolatility.hours} hours (see limitations).`
              : `${R.volatilityRankHours / 24} days.`)),
    );
  if (c.drawdown.median !== null && c.deepest !== null)
    evidence.push(
      `The median asset trades ${pct(-c.drawdown.median, 1)} below ${recentHighWords(c)}; ${c.deepest.symbol} is furthest below at ${pct(-c.deepest.dd, 1)}.`,
    );
  if (c.correlation.average !== null)
    evidence.push(
      `Average pairwise correlation of hourly returns is ${c.correlation.average}` +
        (c.correlation.level === 'high'
          ? ': the assets’ hourly returns have been moving closely together.'
          : '.'),
    );
  return evidence;
};

/** What the market's hours, the volatility rank and correlation could not read. */
const readingLimitations = (c: Components, coverage: Coverage): string[] => {
  const limitations: string[] = [];
  const { covered, missing } = coverage;
  if (coverage.total === 0) limitations.push('No assets in this run: there is no market regime to read.');
  const ahead = covered.flatMap((a) => (last(a.candles)!.openTime > c.end! ? [a.symbol] : []));
  if (ahead.length > 0)
    limitations.push(
      `Market volatility and correlation end with the hour that opened at ${utcHour(c.end!)}, the latest every ` +
        `asset's candles reach: the later candles of ${symbolList(ahead)} are left out of them.`,
    );
  if (missing.length > 0)
    limitations.push(`Too little candle data for ${symbolList(missing)}: left out of the regime reading.`);
  if (c.rawVolatility.percentile === null && covered.length > 0)
    limitations.push(
      `Too little history to rank current volatility: it needs ${MIN_RANKED_READINGS + VOL_WINDOW - 1} hours of ` +
        `market returns, and the run had ${c.rawVolatility.hours}.`,
    );
  else if (c.shortRank)
    limitations.push(
      `Only ${c.rawVolatility.hours} hours of market returns, so volatility is ranked against them, not the last ` +
        `${R.volatilityRankHours / 24} days: the full window could put its percentile anywhere from ` +
        `${round(100 * c.rawVolatility.fullRank.lo, R.percentileDecimals)} to ` +
        `${round(100 * c.rawVolatility.fullRank.hi, R.percentileDecimals)}.`,
    );
  if (c.rawCorrelation.average === null && covered.length > 0)
    limitations.push(
      correlationApplies(coverage)
        ? 'No pairwise correlation this run: it needs two or more assets with a trend reading whose prices moved; ' +
            'the risk score is read without it.'
        : 'No pairwise correlation this run: it needs two or more assets and one is tracked; the risk score is ' +
            'read without it.',
    );
  return limitations;
};

/** The assets read from short histories: drawdown windows (shortest first) and provisional averages. */
const historyLimitations = (c: Components): string[] => {
  const limitations: string[] = [];
  const byWindow = new Map<number, string[]>();
  for (const d of c.shortWindows) byWindow.set(d.window, [...(byWindow.get(d.window) ?? []), d.symbol]);
  for (const [hours, symbols] of [...byWindow].sort((a, b) => a[0] - b[0]))
    limitations.push(
      `${symbolList(symbols)}: only ${hours} hourly candles, so drawdown is measured from the ${hours}-hour high, ` +
        'not the 7-day high, and may understate how far below that high the price is.',
    );
  if (c.provisional.length > 0)
    limitations.push(
      `${symbolList(c.provisional.map((a) => a.symbol))}: fewer than ${EMA_SETTLED_CANDLES} hourly candles, so the ` +
        '50-hour average is provisional; breadth and the median trend count it, and confidence counts it as if ' +
        'its settled value could put the asset on either side of it and move its trend within the provisional ' +
        'margin the main brain’s method describes.',
    );
  return limitations;
};

/** Every limitation of the reading, the partial-evidence bounds (partialScoreRange) among them. */
const regimeLimitations = (
  c: Components,
  coverage: Coverage,
  leaveOut: ReadonlySet<RiskComponent>,
  partial: { from: number; to: number } | null,
): string[] => [
  ...readingLimitations(c, coverage),
  ...historyLimitations(c),
  ...RISK_COMPONENTS.filter((name) => leaveOut.has(name)).map(
    (name) => `${COMPONENT_WORDS[name]} was left out of this reading: the risk score is read without it.`,
  ),
  ...(partial === null
    ? []
    : [
        `Partial evidence: the risk score and market_mode describe the evidence that came in; what did not come in ` +
          `could have put the risk score anywhere from ${partial.from} to ${partial.to}, and confidence counts it as if it had disagreed.`,
      ]),
  ...(coverage.covered.length > CORRELATION_SAMPLE
    ? [
        `Correlation is averaged over the first ${CORRELATION_SAMPLE} assets (${c.correlation.pairs} pairs) to bound the computation.`,
      ]
    : []),
];

/** The summary says when it rests on partial evidence; the limitations say what is missing. */
const summaryOf = (
  mode: MarketMode,
  riskScore: number | null,
  confidence: number,
  partial: boolean,
): string => {
  const riskText = riskScore === null ? '' : ` (risk score ${riskScore}/100, confidence ${confidence}/100)`;
  return partial
    ? `The partial evidence that came in describes ${MODE_WORDS[mode]}${riskText}; the market regime's ` +
        'limitations say what is missing. Educational context, not advice.'
    : `The evidence describes ${MODE_WORDS[mode]}${riskText}. Educational context, not advice.`;
};

export function analyzeRegime(
  assets: readonly AssetMarket[],
  analyses: readonly AssetAnalysis[],
  options: RegimeOptions = {},
): RegimeReading {
  const leaveOut = new Set(options.leaveOut ?? []);
  const coverage = coverageOf(assets, analyses);
  const c = readComponents(coverage.covered);
  const points = componentPoints(c, leaveOut);
  const ranges = componentRanges(c, coverage, leaveOut);
  const riskScore = riskScoreOf(points);
  const mode = modeOf(riskScore);
  const confidence = riskScore === null ? 0 : lowerBoundConfidence(ranges);
  const partial = riskScore === null ? null : partialScoreRange(riskScore, c, coverage, points, ranges);
  return {
    mode,
    state: stateOf(mode, c.volatility.level, confidence),
    riskScore,
    riskLevel: riskScore === null ? null : riskLevelOf(riskScore),
    confidence,
    assetsCovered: coverage.covered.length,
    assetsTotal: coverage.total,
    breadth: c.breadth,
    medianTrend: c.medianTrend,
    medianDirection: c.medianDirection,
    volatility: c.volatility,
    drawdown: c.drawdown,
    correlation: c.correlation,
    evidence: regimeEvidence(c),
    limitations: regimeLimitations(c, coverage, leaveOut, partial),
    summary: summaryOf(mode, riskScore, confidence, partial !== null),
    degraded: partial !== null || mode === 'UNKNOWN',
  };
}
