// The brain's reading of one asset: combine trend, momentum, directional movement, positioning and the order
// book into a bias and a confidence. The bias is read from the evidence that came in; confidence is strength x
// agreement x share of evidence available, strength and agreement taken with every missing reading at its value
// least favourable to that bias, so a missing section always lowers confidence, whatever it would have said. The
// weights and the combined score stay internal and never reach a published body.
import type { Bias, DataMode, DataStatus } from '../../schemas/common.ts';
import type { AssetMarket, SourceIssue } from '../market/types.ts';
import {
  MIN_TREND_CANDLES,
  closeHoursBefore,
  directedSignal,
  MOVE_RULE,
  provisionalRange,
  readTrend,
  SETTLED_CANDLES,
  type MoveSize,
  type TrendReading,
  type TrendSignal,
} from './trend.ts';
import { readLiquidity, type LiquidityReading } from './liquidity.ts';
import { readDerivatives, type DerivativesReading } from './positioning.ts';
import { issuesFor, issueText, venueLabel } from './labels.ts';
import { bookLeanOf } from './agreement.ts';
import { confidenceWord, listWords, signedPct } from './format.ts';
import { last } from './math.ts';

/** Internal evidence weights (sum 1). Published bodies describe evidence, never these numbers. */
const WEIGHTS = { ema: 0.35, momentum: 0.3, dmi: 0.15, derivatives: 0.15, orderBook: 0.05 } as const;
type SignalName = keyof typeof WEIGHTS;
const BIAS_DEAD_BAND = 0.15;
/** A combined reading this far from zero counts as full strength. */
const FULL_STRENGTH = 0.75;
/** Confidence never reaches 100: evidence is not certainty. */
const MAX_CONFIDENCE = 95;
/** Each collection issue on a section that still delivered data (e.g. a fallback venue) costs a little. */
const ISSUE_PENALTY = 0.9;
const MIN_ISSUE_FACTOR = 0.7;

/**
 * A confidence (0-100, unrounded or not) after the penalty of `issues` data issues on sections that still came in,
 * rounded: at least a point under the issue-free figure whenever that is above 0, so that rounding never hides the
 * drop a data issue promises (x0.9 of 4 would round back to 4).
 */
export function withIssuePenalty(confidence: number, issues: number): number {
  const plain = Math.round(confidence);
  if (issues === 0 || plain === 0) return plain;
  const cut = Math.round(confidence * Math.max(MIN_ISSUE_FACTOR, ISSUE_PENALTY ** issues));
  return Math.min(cut, plain - 1);
}

export interface AssetAnalysis {
  symbol: string;
  price: number | null;
  /** Venue label, "(simulated)" or "(replayed)" included. */
  priceSource: string | null;
  /** Fraction, e.g. 0.012 for +1.2 %. */
  change24h: number | null;
  quoteVolume24h: number | null;
  trend: TrendReading | null;
  liquidity: LiquidityReading;
  derivatives: DerivativesReading;
  /** null when no evidence at all was available. */
  bias: Bias | null;
  confidence: number | null;
  /** Internal: combined signal in [-1, 1], agreement and availability in [0, 1]. Never published. */
  internal: { score: number; agreement: number; availability: number };
  reasonPoints: string[];
  limitations: string[];
  /**
   * The limitations of sections that came in but weaker than usual (too few candles, an unreadable book, the
   * positioning gaps, a collection issue on data that still came in), each starting "SYMBOL: ". Every body that
   * is degraded by this asset lists them; a missing section is stated by each body in its own words.
   */
  gaps: string[];
  summary: string;
  /** True when a section lacked data or came in weaker, or a collection issue touched this asset. */
  degraded: boolean;
  /** `unavailable`: no price and no evidence, so every reading is null; `partial`: degraded; else `available`. */
  dataStatus: DataStatus;
}

/**
 * One signal (weighted by WEIGHTS[name]): the share of its evidence that came in (0 to 1), its value from that
 * evidence, and the lowest and highest value the complete evidence could have given (both `value` when nothing is
 * missing).
 */
interface Signal {
  name: SignalName;
  coverage: number;
  value: number;
  min: number;
  max: number;
}

const known = (name: SignalName, value: number): Signal => ({
  name,
  coverage: 1,
  value,
  min: value,
  max: value,
});
const missingSignal = (name: SignalName): Signal => ({ name, coverage: 0, value: 0, min: -1, max: 1 });
/**
 * Read, but from a history still too short for it to settle: the settled reading could lie within a margin that
 * narrows with each candle (trend.ts provisionalRange, PROVISIONAL_RULE), as regime.ts counts its short windows.
 */
