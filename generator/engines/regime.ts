// The market-wide regime: breadth, median trend, realised volatility and its percentile, drawdown from the
// recent high and average pairwise correlation, folded into a 0-100 risk score, a mode and a state.
import type { MarketMode, MarketState, RiskLevel } from '../../schemas/market-regime.ts';
import type { AssetMarket, Candle } from '../market/types.ts';
import type { AssetAnalysis } from './asset-analysis.ts';
import { clamp, correlation, last, logReturns, median, percentileRank, stdev } from './math.ts';
import { pct } from './format.ts';
import { symbolList } from './labels.ts';

const VOL_WINDOW = 24;
const HOURS_PER_YEAR = 24 * 365;
const DRAWDOWN_LOOKBACK = 168;
const CORRELATION_BARS = 72;
/** Pairwise correlation is O(n²): average it over the first assets only (30 assets = 435 pairs). */
export const CORRELATION_SAMPLE = 30;
/** Internal weights of the risk components (sum 1); never published. */
const RISK_WEIGHTS = {
  breadth: 0.25,
  trend: 0.25,
  volatility: 0.2,
  drawdown: 0.2,
  correlation: 0.1,
} as const;
type RiskComponent = keyof typeof RISK_WEIGHTS;
/** Drawdown this deep (median, from the 7-day high) counts as a full risk-off reading. */
const FULL_DRAWDOWN = 0.15;
const RISK_ON_BELOW = 40;
const RISK_OFF_FROM = 60;
const MAX_CONFIDENCE = 95;

export type VolatilityLevel = 'calm' | 'normal' | 'elevated' | 'extreme';

export interface RegimeReading {
  mode: MarketMode;
  state: MarketState;
  riskScore: number | null;
  riskLevel: RiskLevel | null;
  confidence: number;
  assetsCovered: number;
  assetsTotal: number;
  breadth: { above: number; withData: number; share: number | null };
  /** Internal median EMA signal in [-1, 1]; only its direction is published. */
  medianTrend: number | null;
  medianDirection: 'up' | 'down' | 'flat' | null;
  volatility: { annualised: number | null; percentile: number | null; level: VolatilityLevel | null };
  drawdown: {
    median: number | null;
    deepestAsset: string | null;
    deepest: number | null;
    lookbackHours: number;
  };
  correlation: {
    average: number | null;
    assetsSampled: number;
    pairs: number;
    level: 'low' | 'moderate' | 'high' | null;
  };
  evidence: string[];
  limitations: string[];
  summary: string;
  degraded: boolean;
}

/** Equal-weighted hourly market return, aligned from the most recent bar backwards. */
export const marketReturns = (series: readonly (readonly Candle[])[]): number[] => {
  const sums: number[] = [];
  const counts: number[] = [];
  for (const candles of series) {
    const r = logReturns(candles.map((c) => c.close));
    for (let k = 0; k < r.length; k++) {
      const x = r[r.length - 1 - k]!;
      if (!Number.isFinite(x)) continue;
      sums[k] = (sums[k] ?? 0) + x;
      counts[k] = (counts[k] ?? 0) + 1;
    }
  }
  return sums.map((s, k) => s / counts[k]!).reverse();
};

const volatilityOf = (returns: readonly number[]): RegimeReading['volatility'] => {
  if (returns.length < VOL_WINDOW) return { annualised: null, percentile: null, level: null };
  const rolling: number[] = [];
  for (let end = VOL_WINDOW; end <= returns.length; end++)
    rolling.push(stdev(returns.slice(end - VOL_WINDOW, end))!);
  const current = last(rolling)!;
  const percentile = rolling.length >= 2 * VOL_WINDOW ? percentileRank(rolling, current) : null;
  const level: VolatilityLevel | null =
    percentile === null
      ? null
      : percentile >= 90
        ? 'extreme'
        : percentile >= 70
          ? 'elevated'
          : percentile <= 30
            ? 'calm'
            : 'normal';
  return { annualised: current * Math.sqrt(HOURS_PER_YEAR), percentile, level };
};

