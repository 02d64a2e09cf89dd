// Body of /api/market-regime.php.
import { FREE_CATALOG } from '../../schemas/catalog.ts';
import { DISCLAIMER, FREE_ACCESS, PROJECT, SCHEMA_VERSION, SNAPSHOT_VERSION } from '../../schemas/common.ts';
import { REGIME_RULE, type MarketRegimeResponse } from '../../schemas/market-regime.ts';
import type { MarketAnalysis } from './analysis.ts';
import { iso, type RunClock } from './clock.ts';
import {
  DEVELOPER_RESOURCES,
  expandedAccess,
  PAID_ATLAS,
  PAID_MARKET_REGIME,
  PATHS,
  relatedResources,
  USAGE,
} from './links.ts';
import { sourceInfo, truthStatement } from './labels.ts';
import { round, roundOrNull } from './math.ts';

export function marketRegimeBody(analysis: MarketAnalysis, clock: RunClock): MarketRegimeResponse {
  const { snapshot, regime: r } = analysis;
  const degraded = r.degraded || r.mode === 'UNKNOWN';
  return {
    success: true,
    project: PROJECT,
    endpoint: 'market-regime',
    name: 'Market regime',
    version: SNAPSHOT_VERSION,
    schema_version: SCHEMA_VERSION,
    access: FREE_ACCESS,
    status: degraded ? 'degraded' : 'available',
    purpose: 'Describe the market-wide risk regime of the tracked crypto assets for educational use.',
    endpoint_role: {
      role: 'entry point: the market-wide context to read before any single asset',
      product_id: FREE_CATALOG.marketRegime.productId,
      tier: 'free',
      integration_order: 1,
    },
    agent_guidance: {
      recommended_for: [
        'market context for dashboards',
        'AI agents explaining market conditions',
        'education',
      ],
      when_to_use:
        'To learn whether the tracked assets currently read risk-on, risk-off or in between, and why.',
      when_not_to_use:
        'As a trading signal or a recommendation; for a single asset use the reasoning endpoint.',
      next_step: `Read ${PATHS.mainBrain} for the per-asset reading, or ${PAID_MARKET_REGIME.path} for the paid version.`,
    },
    usage_characteristics: USAGE,
    source: sourceInfo(snapshot, analysis.venues, clock, degraded),
    summary: r.summary,
    capability_boundary: {
      provides: [
        'market mode and state',
        'risk score 0-100',
        'breadth, trend, volatility, drawdown, correlation',
      ],
      does_not_provide: ['advice or recommendations', 'price targets', 'the weighting behind the risk score'],
    },
    developer_resources: DEVELOPER_RESOURCES,
    expanded_access: expandedAccess(PAID_MARKET_REGIME, PAID_ATLAS),
    related_resources: relatedResources(analysis.defaultAsset),
    truth_statement: truthStatement(snapshot, analysis.venues),
    disclaimer: DISCLAIMER,
    updated: iso(clock.generatedAt),
    educational_only: true,
    source_mode: snapshot.mode,
    market_mode: r.mode,
    market_state: r.state,
    confidence: r.confidence,
    regime: {
      market_mode: r.mode,
      market_state: r.state,
      // The engine read each label from the value at these decimals (REGIME_RULE): publish exactly that value.
      risk_score: roundOrNull(r.riskScore, REGIME_RULE.riskScoreDecimals),
      risk_level: r.riskLevel,
      confidence: r.confidence,
      assets_covered: r.assetsCovered,
      assets_total: r.assetsTotal,
      breadth: {
        assets_above_ema50: r.breadth.above,
        assets_with_trend_data: r.breadth.withData,
        share_above_ema50: roundOrNull(r.breadth.share, 3),
      },
      trend: {
        median_direction: r.medianDirection,
        description:
          r.medianDirection === null
            ? 'No trend data this run.'
            : `The typical asset's 20-hour average is ${r.medianDirection === 'flat' ? 'close to' : r.medianDirection === 'up' ? 'above' : 'below'} its 50-hour average.`,
      },
      volatility: {
        realised_annualised_pct:
          r.volatility.annualised === null ? null : round(r.volatility.annualised * 100, 1),
        percentile: roundOrNull(r.volatility.percentile, REGIME_RULE.percentileDecimals),
        level: r.volatility.level,
      },
      drawdown: {
        median_from_recent_high_pct: r.drawdown.median === null ? null : round(r.drawdown.median * 100, 2),
        deepest_asset: r.drawdown.deepestAsset,
        deepest_from_recent_high_pct: r.drawdown.deepest === null ? null : round(r.drawdown.deepest * 100, 2),
        lookback_hours: r.drawdown.lookbackHours,
      },
      correlation: {
        average_pairwise: roundOrNull(r.correlation.average, REGIME_RULE.correlationDecimals),
        assets_sampled: r.correlation.assetsSampled,
        pairs: r.correlation.pairs,
        level: r.correlation.level,
      },
      evidence: r.evidence,
      limitations: r.limitations,
    },
  };
}