const provisionalSignal = (name: TrendSignal, value: number, candles: number): Signal => ({
  name,
  coverage: 1,
  value,
  ...provisionalRange(name, value, candles),
});

/**
 * The trend's three signals: missing without a reading, provisional while still warming up, and no direction at
 * all for a flat price (MOVE_RULE), however calm the market that scales them.
 */
const trendSignals = (trend: TrendReading | null): Signal[] =>
  (['ema', 'momentum', 'dmi'] as const).map((name) => {
    if (!trend) return missingSignal(name);
    const value = directedSignal(trend, name);
    return trend.unsettled.includes(name)
      ? provisionalSignal(name, value, trend.candles)
      : known(name, value);
  });

const SETTLING_WORDS = {
  ema: 'the 50-hour average',
  momentum: 'the week of volatility that scales momentum',
  dmi: 'ADX',
} as const;

/** The gap a history too short for the trend to settle leaves, naming what needs how many candles. */
const unsettledTrendGap = (symbol: string, trend: TrendReading): string => {
  const needs = trend.unsettled.map((name) => `${SETTLED_CANDLES[name]} for ${SETTLING_WORDS[name]}`);
  return (
    `${symbol}: only ${trend.candles} hourly candles, fewer than the trend reading needs to settle ` +
    `(${listWords(needs)}); it is provisional, and confidence counts those parts as if they could have read ` +
    'either way.'
  );
};

function signalsOf(
  trend: TrendReading | null,
  derivatives: DerivativesReading,
  imbalance: number | null,
): Signal[] {
  const { lean, leanRange, coverage } = derivatives;
  return [
    ...trendSignals(trend),
    { name: 'derivatives', coverage, value: lean, min: leanRange.min, max: leanRange.max },
    imbalance === null ? missingSignal('orderBook') : known('orderBook', imbalance),
  ];
}

/** The combined reading of the evidence that came in: each signal weighs by its weight times its coverage. */
function combine(signals: readonly Signal[]): { score: number; availability: number } {
  let weighted = 0;
  let availability = 0;
  for (const s of signals) {
    weighted += WEIGHTS[s.name] * s.coverage * s.value;
    availability += WEIGHTS[s.name] * s.coverage;
  }
  return { score: availability > 0 ? weighted / availability : 0, availability };
}

/**
 * Strength x agreement with every signal at full weight and each missing part at its value least favourable to the
 * lean of `score`: the confidence the complete evidence would give at worst, so a missing reading never raises it.
 * With nothing missing this is the plain strength x agreement of the evidence.
 */
function strengthAndAgreement(
  signals: readonly Signal[],
  score: number,
): { strength: number; agreement: number } {
  const direction = Math.sign(score);
  let net = 0;
  let magnitude = 0;
  for (const s of signals) {
    const worst = direction > 0 ? s.min : s.max;
    net += WEIGHTS[s.name] * worst;
    magnitude += WEIGHTS[s.name] * Math.abs(worst);
  }
  const kept = direction * net; // what is left of the lean; at or below 0 the missing evidence could cancel it
  if (direction === 0 || kept <= 0) return { strength: 0, agreement: 0 };
  return { strength: Math.min(1, kept / FULL_STRENGTH), agreement: kept / magnitude };
}

/** The 24-hour change from the candles (by time: a missing candle does not stretch the window). */
const priceChangeFromCandles = (asset: AssetMarket): number | null => {
  const candles = asset.candles?.value ?? [];
  if (candles.length < 2) return null;
  const before = closeHoursBefore(candles, 24);
  return before.hours === 24 && before.close > 0 ? last(candles)!.close / before.close - 1 : null;
};

/** The words of a move's size, with the MOVE_RULE threshold that chose them. */
const MOVE_WORDS: Readonly<Record<MoveSize, string>> = {
  flat: `flat (less than ${MOVE_RULE.flatBelowPct}% either way)`,
  usual: 'within its usual range for its recent volatility',
  moderate: 'a moderate move for its recent volatility',
  large: 'a large move',
};

