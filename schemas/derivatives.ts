// GET /api/derivatives.php: funding, open interest and liquidations per asset (spec 2.4).
import * as z from 'zod';
import {
  AssetSymbol,
  Bias,
  Confidence,
  DataMode,
  DataStatus,
  DISCLAIMER,
  FREE_ACCESS,
  IsoTimestamp,
  Limitation,
  LITE_VERSION,
  MEAN_OVER_ALL_ASSETS_RULE,
  PROJECT,
  SnapshotStatus,
  SourceInfo,
} from './common.ts';
import { PaidLink, RelatedLinks } from './envelope.ts';

export const DerivativesState = z.enum([
  'crowded_longs',
  'crowded_shorts',
  'new_longs',
  'short_covering',
  'new_shorts',
  'deleveraging',
  'balanced',
  'unavailable',
]);
export type DerivativesState = z.infer<typeof DerivativesState>;

export const OpenInterestReading = z.enum([
  'new_longs',
  'short_covering',
  'new_shorts',
  'deleveraging',
  'new_positions',
  'closing_positions',
  'flat',
]);
export type OpenInterestReading = z.infer<typeof OpenInterestReading>;

export const FundingLevel = z.enum(['extreme_high', 'high', 'normal', 'low', 'extreme_low']);
export type FundingLevel = z.infer<typeof FundingLevel>;

/**
 * The rule behind funding `level` and `crowding`, rates per 8 h as fractions. The engine reads these numbers and
 * the published descriptions quote them, so the words cannot drift from the rule.
 */
export const FUNDING_RULE = {
  /** At or beyond these fixed marks the level is extreme, whatever the rate's history. */
  extremeHigh8h: 0.001,
  extremeLow8h: -0.0005,
  /** Robust z-scores that make a level extreme, or high/low, against the rate's own recent history. */
  extremeZ: 2.5,
  highZ: 1.5,
  /** Bands used instead of the z-score when there are too few settled rates for one. */
  high8h: 0.0003,
  low8h: -0.0001,
  /** The common base rate: funding at it is the default, not a sign of crowding. */
  base8h: 0.0001,
  /** The z-score compares the current rate with the settled rates of this many days... */
  windowDays: 30,
  /** ...when there are at least this many of them. */
  minHistory: 10,
} as const;

/** A rate per 8 h in percent for a description: 0.001 -> "+0.1 %". */
const pct8h = (fraction: number): string =>
  `${fraction > 0 ? '+' : ''}${Number((fraction * 100).toFixed(4))} %`;

/** What `level` means, in the words of its rule. */
export const FUNDING_LEVEL_RULE =
  `\`extreme_high\` when the rate is at or above the fixed mark of ${pct8h(FUNDING_RULE.extremeHigh8h)} per 8 h ` +
  `or its z_score_30d is ${FUNDING_RULE.extremeZ} or more; \`extreme_low\` when the rate is at or below ` +
  `${pct8h(FUNDING_RULE.extremeLow8h)} per 8 h or its z_score_30d is -${FUNDING_RULE.extremeZ} or less (the fixed ` +
  `marks apply whatever the history). Otherwise, with a z-score: \`high\` from ${FUNDING_RULE.highZ}, \`low\` ` +
  `from -${FUNDING_RULE.highZ}, \`normal\` between; without one (too few settled rates): \`high\` from ` +
  `${pct8h(FUNDING_RULE.high8h)} and \`low\` from ${pct8h(FUNDING_RULE.low8h)} per 8 h, \`normal\` between`;

/**
 * Open interest's `reading`: a 24-hour change smaller than `flatBand` either way (as a fraction) is `flat`; a price
 * whose 24-hour change is smaller than `priceFlatBand` either way names no side (`new_positions`,
 * `closing_positions`).
 */
export const OPEN_INTEREST_RULE = { flatBand: 0.02, priceFlatBand: 0.01 } as const;

const bandWords = (band: number): string => `±${Number((band * 100).toFixed(4))} %`;

/** "±2 %": the flat band in the words every description of it uses. */
export const OI_FLAT_WORDS = bandWords(OPEN_INTEREST_RULE.flatBand);

/** "±1 %": the band of a price too flat to name a side, in the same words. */
export const OI_PRICE_FLAT_WORDS = bandWords(OPEN_INTEREST_RULE.priceFlatBand);