const drawdownOf = (candles: readonly Candle[]): number | null => {
  const recent = candles.slice(-DRAWDOWN_LOOKBACK);
  const high = Math.max(...recent.map((c) => c.high));
  const close = last(recent)?.close;
  return close !== undefined && high > 0 ? Math.min(0, close / high - 1) : null;
};

const correlationOf = (series: readonly (readonly Candle[])[]): RegimeReading['correlation'] => {
  const sampled = series
    .slice(0, CORRELATION_SAMPLE)
    .map((c) => logReturns(c.slice(-(CORRELATION_BARS + 1)).map((x) => x.close)));
  const values: number[] = [];
  for (let i = 0; i < sampled.length; i++)
    for (let j = i + 1; j < sampled.length; j++) {
      const c = correlation(sampled[i]!, sampled[j]!);
      if (c !== null) values.push(c);
    }
  const average = values.length > 0 ? values.reduce((a, b) => a + b, 0) / values.length : null;
  const level = average === null ? null : average >= 0.6 ? 'high' : average >= 0.3 ? 'moderate' : 'low';
  return { average, assetsSampled: sampled.length, pairs: values.length, level };
};

const riskLevelOf = (risk: number): RiskLevel =>
  risk < 25 ? 'low' : risk < 50 ? 'moderate' : risk < 75 ? 'elevated' : 'high';

const MODE_WORDS: Record<MarketMode, string> = {
  RISK_ON: 'a risk-on market',
  RISK_OFF: 'a risk-off market',
  NEUTRAL: 'a market between risk-on and risk-off',
  UNKNOWN: 'no readable market regime',
};

