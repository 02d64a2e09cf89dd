// Paid market regime (SVC-X402-001, spec 2.9): the free regime reading in full, plus risk factors to read beside its
// risk score (two of them restate parts of the score, three are context the score leaves out) and a regime line
// per asset. `source` is a string here, as the spec lists it.
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
  PROJECT,
  SCHEMA_VERSION,
  SourceInfo,
} from '../common.ts';
import { DerivativesState } from '../derivatives.ts';
import { LiquidityContext } from '../liquidity-lite.ts';
import {
  AssetRiskLevel,
  MarketMode,
  MarketState,
  RegimeConfidence,
  RegimeDetail,
  RiskLevel,
  RiskScore,
} from '../market-regime.ts';
import { PaymentStatus, PublisherBlock } from './terms.ts';

/**
 * How `leverage` and `liquidity` get their level (generator/engines/paid/market-regime.ts countedFactor, join.ts
 * levelFromCount): published with the field, and enforced there.
 */
export const COUNTED_FACTOR_RULE =
  '`leverage` counts the assets with crowded positioning or extreme funding, `liquidity` the assets whose ' +
  'liquidity reads thin, each among the assets with a reading, banded 0 low, 1 moderate, 2 to 3 elevated, 4 or ' +
  'more high; `breadth` bands the share of assets above their 50-hour average (0.6 or more low, 0.4 moderate, ' +
  '0.2 elevated, less high). An asset without a reading could show the sign (or be above the average) or not, so ' +
  'the factor gets a level only when the assets without one could not change it; otherwise it is left out and a ' +
  'limitation gives the range of levels they leave open.';

export const RiskFactor = z.strictObject({
  factor: z.enum(['volatility', 'leverage', 'liquidity', 'breadth', 'data_quality']),
  level: RiskLevel,
  note: z.string(),
});
export type RiskFactor = z.infer<typeof RiskFactor>;

export const AssetRegime = z.strictObject({
  asset: AssetSymbol,
  bias: Bias.nullable(),
  confidence: Confidence.nullable(),
  risk_level: AssetRiskLevel,
  derivatives_state: DerivativesState.nullable(),
  liquidity_context: LiquidityContext.nullable(),
  note: z.string(),
  data_status: DataStatus,
});
export type AssetRegime = z.infer<typeof AssetRegime>;

export const PaidMarketRegime = z.strictObject({
  success: z.literal(true),
  project: z.literal(PROJECT),
  endpoint: z.literal('x402-market-regime'),
  type: z.literal('paid_market_regime'),
  product_id: z.literal(PAID_CATALOG.paidMarketRegime.productId),
  schema_version: z.literal(SCHEMA_VERSION),
  payment_status: PaymentStatus,
  publisher: PublisherBlock.optional(),
  market_mode: MarketMode.nullable(),
  market_state: MarketState.nullable(),
  summary: z.string().nullable(),
  confidence: RegimeConfidence.nullable(),
  risk_score: RiskScore.nullable(),
  risk_level: RiskLevel.nullable(),
  risk_factors: z
    .array(RiskFactor)
    .describe(
      'risks to read beside the risk score, each as a level with the figures behind it, never as a weight. The ' +
        'score itself is made of breadth, trend, volatility, drawdown and correlation (all five are in `regime`); ' +
        '`volatility` and `breadth` here restate two of them, while `leverage`, `liquidity` and `data_quality` are ' +
        'not part of the score: context the score does not include. A factor that could not be read is left out ' +
        `and a limitation says so. ${COUNTED_FACTOR_RULE}`,
    ),
  regime: RegimeDetail,
  assets: z.record(AssetSymbol, AssetRegime),
  evidence: z.array(z.string()),
  limitations: z.array(Limitation),
  source: z
    .string()
    .describe('provider and venues in words; says "simulated" or "replayed" when the data was'),
  source_details: SourceInfo,
  source_mode: DataMode,
  simulated: z.boolean(),
  updated: IsoTimestamp,
  educational_only: z.literal(true),
  disclaimer: z.literal(DISCLAIMER),
});
export type PaidMarketRegime = z.infer<typeof PaidMarketRegime>;