/** What an open-interest `reading` means, in the words of its rule (positioning.ts `oiReading`). */
export const OPEN_INTEREST_READING_RULE =
  `open interest's 24-hour change read against the price's: \`flat\` when the change is inside ${OI_FLAT_WORDS} ` +
  `(less than ${OPEN_INTEREST_RULE.flatBand * 100} % either way); otherwise, with the price's 24-hour change ` +
  `inside ${OI_PRICE_FLAT_WORDS} (less than ${OPEN_INTEREST_RULE.priceFlatBand * 100} % either way, too flat to ` +
  'name a side), `new_positions` (open interest up) or `closing_positions` (open interest down); otherwise ' +
  '`new_longs` (open interest up, price up), `new_shorts` (open interest up, price down), `short_covering` (open ' +
  'interest down, price up), `deleveraging` (open interest down, price down); null without a 24-hour comparison ' +
  'or a price change';

/**
 * Liquidations' `dominant_side`, by the long share of the 24-hour USD total: above `longsAbove` it is `longs`,
 * below `shortsBelow` `shorts`, `balanced` from one to the other (both included).
 */
export const LIQUIDATION_SIDE_RULE = { longsAbove: 0.6, shortsBelow: 0.4 } as const;

/** What `dominant_side` means, in the words of its rule. */
export const DOMINANT_SIDE_RULE =
  'which side the liquidations were mostly on, by the long share of the 24-hour USD total: `longs` when longs are ' +
  `more than ${LIQUIDATION_SIDE_RULE.longsAbove * 100} % of it, \`shorts\` when they are less than ` +
  `${LIQUIDATION_SIDE_RULE.shortsBelow * 100} %, \`balanced\` from ${LIQUIDATION_SIDE_RULE.shortsBelow * 100} % ` +
  `to ${LIQUIDATION_SIDE_RULE.longsAbove * 100} % (neither side clearly more: not an equal split), \`none\` when ` +
  'nothing was liquidated; null when the figures are estimated: an estimate from open-interest drops counts ' +
  'voluntary closes too, so it cannot say which side was liquidated';

/** The venue that supplied the value, tagged "(simulated)" or "(replayed)" when it was. */
const Venue = z.string().describe('venue of the value, e.g. "binance-usdm" or "binance-usdm (simulated)"');

const FundingDetail = z
  .strictObject({
    rate_8h_pct: z
      .number()
      .describe('funding rate per 8 hours, in percent (normalised from the venue interval)'),
    rate_kind: z
      .enum(['predicted', 'settled'])
      .describe(
        '`predicted`: the rate the venue states for the funding period still running (it can change until the ' +
          'period settles); `settled`: the last rate actually charged',
      ),
    annualised_pct: z
      .number()
      .describe(
        'the 8-hour rate times 3 x 365 (three periods a day for a year, not compounded), in percent: a simple scale of the rate, not a return',
      ),
    venue_interval_hours: z.number().positive(),
    z_score_30d: z
      .number()
      .nullable()
      .describe(
        `robust z-score of the current rate against the settled rates of the last ${FUNDING_RULE.windowDays} days ` +
          '(fewer days when the venue gives less history): (rate - median) / (1.4826 x median absolute ' +
          `deviation), the spread floored at 0.001 % per 8 h; null with fewer than ${FUNDING_RULE.minHistory} rates`,
      ),
    history_points: z
      .number()
      .int()
      .min(0)
      .describe(
        `settled rates the z-score is computed from: those of the last ${FUNDING_RULE.windowDays} days, at most ` +
          `${FUNDING_RULE.windowDays} x 24 / venue_interval_hours (counted at the current interval, so approximate ` +
          'when the venue changed it within the month); fewer when the venue gave less history',
      ),
    level: FundingLevel.describe(`funding level: ${FUNDING_LEVEL_RULE}`),
    crowding: z
      .enum(['crowded_longs', 'crowded_shorts', 'none'])
      .describe(
        '`crowded_longs` when `level` is `extreme_high` and the rate is above the ' +
          `${pct8h(FUNDING_RULE.base8h)} per 8 h base rate; \`crowded_shorts\` when \`level\` is \`extreme_low\` ` +
          'and the rate is negative; otherwise `none`',
      ),
    basis_pct: z.number().nullable().describe('(mark - index) / index, in percent'),
    venue: Venue,
  })
  .describe('perpetual funding: who pays whom to hold positions');

