// Entry point of the free engines: one market snapshot and a clock in, the five free bodies out.
import type { DerivativesResponse } from '../../schemas/derivatives.ts';
import type { LiquidityLiteResponse } from '../../schemas/liquidity-lite.ts';
import type { MainBrainResponse } from '../../schemas/main-brain.ts';
import type { MarketRegimeResponse } from '../../schemas/market-regime.ts';
import { NO_PERFORMANCE_HISTORY, type PublicPerformance } from '../../schemas/performance.ts';
import type { ReasoningResponse } from '../../schemas/reasoning.ts';
import type { MarketSnapshot } from '../market/types.ts';
import { analyzeSnapshot, type MarketAnalysis } from './analysis.ts';
import type { RunClock } from './clock.ts';
import { derivativesBody } from './derivatives-body.ts';
import { liquidityLiteBody } from './liquidity-lite-body.ts';
import { mainBrainBody } from './main-brain-body.ts';
import { marketRegimeBody } from './market-regime-body.ts';
import { reasoningBodies } from './reasoning-body.ts';

export { analyzeSnapshot, type MarketAnalysis } from './analysis.ts';
export { analyzeAsset, type AssetAnalysis } from './asset-analysis.ts';
export type { RegimeReading } from './regime.ts';

export interface FreeSnapshots {
  marketRegime: MarketRegimeResponse;
  mainBrain: MainBrainResponse;
  liquidityLite: LiquidityLiteResponse;
  derivatives: DerivativesResponse;
  /** One body per symbol in the snapshot. */
  reasoning: Record<string, ReasoningResponse>;
}

/** Build the free bodies from an analysis computed once (the paid engines can read the same analysis). */
export function freeSnapshotsFrom(
  analysis: MarketAnalysis,
  clock: RunClock,
  performance: PublicPerformance = NO_PERFORMANCE_HISTORY,
): FreeSnapshots {
  return {
    marketRegime: marketRegimeBody(analysis, clock),
    mainBrain: mainBrainBody(analysis, clock, performance),
    liquidityLite: liquidityLiteBody(analysis, clock),
    derivatives: derivativesBody(analysis, clock),
    reasoning: reasoningBodies(analysis, clock),
  };
}

export function buildFreeSnapshots(
  snapshot: MarketSnapshot,
  clock: RunClock,
  performance: PublicPerformance = NO_PERFORMANCE_HISTORY,
): FreeSnapshots {
  return freeSnapshotsFrom(analyzeSnapshot(snapshot), clock, performance);
}
