// Paid market regime (SVC-X402-001, spec 2.9): the free regime reading in full, plus the risk factors behind its
// risk score and a regime line per asset. `source` is a string here, as the spec lists it.
import * as z from 'zod';
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
} from '../common.ts';
import { DerivativesState } from '../derivatives.ts';
import { LiquidityContext } from '../liquidity-lite.ts';
import {
  AssetRiskLevel,
  MarketMode,
  MarketState,
  RegimeDetail,
  RiskLevel,
  RiskScore,
} from '../market-regime.ts';
import { PaymentStatus, PublisherBlock } from './terms.ts';

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
  product_id: z.literal('SVC-X402-001'),
  schema_version: z.literal(SCHEMA_VERSION),
  payment_status: PaymentStatus,
  publisher: PublisherBlock.optional(),
  market_mode: MarketMode.nullable(),
  market_state: MarketState.nullable(),
  summary: z.string().nullable(),
  confidence: Confidence.nullable(),
  risk_score: RiskScore.nullable(),
  risk_level: RiskLevel.nullable(),
  risk_factors: z
    .array(RiskFactor)
    .describe('what the risk score is made of, each as a level, never as a weight'),
  regime: RegimeDetail,
  assets: z.record(AssetSymbol, AssetRegime),
  evidence: z.array(z.string()),
  limitations: z.array(Limitation),
  source: z
    .string()
    .describe('provider and venues in words; says "simulated" or "replayed" when the data was'),
  source_mode: DataMode,
  simulated: z.boolean(),
  updated: IsoTimestamp,
  educational_only: z.literal(true),
  disclaimer: z.literal(DISCLAIMER),
});
export type PaidMarketRegime = z.infer<typeof PaidMarketRegime>;
