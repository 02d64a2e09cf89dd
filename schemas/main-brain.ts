// GET /api/main-brain.php: one snapshot of the brain's per-asset reading and its market context (spec 2.1, 2.2).
import * as z from 'zod';
import {
  AssetSymbol,
  Bias,
  Confidence,
  DataStatus,
  Limitation,
  MEAN_OVER_ALL_ASSETS_RULE,
  PRICE_MEANING,
  SnapshotStatus,
} from './common.ts';
import { freeSnapshotEnvelope } from './envelope.ts';
import { PublicPerformance } from './performance.ts';
import { MarketMode, MarketState, RiskLevel, RiskScore, VolatilityLevel } from './market-regime.ts';

/** Spec 2.2. `change_24h` is in percent; `price_source` names the venue and says "(simulated)" when it was. */
export const CoinSnapshot = z.strictObject({
  asset: AssetSymbol,
  bias: Bias.nullable().describe('what the evidence leans to; null when there was no evidence'),
  confidence: Confidence.nullable(),
  summary: z.string().nullable(),
  price: z.number().positive().nullable().describe(PRICE_MEANING),
  change_24h: z.number().nullable().describe('price change over 24 hours, in percent'),
  price_source: z.string().nullable(),
  data_status: DataStatus,
});
export type CoinSnapshot = z.infer<typeof CoinSnapshot>;

const MarketStateSummary = z
  .strictObject({
    market_mode: MarketMode,
    market_state: MarketState,
    risk_level: RiskLevel.nullable(),
    confidence: Confidence,
    summary: z.string(),
  })
  .describe('the market regime in brief (the full reading is at /api/market-regime.php)');

const Brain = z
  .strictObject({
    status: SnapshotStatus,
    overall_bias: Bias.describe('the side most assets lean to; neutral when they are split'),
    assets_tracked: z.number().int().min(0),
    assets_with_evidence: z.number().int().min(0),
    leaning: z.strictObject({
      bullish: z.number().int().min(0),
      bearish: z.number().int().min(0),
      neutral: z.number().int().min(0),
    }),
    average_confidence: Confidence.nullable().describe(
      `confidence of the brain’s readings across the market, 0-100: ${MEAN_OVER_ALL_ASSETS_RULE}`,
    ),
    method: z.string().describe('what kinds of evidence the brain reads, without its weighting'),
    limitations: z.array(Limitation),
  })
  .describe('the brain’s reading across all tracked assets');

const MarketContext = z
  .strictObject({
    market_mode: MarketMode,
    risk_score: RiskScore.nullable(),
    breadth_share_above_ema50: z.number().min(0).max(1).nullable(),
    volatility_level: VolatilityLevel.nullable(),
    derivatives_state: z.string().nullable().describe('the most common positioning reading across assets'),
    thin_liquidity_assets: z
      .array(AssetSymbol)
      .describe(
        'assets whose `liquidity_context` is thin (rule in /api/liquidity-lite.php): from the order book, or, for ' +
          'an asset without one, from a spread past the thin mark alone. An asset without an order book and a ' +
          'narrower spread has no liquidity label and is not listed; `brain.limitations` names the assets without ' +
          'an order book',
      ),
    notes: z.array(z.string()),
  })
  .describe('market-wide context drawn from the regime, derivatives and liquidity readings');

export const MainBrainResponse = z.strictObject({
  ...freeSnapshotEnvelope,
  market_state: MarketStateSummary,
  coins: z.record(AssetSymbol, CoinSnapshot),
  brain: Brain,
  market_context: MarketContext,
  public_performance: PublicPerformance,
});
export type MainBrainResponse = z.infer<typeof MainBrainResponse>;