const OpenInterestDetail = z
  .strictObject({
    value_usd: z.number().min(0),
    change_24h_pct: z
      .number()
      .nullable()
      .describe(
        "change over 24 hours of the contracts open, in coins valued at today's price, so that it reads positions " +
          'opened or closed and not the price move; null without a history a day long',
      ),
    price_change_24h_pct: z.number().nullable(),
    reading: OpenInterestReading.nullable().describe(OPEN_INTEREST_READING_RULE),
    leverage_proxy: z
      .number()
      .min(0)
      .nullable()
      .describe(
        'open interest divided by the 24-hour spot volume of one venue (the ticker venue, named in the evidence); ' +
          'higher means more leverage per unit traded; null when the only volume is an aggregate across all ' +
          'exchanges (CoinGecko), which one venue’s open interest cannot be set against',
      ),
    venue: Venue,
  })
  .describe('open interest on perpetual futures');

const LiquidationsDetail = z
  .strictObject({
    long_usd_24h: z.number().min(0),
    short_usd_24h: z.number().min(0),
    events: z.number().int().min(0).nullable(),
    dominant_side: z.enum(['longs', 'shorts', 'balanced', 'none']).nullable().describe(DOMINANT_SIDE_RULE),
    estimated: z
      .boolean()
      .describe(
        'true when the figures are an upper-bound estimate from open-interest drops (voluntary closes count too) ' +
          'rather than liquidations a venue reported; `events` and `dominant_side` are then null',
      ),
    venue: Venue,
  })
  .describe('forced closures over the last 24 hours');

/** Spec 2.4 DerivativesAsset. */
export const DerivativesAsset = z.strictObject({
  asset: AssetSymbol,
  state: DerivativesState.nullable(),
  vote: Bias.nullable().describe('the side the positioning evidence leans to'),
  confidence: Confidence.nullable(),
  funding: FundingDetail.nullable(),
  open_interest: OpenInterestDetail.nullable(),
  liquidations: LiquidationsDetail.nullable(),
  evidence: z.array(z.string()).nullable(),
  limitations: z.array(Limitation).nullable(),
  data_status: DataStatus,
});
export type DerivativesAsset = z.infer<typeof DerivativesAsset>;

const Explore = z
  .strictObject({
    reasoning_by_asset: z.string().describe('path template; replace {asset} with a supported symbol'),
    supported_assets: z.array(AssetSymbol),
  })
  .describe('where to look next for per-asset detail');

const UpgradePath = z
  .strictObject({
    description: z.string(),
    protocol: z.literal('x402 v2'),
    endpoints: z.array(PaidLink),
  })
  .describe('premium resources that extend this one');

export const DerivativesResponse = z.strictObject({
  success: z.boolean(),
  project: z.literal(PROJECT),
  endpoint: z.string(),
  name: z.string(),
  version: z.literal(LITE_VERSION),
  access: z.literal(FREE_ACCESS),
  source_mode: DataMode,
  source_details: SourceInfo,
  educational_only: z.literal(true),
  generated_at: IsoTimestamp.nullable(),
  updated_utc: IsoTimestamp.nullable(),
  status: SnapshotStatus.nullable(),
  engine: z.string().nullable(),
  engine_version: z.string().nullable(),
  source: z.string().nullable().describe('provider and venues in words; see source_details'),
  summary: z.string().nullable(),
  overall_state: z.union([DerivativesState, z.literal('mixed')]).nullable(),
  overall_vote: Bias.nullable(),
  truth_statement: z.string().nullable(),
  confidence: Confidence.nullable().describe(
    `positioning confidence across the market, 0-100: ${MEAN_OVER_ALL_ASSETS_RULE} (an asset without a ` +
      'positioning reading has none). It says how strong the positioning evidence is, not how many assets share ' +
      '`overall_vote` (the summary counts those); not a probability that a reading is right',
  ),
  assets: z.record(AssetSymbol, DerivativesAsset),
  evidence: z.array(z.string()).nullable(),
  limitations: z.array(Limitation).nullable(),
  related_endpoints: RelatedLinks.nullable(),
  explore: Explore.nullable(),
  upgrade_path: UpgradePath.nullable(),
  disclaimer: z.literal(DISCLAIMER),
});
export type DerivativesResponse = z.infer<typeof DerivativesResponse>;