export function analyzeRegime(
  assets: readonly AssetMarket[],
  analyses: readonly AssetAnalysis[],
): RegimeReading {
  const withTrend = analyses.filter((a) => a.trend !== null);
  const series = assets.filter((a, i) => analyses[i]!.trend !== null).map((a) => a.candles!.value);
  const evidence: string[] = [];
  const limitations: string[] = [];

  const above = withTrend.filter((a) => a.trend!.close > a.trend!.ema50).length;
  const breadth = {
    above,
    withData: withTrend.length,
    share: withTrend.length ? above / withTrend.length : null,
  };
  const medianTrend = median(withTrend.map((a) => a.trend!.signals.ema));
  const medianDirection =
    medianTrend === null ? null : medianTrend > 0.1 ? 'up' : medianTrend < -0.1 ? 'down' : 'flat';
  const volatility = volatilityOf(marketReturns(series));
  const drawdowns = series.map((c, i) => ({ symbol: withTrend[i]!.symbol, dd: drawdownOf(c) }));
  const deepest = drawdowns.reduce<{ symbol: string; dd: number } | null>(
    (worst, d) =>
      d.dd !== null && (worst === null || d.dd < worst.dd) ? { symbol: d.symbol, dd: d.dd } : worst,
    null,
  );
  const drawdown = {
    median: median(drawdowns.flatMap((d) => (d.dd === null ? [] : [d.dd]))),
    deepestAsset: deepest?.symbol ?? null,
    deepest: deepest?.dd ?? null,
    lookbackHours: DRAWDOWN_LOOKBACK,
  };
  const corr = correlationOf(series);

  // Each component as a risk reading in [0, 1] (1 = risk-off).
  const components: Partial<Record<RiskComponent, number>> = {};
  if (breadth.share !== null) components.breadth = 1 - breadth.share;
  if (medianTrend !== null) components.trend = (1 - medianTrend) / 2;
  if (volatility.percentile !== null) components.volatility = volatility.percentile / 100;
  if (drawdown.median !== null) components.drawdown = clamp(-drawdown.median / FULL_DRAWDOWN, 0, 1);
  if (corr.average !== null) components.correlation = clamp((corr.average - 0.2) / 0.6, 0, 1);

  let weighted = 0;
  let weightAvailable = 0;
  let directed = 0;
  let directedMagnitude = 0;
  for (const [name, c] of Object.entries(components) as Array<[RiskComponent, number]>) {
    const w = RISK_WEIGHTS[name];
    weighted += w * c;
    weightAvailable += w;
    directed += w * (2 * c - 1);
    directedMagnitude += w * Math.abs(2 * c - 1);
  }
  const riskScore = weightAvailable > 0 ? (100 * weighted) / weightAvailable : null;
  const mode: MarketMode =
    riskScore === null
      ? 'UNKNOWN'
      : riskScore < RISK_ON_BELOW
        ? 'RISK_ON'
        : riskScore >= RISK_OFF_FROM
          ? 'RISK_OFF'
          : 'NEUTRAL';
  const coverage = analyses.length > 0 ? withTrend.length / analyses.length : 0;
  const strength = weightAvailable > 0 ? Math.min(1, Math.abs(directed / weightAvailable) / 0.5) : 0;
  const agreement = directedMagnitude > 0 ? Math.abs(directed) / directedMagnitude : 0;
  const confidence = Math.round(
    Math.min(MAX_CONFIDENCE, 100 * strength * agreement * coverage * weightAvailable),
  );
  const state: MarketState =
    mode === 'UNKNOWN'
      ? 'UNKNOWN'
      : mode === 'RISK_OFF' || volatility.level === 'extreme'
        ? 'CAUTION'
        : mode === 'RISK_ON' && confidence >= 50
          ? 'OPPORTUNITY'
          : 'WAIT';

  if (breadth.share !== null)
    evidence.push(`${above} of ${withTrend.length} assets trade above their 50-hour exponential average.`);
  if (medianDirection !== null) evidence.push(`The typical asset's trend points ${medianDirection}.`);
  if (volatility.annualised !== null)
    evidence.push(
      `Market volatility over the last 24 hours is ${pct(volatility.annualised, 0)} annualised` +
        (volatility.percentile === null
          ? '.'
          : `, higher than ${volatility.percentile.toFixed(0)}% of the trailing window.`),
    );
  if (drawdown.median !== null && deepest !== null)
    evidence.push(
      `The median asset trades ${pct(-drawdown.median, 1)} below its 7-day high; ${deepest.symbol} is furthest below at ${pct(-deepest.dd, 1)}.`,
    );
  if (corr.average !== null)
    evidence.push(
      `Average pairwise correlation of hourly returns is ${corr.average.toFixed(2)}` +
        (corr.level === 'high' ? ': the assets’ hourly returns have been moving closely together.' : '.'),
    );

  const missing = analyses.filter((a) => a.trend === null).map((a) => a.symbol);
  if (analyses.length === 0) limitations.push('No assets in this run: there is no market regime to read.');
  if (missing.length > 0)
    limitations.push(`Too little candle data for ${symbolList(missing)}: left out of the regime reading.`);
  if (volatility.percentile === null && series.length > 0)
    limitations.push('Too little history to rank current volatility against the trailing window.');
  // A component left out lowers the confidence, so say which and why.
  if (corr.average === null && series.length > 0)
    limitations.push(
      'No pairwise correlation this run: it needs two or more assets with a trend reading whose prices moved; ' +
        'the risk score is read without it.',
    );
  if (withTrend.length > CORRELATION_SAMPLE)
    limitations.push(
      `Correlation is averaged over the first ${CORRELATION_SAMPLE} assets (${corr.pairs} pairs) to bound the computation.`,
    );

  const riskText =
    riskScore === null ? '' : ` (risk score ${Math.round(riskScore)}/100, confidence ${confidence}/100)`;
  return {
    mode,
    state,
    riskScore,
    riskLevel: riskScore === null ? null : riskLevelOf(riskScore),
    confidence,
    assetsCovered: withTrend.length,
    assetsTotal: analyses.length,
    breadth,
    medianTrend,
    medianDirection,
    volatility,
    drawdown,
    correlation: corr,
    evidence,
    limitations,
    summary: `The evidence describes ${MODE_WORDS[mode]}${riskText}. Educational context, not advice.`,
    degraded: missing.length > 0,
  };
}
