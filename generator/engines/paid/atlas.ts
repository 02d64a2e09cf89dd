// Paid atlas (schema 0.1.0): one machine-readable intelligence layer joining every section per asset.
import { PAID_CATALOG } from '../../../schemas/catalog.ts';
import { DISCLAIMER, PROJECT } from '../../../schemas/common.ts';
import type { Atlas, AtlasAsset } from '../../../schemas/paid/atlas.ts';
import { ATLAS_SCHEMA_VERSION } from '../../../schemas/paid/terms.ts';
import { iso, type RunClock } from '../clock.ts';
import { groupedBySymbol, meanOverAllAssets } from '../aggregate.ts';
import type { FreeSnapshots } from '../index.ts';
import { conflictWords, dataLabelOf, dataNoticeLines, paidSourceOf, type AssetView } from './join.ts';

const CONFIDENCE_MEANING =
  'Confidence (0-100) is the strength and agreement of the available evidence, not the probability of being right.';

function atlasAsset(view: AssetView): AtlasAsset {
  return {
    asset: view.asset,
    bias: view.coin.bias,
    confidence: view.coin.confidence,
    price: view.coin.price,
    change_24h: view.coin.change_24h,
    liquidity_context: view.liquidity?.liquidity_context ?? null,
    derivatives_state: view.derivatives?.state ?? null,
    // The field may be null (no reading), so NONE is published as null here.
    reasoning_prediction:
      view.reasoning === null || view.reasoning.prediction === 'NONE' ? null : view.reasoning.prediction,
    agreement: view.agreement,
    risk_level: view.riskLevel,
    data_status: view.coin.data_status,
    sections_available: view.sectionsAvailable,
  };
}

/** Strongest first; ties keep the registry order, so the output is deterministic. */
const byConfidence = (views: readonly AssetView[]): AssetView[] =>
  views
    .map((v, i) => ({ v, i }))
    .filter(({ v }) => v.coin.confidence !== null)
    .sort((a, b) => (b.v.coin.confidence ?? 0) - (a.v.coin.confidence ?? 0) || a.i - b.i)
    .map(({ v }) => v);

export function atlasBody(free: FreeSnapshots, views: readonly AssetView[], clock: RunClock): Atlas {
  const regime = free.marketRegime;
  const count = (bias: string | null) => views.filter((v) => v.coin.bias === bias).length;
  const strongest = byConfidence(views)
    .slice(0, 3)
    .map((v) => v.asset);
  const conflictingViews = views.filter((v) => v.agreement === 'conflicting');
  const conflicting = conflictingViews.map((v) => v.asset);
  // Simulated or replayed numbers say so in the prose and the limitations, not only in a flag.
  const dataLabel = dataLabelOf(regime.source.mode);
  const text =
    `${dataLabel}${regime.summary} ${count('bullish')} of ${views.length} assets lean bullish and ${count('bearish')} bearish` +
    (conflicting.length
      ? `; the readings point opposite ways on ${conflictingViews.map(conflictWords).join(', ')}.`
      : '.');
  return {
    success: true,
    project: PROJECT,
    endpoint: 'x402-atlas',
    product_id: PAID_CATALOG.atlas.productId,
    payment_status: 'settled',
    schema_version: ATLAS_SCHEMA_VERSION,
    intelligence_layer: {
      name: 'atlas',
      description: 'Per-asset join of the market, liquidity, derivatives and reasoning readings of one run.',
      source_mode: regime.source.mode,
      simulated: regime.source.simulated,
      as_of: regime.source.as_of,
      assets: Object.fromEntries(views.map((v) => [v.asset, atlasAsset(v)])),
    },
    summary: {
      text,
      market_mode: regime.market_mode,
      market_state: regime.market_state,
      risk_score: regime.regime.risk_score,
      breadth: {
        bullish: count('bullish'),
        bearish: count('bearish'),
        neutral: count('neutral'),
        unknown: count(null),
      },
      strongest,
      conflicting,
    },
    confidence: {
      // Every tracked asset, one without evidence counting as 0 (MEAN_OVER_ALL_ASSETS_RULE), as the main brain.
      overall: meanOverAllAssets(views.map((v) => v.coin.confidence)),
      by_asset: Object.fromEntries(views.map((v) => [v.asset, v.coin.confidence])),
      meaning: CONFIDENCE_MEANING,
    },
    evidence: {
      market: regime.regime.evidence,
      liquidity: views.flatMap((v) => (v.liquidity?.notes ?? []).map((note) => `${v.asset}: ${note}`)),
      derivatives: free.derivatives.evidence ?? [],
      reasoning: views.flatMap((v) => (v.reasoning ? [v.reasoning.summary] : [])),
    },
    limitations: [
      ...new Set([
        ...dataNoticeLines(regime.source.mode, regime.truth_statement),
        ...regime.regime.limitations,
        ...groupedBySymbol(views.map((v) => ({ symbol: v.asset, lines: v.limitations }))),
      ]),
    ],
    source_details: paidSourceOf(free, 'atlas'),
    updated: iso(clock.generatedAt),
    educational_only: true,
    disclaimer: DISCLAIMER,
  };
}
