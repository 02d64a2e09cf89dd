// Bodies of /api/reasoning.php?asset=X: one per asset.
import { DISCLAIMER, EDUCATIONAL_NOTICE, PROJECT } from '../../schemas/common.ts';
import type { Prediction, ReasoningResponse } from '../../schemas/reasoning.ts';
import type { MarketAnalysis } from './analysis.ts';
import type { AssetAnalysis } from './asset-analysis.ts';
import { iso, type RunClock } from './clock.ts';
import { sourceInfo, truthStatement } from './labels.ts';

const predictionOf = (a: AssetAnalysis): Prediction =>
  a.bias === null ? 'NONE' : a.bias === 'bullish' ? 'BULLISH' : a.bias === 'bearish' ? 'BEARISH' : 'NEUTRAL';

const DEVELOPER_NOTE =
  'reason_points say what the evidence shows, not how it is weighted. A NONE prediction with null confidence ' +
  'means there was no evidence for this asset this run (data_status says whether any data came in at all); ' +
  'read limitations before relying on any reading.';

export function reasoningBody(
  analysis: MarketAnalysis,
  asset: AssetAnalysis,
  clock: RunClock,
): ReasoningResponse {
  const { snapshot } = analysis;
  return {
    success: true,
    project: PROJECT,
    type: 'reasoning',
    mode: snapshot.mode,
    asset: asset.symbol,
    reasoning: {
      prediction: predictionOf(asset),
      confidence: asset.confidence,
      summary: asset.summary,
      reason_points: asset.reasonPoints,
      limitations: asset.limitations,
      data_status: asset.dataStatus,
    },
    supported_assets: analysis.supportedAssets,
    developer_note: DEVELOPER_NOTE,
    educational_notice: EDUCATIONAL_NOTICE,
    updated_utc: iso(clock.generatedAt),
    source_mode: snapshot.mode,
    source: sourceInfo(snapshot, analysis.venues, clock, asset.degraded),
    truth_statement: truthStatement(snapshot, analysis.venues),
    disclaimer: DISCLAIMER,
  };
}

export const reasoningBodies = (
  analysis: MarketAnalysis,
  clock: RunClock,
): Record<string, ReasoningResponse> =>
  Object.fromEntries(analysis.assets.map((a) => [a.symbol, reasoningBody(analysis, a, clock)]));