const trendPoints = (t: TrendReading): string[] => {
  const gap = Math.abs(t.emaGapAtr).toFixed(1);
  const points = [
    t.flat
      ? `The 20-hour average is within ${MOVE_RULE.flatBelowPct}% of the 50-hour average (${gap} average true ` +
        `ranges ${t.emaGapAtr >= 0 ? 'above' : 'below'} it) and the price is flat: no clear trend.`
      : t.emaGapAtr > 0.25
        ? `The 20-hour average is ${gap} average true ranges above the 50-hour average: the trend reads up.`
        : t.emaGapAtr < -0.25
          ? `The 20-hour average is ${gap} average true ranges below the 50-hour average: the trend reads down.`
          : 'The 20-hour and 50-hour averages are close together: no clear trend.',
  ];
  points.push(
    `Price changed ${signedPct(Math.expm1(t.momentumReturn), 1)} over the last ${t.momentumHours} hours, ${MOVE_WORDS[t.moveSize]}.`,
  );
  const adx = t.adx.toFixed(0);
  const leader = t.plusDi >= t.minusDi ? 'upward' : 'downward';
  points.push(
    t.flat && t.adx >= 20
      ? `ADX reads ${adx}, but the price is flat: its directional movement reads no direction.`
      : t.adx >= 25
        ? `ADX reads ${adx}: a trending market, with ${leader} directional movement leading.`
        : t.adx >= 20
          ? `ADX reads ${adx}: a weak trend, ${leader} movement slightly ahead.`
          : `ADX reads ${adx}: no established trend.`,
  );
  return points;
};

const STRUCTURE_WORDS = {
  higher_highs_higher_lows: 'Recent swing highs and lows are both rising (higher highs, higher lows).',
  lower_highs_lower_lows: 'Recent swing highs and lows are both falling (lower highs, lower lows).',
  range: 'Recent swing highs and lows show no consistent direction: a range.',
} as const;

/** The limitation an asset with no usable data leads with, in every body that lists the asset. */
export const noDataLimitation = (symbol: string): string =>
  `${symbol}: no usable market data this run (no price and no evidence from any venue); every reading for it is null.`;

/** How readings stand beside the overall lean, e.g. "leans the other way (bullish)". */
const besideLean = (lean: Bias, vote: Bias, plural: boolean): string => {
  const [is, leans] = plural ? ['are', 'lean'] : ['is', 'leans'];
  if (vote === 'neutral') return `${is} neutral${lean === 'neutral' ? ' too' : ''}`;
  if (vote === lean) return `${leans} ${vote} too`;
  return lean === 'neutral' ? `${leans} ${vote}` : `${leans} the other way (${vote})`;
};

/**
 * One sentence per asset. Beside the overall lean it names the positioning vote and the order book's lean: the
 * same readings the paid `agreement` compares, so this text and that label always describe one picture.
 */
const summarize = (
  symbol: string,
  a: Pick<AssetAnalysis, 'bias' | 'confidence' | 'internal' | 'dataStatus'>,
  readings: { positioning: Bias | null; 'the order book': Bias | null },
): string => {
  if (a.dataStatus === 'unavailable') return `${symbol}: no market data this run, so there is no reading.`;
  if (a.bias === null || a.confidence === null)
    return `${symbol}: not enough evidence this run to describe a lean.`;
  const bias = a.bias;
  const c = `confidence ${a.confidence}/100, ${confidenceWord(a.confidence)}`;
  const lean =
    bias === 'neutral' ? 'the evidence does not lean clearly either way' : `the evidence leans ${bias}`;
  const byVote = new Map<Bias, string[]>();
  for (const [name, vote] of Object.entries(readings))
    if (vote !== null) byVote.set(vote, [...(byVote.get(vote) ?? []), name]);
  const compared =
    byVote.size > 0
      ? listWords(
          [...byVote].map(
            ([vote, names]) => `${listWords(names)} ${besideLean(bias, vote, names.length > 1)}`,
          ),
        )
      : 'no positioning or order-book reading to compare';
  const missing = a.internal.availability < 1 ? '; some evidence was missing' : '';
  return `${symbol}: ${lean} (${c}); ${compared}${missing}.`;
};

/** Candles are hourly: a bar's close is its price at its open time plus this. */
const BAR_MS = 3_600_000;

/**
 * The asset's price and the venue's time of it (ms): the ticker's last price at the ticker's own time, else the close
 * of the last closed hourly candle at that candle's close, which may be up to two hours before the run
 * (sources/freshness.ts). A reader that needs a price of a given time (the arena's reference and end prices) checks
 * `at`, never the time of the run.
 */
