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
  groupThousands,
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

/**
 * The rule behind `liquidity_context` (generator/engines/liquidity.ts applies it; its published description quotes
 * it): spreads in basis points of mid, depth in USD within 1 % of mid on the thinner side of the book.
 */
export const LIQUIDITY_CONTEXT_RULE = {
  deepSpreadBps: 5,
  thinSpreadBps: 25,
  deepDepthUsd: 1_000_000,
  thinDepthUsd: 100_000,
  /** Hourly high-low ranges carry intrabar volatility, so the estimate runs high: it gets this many times the room. */
  estimateSlack: 2,
} as const;

/** `relative_volume` reads the 24-hour blocks of this many days at most (generator/engines/liquidity.ts). */
export const RELATIVE_VOLUME_DAYS = 20;

const usd = (n: number): string => `${groupThousands(String(n))} USD`;
const { deepSpreadBps, thinSpreadBps, deepDepthUsd, thinDepthUsd, estimateSlack } = LIQUIDITY_CONTEXT_RULE;

/** What `liquidity_context` means, in the words of its rule. */
export const LIQUIDITY_CONTEXT_MEANING =
  'how liquid the market is, read from the order book: `thin` when the bid-ask spread is wider than ' +
  `${thinSpreadBps} bps or the thinner side of the book holds less than ${usd(thinDepthUsd)} within 1 % of mid; ` +
  `\`deep\` when the spread is ${deepSpreadBps} bps or less and both sides hold at least ${usd(deepDepthUsd)} ` +
  'within 1 % of mid; `moderate` otherwise. With no order book (none came in, or it could not be read) the depth ' +
  'is unknown, so there is no label unless the spread alone reads `thin`: a quoted spread wider than ' +
  `${thinSpreadBps} bps, or a high-low estimate wider than ${thinSpreadBps * estimateSlack} bps (it runs high); ` +
  '`metrics.spread_method` of /api/liquidity-lite.php says which spread it was. null without an order book and ' +
  'a spread that wide, and without data';
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
      .describe(
        'last 24 hours of volume against the median of the earlier 24-hour blocks of the last ' +
          `${RELATIVE_VOLUME_DAYS} days (fewer when the run read fewer hourly candles; 1 = usual)`,
      ),
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
