// Paid atlas for developers and AI agents (SVC-X402-002), public schema 0.1.0. The spec lists two shapes; this is
// their union reconciled into one body: every field of both, with `summary` an object (the 0.1.0 shape) whose
// `text` carries the prose that the other shape gave as a string.
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
  SourceInfo,
} from '../common.ts';
import { DerivativesState } from '../derivatives.ts';
import { LiquidityContext } from '../liquidity-lite.ts';
import { AssetRiskLevel, MarketMode, MarketState, RiskScore } from '../market-regime.ts';
import { Prediction } from '../reasoning.ts';
import { Agreement } from './paid-main-brain.ts';
import { ATLAS_SCHEMA_VERSION, PaymentStatus, PublisherBlock } from './terms.ts';

export const AtlasAsset = z.strictObject({
  asset: AssetSymbol,
  bias: Bias.nullable(),
  confidence: Confidence.nullable(),
  price: z.number().positive().nullable(),
  change_24h: z.number().nullable().describe('percent change over 24 hours'),
  liquidity_context: LiquidityContext.nullable(),
  derivatives_state: DerivativesState.nullable(),
  reasoning_prediction: Prediction.nullable(),
  agreement: Agreement,
  risk_level: AssetRiskLevel,
  data_status: DataStatus,
  sections_available: z
    .number()
    .int()
    .min(0)
    .max(4)
    .describe('of market, liquidity, derivatives and reasoning'),
});
export type AtlasAsset = z.infer<typeof AtlasAsset>;

export const AtlasSummary = z.strictObject({
  text: z.string(),
  market_mode: MarketMode.nullable(),
  market_state: MarketState.nullable(),
  risk_score: RiskScore.nullable(),
  breadth: z.strictObject({
    bullish: z.number().int().min(0),
    bearish: z.number().int().min(0),
    neutral: z.number().int().min(0),
    unknown: z.number().int().min(0),
  }),
  strongest: z.array(AssetSymbol).describe('assets with the highest evidence confidence, strongest first'),
  conflicting: z.array(AssetSymbol).describe('assets whose sections lean opposite ways'),
});

export const AtlasConfidence = z.strictObject({
  overall: Confidence.nullable(),
  by_asset: z.record(AssetSymbol, Confidence.nullable()),
  meaning: z.string(),
});

export const AtlasEvidence = z.strictObject({
  market: z.array(z.string()),
  liquidity: z.array(z.string()),
  derivatives: z.array(z.string()),
  reasoning: z.array(z.string()),
});

export const Atlas = z.strictObject({
  success: z.literal(true),
  project: z.literal(PROJECT),
  endpoint: z.literal('x402-atlas'),
  product_id: z.literal(PAID_CATALOG.atlas.productId),
  payment_status: PaymentStatus,
  publisher: PublisherBlock.optional(),
  schema_version: z.literal(ATLAS_SCHEMA_VERSION),
  intelligence_layer: z.strictObject({
    name: z.literal('atlas'),
    description: z.string(),
    source_mode: DataMode,
    simulated: z.boolean(),
    as_of: IsoTimestamp,
    assets: z.record(AssetSymbol, AtlasAsset),
  }),
  summary: AtlasSummary,
  confidence: AtlasConfidence,
  evidence: AtlasEvidence,
  limitations: z.array(Limitation),
  source_details: SourceInfo,
  updated: IsoTimestamp,
  educational_only: z.literal(true),
  disclaimer: z.literal(DISCLAIMER),
});
export type Atlas = z.infer<typeof Atlas>;