export const assetPrice = (asset: AssetMarket): { price: number | null; at: number | null } => {
  if (asset.ticker) return { price: asset.ticker.value.last, at: asset.ticker.provenance.asOf };
  const bar = last(asset.candles?.value ?? []);
  return bar ? { price: bar.close, at: bar.openTime + BAR_MS } : { price: null, at: null };
};

/**
 * The one wording of a data issue in an asset's lists, whichever reading lists it: "SYMBOL: Data issue at venue
 * (section): ..." for an issue on this asset, so that body-wide lists group it by symbol like every other per-asset
 * line; a run-wide issue keeps its own wording. Two wordings of one issue once sat side by side in a limitation list.
 */
export const assetIssueLine = (symbol: string, issue: SourceIssue): string =>
  issue.symbol === symbol ? `${symbol}: ${issueText({ ...issue, symbol: null })}` : issueText(issue);

/** What makes two issue records one issue: the same venue, asset, section and message. */
const issueKey = (i: SourceIssue): string => JSON.stringify([i.venue, i.symbol, i.section, i.message]);

/** Each issue once, however often its record was repeated: one issue is one line and one penalty. */
export const distinctIssues = (issues: readonly SourceIssue[]): SourceIssue[] => [
  ...new Map(issues.map((i) => [issueKey(i), i])).values(),
];

/**
 * Whether the asset's `section` came in despite the issue ('all' counts as came in: the asset's data is there or
 * is named missing by its own note).
 */
export const deliveredDespite = (asset: AssetMarket, issue: SourceIssue): boolean =>
  issue.section === 'all' || asset[issue.section] !== null;

/** The sections a derivatives reading is built from. */
const DERIVATIVES_SECTIONS: ReadonlySet<string> = new Set(['funding', 'openInterest', 'liquidations']);

/** This asset's own issues on a derivatives section that still came in. */
const derivativesIssues = (asset: AssetMarket, issues: readonly SourceIssue[]): SourceIssue[] =>
  issues.filter(
    (i) => i.symbol === asset.symbol && DERIVATIVES_SECTIONS.has(i.section) && deliveredDespite(asset, i),
  );

/**
 * A data issue on a derivatives section that still came in (venues disagreeing on the funding rate, a rate no other
 * venue confirmed) weakens the positioning reading itself: /api/derivatives.php lists it and its confidence takes
 * the same penalty the asset's does, not only the bodies built on the whole asset.
 */
function withDerivativesIssues(
  reading: DerivativesReading,
  asset: AssetMarket,
  weakened: readonly SourceIssue[],
): DerivativesReading {
  if (weakened.length === 0) return reading;
  const lines = weakened.map((i) => assetIssueLine(asset.symbol, i));
  return {
    ...reading,
    confidence: reading.confidence === null ? null : withIssuePenalty(reading.confidence, weakened.length),
    limitations: [...reading.limitations, ...lines],
    gaps: [...reading.gaps, ...lines],
  };
}

