// GET /api/market-regime.php: the market-wide risk regime of the tracked assets (spec 2.1).
import * as z from 'zod';
import { AssetSymbol, Confidence, Limitation } from './common.ts';
import { freeSnapshotEnvelope } from './envelope.ts';

/**
 * Decision: upstream publishes RISK_ON / RISK_OFF (and "unknown" without a snapshot). NEUTRAL is added for the
 * middle band, so that a mixed market is not forced into either camp; UNKNOWN means no price evidence at all.
 */
export const MarketMode = z.enum(['RISK_ON', 'RISK_OFF', 'NEUTRAL', 'UNKNOWN']);
export type MarketMode = z.infer<typeof MarketMode>;

/**
 * Decision: `UNKNOWN` (with market_mode UNKNOWN) when no asset had candle evidence. The free field is a string in
 * the spec, so it cannot be null; before, such a run read WAIT, which looks like a reading of the evidence.
 */
export const MarketState = z.enum(['CAUTION', 'WAIT', 'OPPORTUNITY', 'UNKNOWN']);
export type MarketState = z.infer<typeof MarketState>;

export const RiskLevel = z.enum(['low', 'moderate', 'elevated', 'high']);
export type RiskLevel = z.infer<typeof RiskLevel>;

/**
 * The published rules of the regime's labels (schemas/field-meanings.ts states them in words). Each label is read
 * from its value exactly as published, at these decimals, so that no label contradicts the figure beside it.
 */
export const REGIME_RULE = {
  riskScoreDecimals: 0,
  /** `market_mode`: RISK_ON below, RISK_OFF at or above, NEUTRAL between. */
  riskOnBelow: 40,
  riskOffFrom: 60,
  /** `risk_level` bands of the risk score: low below 25, moderate below 50, elevated below 75, high from 75. */
  riskLevelFrom: { moderate: 25, elevated: 50, high: 75 },
  percentileDecimals: 0,
  /** Volatility `level` by percentile: calm at or below 30, elevated from 70, extreme from 90 (CAUTION too). */
  volatilityPercentile: { calmAtMost: 30, elevatedFrom: 70, extremeFrom: 90 },
  correlationDecimals: 3,
  /** Correlation `level`: moderate from 0.3, high from 0.6. */
  correlationFrom: { moderate: 0.3, high: 0.6 },
  /** `OPPORTUNITY` needs a risk-on mode and at least this confidence. */
  opportunityConfidenceFrom: 50,
  /** The drawdown window: the 7-day high, or fewer hours when the candle history is shorter. */
  drawdownLookbackHours: 168,
  /**
   * Volatility `percentile` ranks the last 24 hours among the rolling 24-hour readings of this many hours of market
   * returns (20 days): an older candle never changes it; a shorter history ranks against what it has, named.
   */
  volatilityRankHours: 480,
} as const;

/**
 * The rule behind one asset's `risk_level` in the paid bodies: a count of stress signs, not a band of `risk_score`.
 * The paid engine counts with these numbers and the published description quotes them.
 */
export const ASSET_RISK_RULE = {
  /** Signs for `crowded_longs` or `crowded_shorts` positioning, for `deleveraging`, for an extreme funding level. */
  crowded: 2,
  deleveraging: 1,
  extremeFunding: 1,
  /** Signs for thin and for moderate liquidity. */
  thin: 2,
  moderate: 1,
  /** A 24-hour move of at least `largeMovePct` percent (either way) adds `largeMove` signs; of `movePct`, `move`. */
  largeMovePct: 10,
  largeMove: 2,
  movePct: 5,
  move: 1,
} as const;

const r = ASSET_RISK_RULE;
/** What an asset's `risk_level` means, in the words of its rule. */
export const ASSET_RISK_LEVEL_RULE =
  'stress signs counted on this asset (not a band of `risk_score`): crowded positioning (crowded longs or crowded ' +
  `shorts) ${r.crowded}, deleveraging ${r.deleveraging}, an extreme funding level (extreme high or extreme low) ` +
  `${r.extremeFunding}, thin liquidity ${r.thin}, moderate liquidity ${r.moderate}, a 24-hour price move of ` +
  `${r.largeMovePct} % or more either way ${r.largeMove} (of ${r.movePct} % or more, ${r.move}); 0 signs \`low\`, ` +
  '1 `moderate`, 2-3 `elevated`, 4 or more `high`. null when the 24-hour change, the liquidity reading or the ' +
  'positioning reading is missing: a count without one of them could only understate the stress';

