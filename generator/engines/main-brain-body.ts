// Body of /api/main-brain.php.
import { FREE_CATALOG } from '../../schemas/catalog.ts';
import { DISCLAIMER, FREE_ACCESS, PROJECT, SCHEMA_VERSION, SNAPSHOT_VERSION } from '../../schemas/common.ts';
import type { CoinSnapshot, MainBrainResponse } from '../../schemas/main-brain.ts';
import type { PublicPerformance } from '../../schemas/performance.ts';
import type { MarketAnalysis } from './analysis.ts';
import type { AssetAnalysis } from './asset-analysis.ts';
import { assetDataNotes, leaningOf, meanOverAllAssets, overallBias, prevailingState } from './aggregate.ts';
import { iso, type RunClock } from './clock.ts';
import {
  DEVELOPER_RESOURCES,
  expandedAccess,
  PAID_ATLAS,
  PAID_MAIN_BRAIN,
  PATHS,
  relatedResources,
  USAGE,
} from './links.ts';
import { sourceInfo, truthStatement } from './labels.ts';
import { roundOrNull, roundSignificant } from './math.ts';
import { MOVE_RULE_TEXT, PROVISIONAL_RULE } from './trend.ts';

const METHOD =
  'Reads hourly trend (20- and 50-hour exponential averages measured in average true ranges), momentum ' +
  'scaled by volatility, directional movement (ADX), perpetual positioning (funding and open interest) and ' +
  'order-book balance. Confidence reflects how strong and how consistent this evidence is and how much of it ' +
  `was available; it is not a probability of being right. ${PROVISIONAL_RULE} ${MOVE_RULE_TEXT}`;

export const coinSnapshot = (a: AssetAnalysis): CoinSnapshot => ({
  asset: a.symbol,
  bias: a.bias,
  confidence: a.confidence,
  summary: a.summary,
  price: a.price !== null && a.price > 0 && Number.isFinite(a.price) ? roundSignificant(a.price, 8) : null,
  change_24h: roundOrNull(a.change24h === null ? null : a.change24h * 100, 2),
  price_source: a.priceSource,
  data_status: a.dataStatus,
});

export function mainBrainBody(
  analysis: MarketAnalysis,
  clock: RunClock,
  performance: PublicPerformance,
): MainBrainResponse {
  const { snapshot, regime, assets } = analysis;
  const leaning = leaningOf(assets);
  const overall = overallBias(leaning);
  const withEvidence = assets.filter((a) => a.bias !== null).length;
  const noTrackRecord = performance.status === 'unavailable';
  const degraded = assets.some((a) => a.degraded) || regime.degraded || noTrackRecord;
  // Every reason an asset is degraded is named here: each missing section (liquidations too, as a collection
  // issue on them marks the asset partial), run-wide issues, and the sections that came in weaker (`gaps`); and,
  // when the market context is degraded, the regime's own reasons (a short history, a component it could not read).
  const limitations = [
    ...new Set([...assetDataNotes(snapshot, assets), ...(regime.degraded ? regime.limitations : [])]),
  ];
  if (noTrackRecord)
    limitations.push('Track record unavailable: the arena store could not be read this run.');
  return {
    success: true,
    project: PROJECT,
    endpoint: 'main-brain',
    name: 'Main brain snapshot',
    version: SNAPSHOT_VERSION,
    schema_version: SCHEMA_VERSION,
    access: FREE_ACCESS,
    status: degraded ? 'degraded' : 'available',
    purpose: 'Show the brain’s current educational reading of every tracked asset, with its market context.',
    endpoint_role: {
      role: 'the per-asset overview: one bias and confidence per asset plus market context',
      product_id: FREE_CATALOG.mainBrain.productId,
      tier: 'free',
      integration_order: 2,
    },
    agent_guidance: {
      recommended_for: [
        'dashboards showing all assets at once',
        'AI agents summarising the market',
        'education',
      ],
      when_to_use: 'To see what the evidence shows for each tracked asset in one request.',
      when_not_to_use: 'As a recommendation to trade; confidence is evidence strength, not certainty.',
      next_step: `Read ${PATHS.reasoning}?asset=${analysis.defaultAsset} for the reasons behind one asset, or ${PAID_MAIN_BRAIN.path} for the paid version.`,
    },
    usage_characteristics: USAGE,
    source: sourceInfo(snapshot, analysis.venues, clock, degraded),
    summary:
      `Across ${assets.length} assets the evidence leans bullish for ${leaning.bullish}, bearish for ` +
      `${leaning.bearish} and shows no clear lean for ${leaning.neutral}; the market regime reads ` +
      `${regime.mode}. Educational context, not advice.`,
    capability_boundary: {
      provides: [
        'bias and confidence per asset',
        'price and 24-hour change',
        'market context',
        'track record',
      ],
      does_not_provide: ['advice or recommendations', 'price targets', 'the weighting behind each reading'],
    },
    developer_resources: DEVELOPER_RESOURCES,
    expanded_access: expandedAccess(PAID_MAIN_BRAIN, PAID_ATLAS),
    related_resources: relatedResources(analysis.defaultAsset),
    truth_statement: truthStatement(snapshot, analysis.venues),
    disclaimer: DISCLAIMER,
    updated: iso(clock.generatedAt),
    educational_only: true,
    source_mode: snapshot.mode,
    market_state: {
      market_mode: regime.mode,
      market_state: regime.state,
      risk_level: regime.riskLevel,
      confidence: regime.confidence,
      summary: regime.summary,
    },
    coins: Object.fromEntries(assets.map((a) => [a.symbol, coinSnapshot(a)])),
    brain: {
      status: degraded ? 'degraded' : 'available',
      overall_bias: overall,
      assets_tracked: assets.length,
      assets_with_evidence: withEvidence,
      leaning,
      average_confidence: meanOverAllAssets(assets.map((a) => a.confidence)),
      method: METHOD,
      limitations,
    },
    market_context: {
      market_mode: regime.mode,
      risk_score: roundOrNull(regime.riskScore, 0),
      breadth_share_above_ema50: roundOrNull(regime.breadth.share, 3),
      volatility_level: regime.volatility.level,
      derivatives_state: prevailingState(assets),
      thin_liquidity_assets: assets.filter((a) => a.liquidity.context === 'thin').map((a) => a.symbol),
      notes: regime.evidence.slice(0, 3),
    },
    public_performance: performance,
  };
}
