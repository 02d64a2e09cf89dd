// GET /api/liquidity-lite.php: spreads, depth and market structure per asset (spec 2.3).
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
  PROJECT,
  SourceInfo,
} from './common.ts';
import { PaidLink } from './envelope.ts';

export const LiquidityStatus = z.enum(['verified', 'partial', 'unavailable']);
export const LiquidityContext = z.enum(['deep', 'moderate', 'thin']);
export type LiquidityContext = z.infer<typeof LiquidityContext>;
export const MarketStructure = z.enum(['higher_highs_higher_lows', 'lower_highs_lower_lows', 'range']);
export type MarketStructure = z.infer<typeof MarketStructure>;
export const SpreadMethod = z.enum(['order_book', 'ticker', 'high_low_estimate']);
export type SpreadMethod = z.infer<typeof SpreadMethod>;

const LiquidityMetrics = z
  .strictObject({
    spread_bps: z.number().min(0).nullable().describe('bid-ask spread in basis points of the mid price'),
    spread_method: SpreadMethod.nullable().describe(
      'high_low_estimate: Corwin-Schultz estimate from candles when no book was available',
    ),
    bid_depth_usd_1pct: z.number().min(0).nullable().describe('USD resting on bids within 1% below mid'),
    ask_depth_usd_1pct: z.number().min(0).nullable().describe('USD resting on asks within 1% above mid'),
    book_imbalance: z
      .number()
      .min(-1)
      .max(1)
      .nullable()
      .describe('(bid depth - ask depth) / (bid depth + ask depth) within 1% of mid'),
    relative_volume: z
      .number()
      .min(0)
      .nullable()
      .describe('last 24 hours of volume against the median of earlier 24-hour blocks (1 = usual)'),
    amihud_illiquidity: z
      .number()
      .min(0)
      .nullable()
      .describe(
        'Amihud (2002): average absolute hourly return per million USD traded; higher is less liquid',
      ),
  })
  .describe('the measurements behind the liquidity context');

/** Spec 2.3 LiquidityLiteAsset, plus the measurements in `metrics`. */
export const LiquidityLiteAsset = z.strictObject({
  asset: AssetSymbol,
  status: LiquidityStatus.nullable(),
  liquidity_context: LiquidityContext.nullable(),
  market_structure: MarketStructure.nullable().describe('from swing highs and lows of the hourly candles'),
  price: z.number().positive().nullable(),
  change_24h: z.number().nullable().describe('price change over 24 hours, in percent'),
  confidence: Confidence.nullable().describe('the main brain’s confidence for this asset'),
  bias: Bias.nullable().describe('the main brain’s bias for this asset'),
  notes: z.array(z.string()).nullable(),
  metrics: LiquidityMetrics.nullable(),
  data_status: DataStatus,
});
export type LiquidityLiteAsset = z.infer<typeof LiquidityLiteAsset>;

const Upsell = z
  .strictObject({
    message: z.string(),
    protocol: z.literal('x402 v2'),
    endpoints: z.array(PaidLink),
  })
  .describe('premium resources that go further than this free one');

export const LiquidityLiteResponse = z.strictObject({
  success: z.boolean(),
  ok: z.boolean(),
  project: z.literal(PROJECT),
  endpoint: z.string(),
  name: z.string(),
  version: z.literal(LITE_VERSION),
  access: z.literal(FREE_ACCESS),
  description: z.string(),
  source_mode: DataMode,
  source: z.string().describe('provider and venues in words; see source_details for the structured form'),
  source_details: SourceInfo,
  educational_only: z.literal(true),
  not_financial_advice: z.literal(true),
  legacy_endpoint: z.string().nullable(),
  engine: z.string().nullable(),
  provider: z.string().nullable(),
  generated_at: IsoTimestamp.nullable(),
  updated_at: IsoTimestamp.nullable(),
  updated_utc: IsoTimestamp.nullable(),
  truth_statement: z.string().nullable(),
  asset_count: z.number().int().min(0).nullable(),
  assets_verified: z.number().int().min(0).nullable(),
  assets_failed: z.number().int().min(0).nullable(),
  assets: z.record(AssetSymbol, LiquidityLiteAsset),
  upsell: Upsell.nullable(),
  disclaimer: z.literal(DISCLAIMER),
  limitations: z.array(Limitation),
});
export type LiquidityLiteResponse = z.infer<typeof LiquidityLiteResponse>;