/** One asset's stress level (paid bodies), described by its rule. */
export const AssetRiskLevel = RiskLevel.nullable().describe(ASSET_RISK_LEVEL_RULE);

/** The regime's confidence, with the rule that keeps it from rising when evidence goes missing. */
export const RegimeConfidence = Confidence.describe(
  '0-100: how strong and consistent the evidence behind the regime reading is, taken at the least it could be ' +
    'whatever the missing inputs would have said (capped at 95). Each input that did not come in (an asset ' +
    'without candles, a part of the risk score that could not be read, a drawdown window shorter than 7 days) ' +
    'counts as if it had disagreed, so confidence never rises when data goes missing, and it is 0 when the ' +
    'missing inputs alone could have reversed the lean. Not a probability that the reading is right',
);

export const RiskScore = z
  .number()
  .min(0)
  .max(100)
  .describe('0-100: how much the evidence points to a risk-off market (higher is riskier)');

const Breadth = z
  .strictObject({
    assets_above_ema50: z.number().int().min(0),
    assets_with_trend_data: z.number().int().min(0),
    share_above_ema50: z.number().min(0).max(1).nullable(),
  })
  .describe('how many assets trade above their 50-hour exponential average');

const TrendReading = z
  .strictObject({
    median_direction: z.enum(['up', 'down', 'flat']).nullable(),
    description: z.string(),
  })
  .describe('direction of the typical asset’s trend');

export const VolatilityLevel = z.enum(['calm', 'normal', 'elevated', 'extreme']);

const Volatility = z
  .strictObject({
    realised_annualised_pct: z
      .number()
      .min(0)
      .nullable()
      .describe(
        'annualised volatility of the equal-weighted market over the last 24 hours, in percent: the sample ' +
          'standard deviation of its 24 hourly log returns times the square root of 8760 (24 × 365)',
      ),
    percentile: z
      .number()
      .min(0)
      .max(100)
      .nullable()
      .describe(
        `where that volatility ranks among the rolling 24-hour readings of the last ${REGIME_RULE.volatilityRankHours} ` +
          'hours (0-100: the share of readings below it, ties counting half); fewer hours when the run read fewer ' +
          'hourly candles, named in the limitations',
      ),
    level: VolatilityLevel.nullable(),
  })
  .describe('realised volatility of the market and its rank against recent history');

const Drawdown = z
  .strictObject({
    median_from_recent_high_pct: z
      .number()
      .max(0)
      .nullable()
      .describe(
        'median distance below the recent high, in percent: the 7-day high, or the high of the shorter window ' +
          'an asset’s candle history allowed (`lookback_hours` and a limitation then say so)',
      ),
    deepest_asset: AssetSymbol.nullable(),
    deepest_from_recent_high_pct: z.number().max(0).nullable(),
    lookback_hours: z
      .number()
      .int()
      .min(1)
      .describe(
        'hours of candles searched for the recent high: 168 (7 days), or the shortest window any asset’s ' +
          'history allowed when that was less (the reading is then degraded and a limitation names the assets)',
      ),
  })
  .describe('how far assets trade below their recent highs, in percent');

const Correlation = z
  .strictObject({
    average_pairwise: z
      .number()
      .min(-1)
      .max(1)
      .nullable()
      .describe(
        'the mean of the Pearson correlations of every pair of sampled assets, each over the hourly log returns ' +
          'of the last 72 hours that both assets have',
      ),
    assets_sampled: z.number().int().min(0),
    pairs: z.number().int().min(0),
    level: z.enum(['low', 'moderate', 'high']).nullable(),
  })
  .describe('average pairwise correlation of hourly returns: high values mean assets move together');

export const RegimeDetail = z
  .strictObject({
    market_mode: MarketMode,
    market_state: MarketState,
    risk_score: RiskScore.nullable(),
    risk_level: RiskLevel.nullable(),
    confidence: RegimeConfidence,
    assets_covered: z.number().int().min(0),
    assets_total: z.number().int().min(0),
    breadth: Breadth,
    trend: TrendReading,
    volatility: Volatility,
    drawdown: Drawdown,
    correlation: Correlation,
    evidence: z.array(z.string()).describe('plain-language statements of what the evidence shows'),
    limitations: z.array(Limitation),
  })
  .describe('the regime reading and the market-wide evidence behind it');

export const MarketRegimeResponse = z.strictObject({
  ...freeSnapshotEnvelope,
  market_mode: MarketMode,
  market_state: MarketState,
  confidence: RegimeConfidence,
  regime: RegimeDetail,
});
export type MarketRegimeResponse = z.infer<typeof MarketRegimeResponse>;