export function analyzeAsset(
  asset: AssetMarket,
  issues: readonly SourceIssue[],
  mode: DataMode,
): AssetAnalysis {
  const s = asset.symbol;
  const limitations: string[] = [];
  const gaps: string[] = [];
  const gap = (line: string) => {
    gaps.push(line);
    limitations.push(line);
  };
  const reasonPoints: string[] = [];

  const candles = asset.candles?.value ?? [];
  const trend = readTrend(candles);
  if (!asset.candles)
    limitations.push(`${s}: no hourly candles this run; trend and momentum are unavailable.`);
  else if (!trend)
    gap(
      candles.length < MIN_TREND_CANDLES
        ? `${s}: only ${candles.length} hourly candles; too few for trend readings.`
        : // Enough bars that cannot be read (a non-positive price, no price movement): say so, not "too few".
          `${s}: the ${candles.length} hourly candles could not be read for trend (a non-positive price or no price movement).`,
    );
  // Fewer candles must never read stronger: a trend still warming up is weaker evidence, and said to be.
  else if (trend.unsettled.length > 0) gap(unsettledTrendGap(s, trend));

  const ticker = asset.ticker?.value ?? null;
  const priceSection = asset.ticker ?? asset.candles;
  const { price } = assetPrice(asset);
  const change24h = ticker?.change24h ?? priceChangeFromCandles(asset);
  const quoteVolume24h = ticker?.quoteVolume24h ?? null;
  // Say where the price came from, or that there is none: never claim candles that did not come in.
  if (!ticker)
    limitations.push(
      `${s}: no 24-hour ticker; ` +
        (price === null
          ? 'no price or 24-hour change this run.'
          : change24h === null
            ? 'price comes from hourly candles, too few of them for a 24-hour change.'
            : 'price and change come from hourly candles.'),
    );

  const liquidity = readLiquidity(asset);
  if (!asset.book) limitations.push(`${s}: no order book; depth and book imbalance are unavailable.`);
  liquidity.gaps.forEach(gap);
  const assetIssues = distinctIssues(issuesFor(s, issues));
  const positioningIssues = derivativesIssues(asset, assetIssues);
  const derivatives = withDerivativesIssues(
    readDerivatives(asset, change24h, quoteVolume24h),
    asset,
    positioningIssues,
  );
  if (!asset.funding && !asset.openInterest)
    limitations.push(
      `${s}: no derivatives data (funding, open interest); positioning is not part of this reading.`,
    );
  else if (derivatives.state === 'unavailable')
    limitations.push(
      `${s}: no funding, and open interest without a 24-hour comparison; positioning is unavailable and not part of this reading.`,
    );
  else if (!asset.funding || !asset.openInterest)
    limitations.push(
      `${s}: derivatives data is incomplete (${asset.funding ? 'open interest' : 'funding'} missing).`,
    );
  // Positioning that came in weaker than usual (estimated liquidations, too little history, ...) is evidence of a
  // weaker kind: the reader of any body built on this asset must see it.
  derivatives.gaps.forEach(gap);

  const signals = signalsOf(trend, derivatives, liquidity.imbalance);
  const { score, availability } = combine(signals);
  const { strength, agreement } = strengthAndAgreement(signals, score);

  // One issue, one line, told apart by what it is, not by how it is worded: an issue on a derivatives section that
  // came in is already among the positioning gaps.
  const listed = new Set(positioningIssues);
  for (const i of assetIssues) {
    if (listed.has(i)) continue;
    // An issue on this asset's data that still came in (or on all of it) is named by no missing-section note.
    if (i.symbol === s && deliveredDespite(asset, i)) gap(assetIssueLine(s, i));
    else limitations.push(assetIssueLine(s, i));
  }
  // A venue that refused the whole run is reported, but costs nothing when a fallback venue delivered the data;
  // an issue on a section that still delivered (e.g. venues disagreeing on the price) weakens the evidence.
  const deliveredDespiteIssue = assetIssues.filter(
    (i) => i.section !== 'all' && asset[i.section] !== null,
  ).length;

  const hasEvidence = availability > 0;
  // A flat price (MOVE_RULE) leans neither way: positioning and the order book alone do not make a lean.
  const bias: Bias | null = !hasEvidence
    ? null
    : trend?.flat
      ? 'neutral'
      : score > BIAS_DEAD_BAND
        ? 'bullish'
        : score < -BIAS_DEAD_BAND
          ? 'bearish'
          : 'neutral';
  const confidence = hasEvidence
    ? withIssuePenalty(
        Math.min(MAX_CONFIDENCE, 100 * strength * agreement * availability),
        deliveredDespiteIssue,
      )
    : null;

  if (trend) reasonPoints.push(...trendPoints(trend));
  reasonPoints.push(...derivatives.evidence.slice(0, 3));
  const bookLean = bookLeanOf(liquidity.imbalance);
  if (bookLean === 'bullish' || bookLean === 'bearish')
    reasonPoints.push(
      `The order book within 1% of the mid holds more ${bookLean === 'bullish' ? 'bids than asks' : 'asks than bids'}.`,
    );
  if (liquidity.structure) reasonPoints.push(STRUCTURE_WORDS[liquidity.structure]);

  const internal = { score, agreement, availability };
  // Nothing to read at all: the asset is published as such, never with a reading that could look like a call.
  const dataStatus: DataStatus =
    price === null && !hasEvidence ? 'unavailable' : limitations.length > 0 ? 'partial' : 'available';
  if (dataStatus === 'unavailable') limitations.unshift(noDataLimitation(s));
  return {
    symbol: s,
    price,
    priceSource: priceSection && price !== null ? venueLabel(priceSection.provenance.venue, mode) : null,
    change24h,
    quoteVolume24h,
    trend,
    liquidity,
    derivatives,
    bias,
    confidence,
    internal,
    reasonPoints,
    limitations,
    gaps,
    summary: summarize(
      s,
      { bias, confidence, internal, dataStatus },
      { positioning: derivatives.vote, 'the order book': bookLean },
    ),
    degraded: limitations.length > 0,
    dataStatus,
  };
}
