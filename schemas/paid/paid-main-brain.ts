// Paid main brain (SVC-X402-003): the full per-coin picture. Where the free main brain gives one line per coin,
// this joins, for each coin, the market snapshot, liquidity, derivatives positioning and the reasoning, says
// whether they agree, and lists the evidence and the limitations of each. The spec gives no body: documented in
// the README's Decisions.
import * as z from 'zod';
import { PAID_CATALOG } from '../catalog.ts';
import {
  AssetSymbol,
  Bias,
  Confidence,
  DataMode,
  DataStatus,
  DISCLAIMER,
  IsoTimestamp,
  Limitation,
  MEAN_OVER_ALL_ASSETS_RULE,
  PRICE_MEANING,
  PROJECT,
  SCHEMA_VERSION,
  SourceInfo,
} from '../common.ts';
import { DerivativesState, FUNDING_LEVEL_RULE, FundingLevel, OpenInterestReading } from '../derivatives.ts';
import { LiquidityContext, LiquidityStatus, MarketStructure } from '../liquidity-lite.ts';
import { MainBrainResponse } from '../main-brain.ts';
import { PublicPerformance } from '../performance.ts';
import { AssetRiskLevel } from '../market-regime.ts';
import { Prediction } from '../reasoning.ts';
import { PaymentStatus, PublisherBlock } from './terms.ts';

/** |book_imbalance| above this leans the order book one way (about 20 % more depth on one side within 1 % of mid). */
export const BOOK_LEAN_THRESHOLD = 0.2;

export const AGREEMENT_RULE =
  'Computed only from the three readings in agreement_readings (nulls left out): insufficient with fewer than two; ' +
  'conflicting when one is bullish and another bearish; aligned when all are the same; otherwise mixed (neutral ' +
  'beside one direction).';

export const Agreement = z.enum(['aligned', 'mixed', 'conflicting', 'insufficient']).describe(AGREEMENT_RULE);
export type Agreement = z.infer<typeof Agreement>;

export const AgreementReadings = z
  .strictObject({
    brain: Bias.nullable().describe('the brain bias of the coin (the reasoning shares this reading)'),
    derivatives: Bias.nullable().describe('derivatives.vote; null when positioning was unavailable'),
    order_book: Bias.nullable().describe(
      `lean of liquidity.book_imbalance: bullish above ${BOOK_LEAN_THRESHOLD}, bearish below -${BOOK_LEAN_THRESHOLD}, ` +
        'neutral between; null without a book',
    ),
  })
  .describe('every input of agreement, disclosed so that a reader can recompute it');
export type AgreementReadings = z.infer<typeof AgreementReadings>;

export const CoinMarket = z.strictObject({
  price: z.number().positive().nullable().describe(PRICE_MEANING),
  change_24h: z.number().nullable().describe('price change over 24 hours, in percent'),
  price_source: z.string().nullable(),
});

export const CoinLiquidity = z.strictObject({
  status: LiquidityStatus.nullable(),
  liquidity_context: LiquidityContext.nullable(),
  market_structure: MarketStructure.nullable(),
  spread_bps: z.number().min(0).nullable(),
  depth_usd_1pct: z.number().min(0).nullable().describe('bid plus ask depth within 1% of mid, in USD'),
  book_imbalance: z.number().min(-1).max(1).nullable(),
});

export const CoinDerivatives = z.strictObject({
  state: DerivativesState.nullable(),
  vote: Bias.nullable(),
  confidence: Confidence.nullable(),
  funding_rate_8h_pct: z.number().nullable(),
  funding_level: FundingLevel.nullable().describe(
    `funding level of the asset, as \`funding.level\` in /api/derivatives.php; null without data. ${FUNDING_LEVEL_RULE}`,
  ),
  open_interest_change_24h_pct: z.number().nullable(),
  open_interest_reading: OpenInterestReading.nullable(),
});

export const CoinReasoning = z.strictObject({
  prediction: Prediction,
  confidence: Confidence.nullable(),
  summary: z.string(),
  reason_points: z.array(z.string()),
});

export const CoinPicture = z.strictObject({
  asset: AssetSymbol,
  bias: Bias.nullable(),
  confidence: Confidence.nullable(),
  summary: z.string().nullable(),
  agreement: Agreement,
  agreement_readings: AgreementReadings,
  risk_level: AssetRiskLevel,
  market: CoinMarket,
  liquidity: CoinLiquidity.nullable(),
  derivatives: CoinDerivatives.nullable(),
  reasoning: CoinReasoning.nullable(),
  evidence: z.array(z.string()),
  limitations: z.array(Limitation),
  data_status: DataStatus,
});
export type CoinPicture = z.infer<typeof CoinPicture>;

export const PaidMainBrain = z.strictObject({
  success: z.literal(true),
  project: z.literal(PROJECT),
  endpoint: z.literal('x402-main-brain'),
  type: z.literal('paid_main_brain'),
  product_id: z.literal(PAID_CATALOG.paidMainBrain.productId),
  schema_version: z.literal(SCHEMA_VERSION),
  payment_status: PaymentStatus,
  publisher: PublisherBlock.optional(),
  summary: z.string(),
  market_state: MainBrainResponse.shape.market_state,
  confidence: Confidence.nullable().describe(
    `confidence across the market, 0-100, as the free main brain’s \`brain.average_confidence\`: ${MEAN_OVER_ALL_ASSETS_RULE}`,
  ),
  brain: MainBrainResponse.shape.brain,
  market_context: MainBrainResponse.shape.market_context,
  coins: z.record(AssetSymbol, CoinPicture),
  public_performance: PublicPerformance,
  evidence: z.array(z.string()),
  limitations: z.array(Limitation),
  source: SourceInfo,
  source_mode: DataMode,
  updated: IsoTimestamp,
  educational_only: z.literal(true),
  disclaimer: z.literal(DISCLAIMER),
});
export type PaidMainBrain = z.infer<typeof PaidMainBrain>;
