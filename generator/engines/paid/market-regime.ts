// Paid market regime: the free regime reading, the factors behind its risk score as levels, and a line per asset.
import { DISCLAIMER, PROJECT, SCHEMA_VERSION } from '../../../schemas/common.ts';
import type { RiskLevel } from '../../../schemas/market-regime.ts';
import type { AssetRegime, PaidMarketRegime, RiskFactor } from '../../../schemas/paid/paid-market-regime.ts';
import { iso, type RunClock } from '../clock.ts';
import { noDataLimitation } from '../asset-analysis.ts';
import { sourceLine } from '../labels.ts';
import type { FreeSnapshots } from '../index.ts';
import { levelFromCount, words, type AssetView } from './join.ts';

const VOLATILITY_RISK: Readonly<Record<string, RiskLevel>> = {
  calm: 'low',
  normal: 'moderate',
  elevated: 'elevated',
  extreme: 'high',
};

function riskFactors(
  free: FreeSnapshots,
  views: readonly AssetView[],
): { factors: RiskFactor[]; gaps: string[] } {
  const regime = free.marketRegime.regime;
  const factors: RiskFactor[] = [];
  const gaps: string[] = [];
  const { level: volLevel, realised_annualised_pct: vol, percentile } = regime.volatility;
  if (volLevel) {
    const detail = [
      vol !== null ? `${vol}% annualised` : null,
      percentile !== null ? `percentile ${percentile}` : null,
    ]
      .filter(Boolean)
      .join(', ');
    factors.push({
      factor: 'volatility',
      level: VOLATILITY_RISK[volLevel] ?? 'moderate',
      note: `Realised volatility reads ${volLevel}${detail ? ` (${detail})` : ''}.`,
    });
  } else gaps.push('Volatility could not be measured, so it is missing from the risk factors.');

  const crowded = views.filter((v) => {
    const d = v.derivatives;
    return (
      d?.state === 'crowded_longs' ||
      d?.state === 'crowded_shorts' ||
      d?.funding?.level === 'extreme_high' ||
      d?.funding?.level === 'extreme_low'
    );
  });
  const withPositioning = views.filter(
    (v) => v.derivatives?.state && v.derivatives.state !== 'unavailable',
  ).length;
  if (withPositioning > 0) {
    factors.push({
      factor: 'leverage',
      level: levelFromCount(crowded.length),
      note: `${crowded.length} of ${withPositioning} assets with positioning data show crowded positioning or extreme funding${crowded.length ? ` (${crowded.map((v) => v.asset).join(', ')})` : ''}.`,
    });
  } else gaps.push('No derivatives positioning was available, so leverage is missing from the risk factors.');

  const thin = views.filter((v) => v.liquidity?.liquidity_context === 'thin');
  const withLiquidity = views.filter((v) => v.liquidity?.liquidity_context).length;
  if (withLiquidity > 0) {
    factors.push({
      factor: 'liquidity',
      level: levelFromCount(thin.length),
      note: `${thin.length} of ${withLiquidity} assets read thin liquidity${thin.length ? ` (${thin.map((v) => v.asset).join(', ')})` : ''}.`,
    });
  } else gaps.push('No liquidity reading was available, so liquidity is missing from the risk factors.');

  const share = regime.breadth.share_above_ema50;
  if (share !== null) {
    factors.push({
      factor: 'breadth',
      level: share >= 0.6 ? 'low' : share >= 0.4 ? 'moderate' : share >= 0.2 ? 'elevated' : 'high',
      note: `${regime.breadth.assets_above_ema50} of ${regime.breadth.assets_with_trend_data} assets trade above their 50-hour average.`,
    });
  } else gaps.push('Breadth could not be measured, so it is missing from the risk factors.');

  const missing = regime.assets_total - regime.assets_covered;
  factors.push({
    factor: 'data_quality',
    level: free.marketRegime.source.degraded
      ? missing > 0
        ? 'elevated'
        : 'moderate'
      : missing > 0
        ? 'moderate'
        : 'low',
    note: `${regime.assets_covered} of ${regime.assets_total} assets had price evidence${free.marketRegime.source.degraded ? '; some sections were published with limitations' : ''}.`,
  });
  return { factors, gaps };
}

function assetRegime(view: AssetView): AssetRegime {
  if (view.coin.data_status === 'unavailable')
    return {
      asset: view.asset,
      bias: null,
      confidence: null,
      risk_level: null,
      derivatives_state: null,
      liquidity_context: null,
      note: noDataLimitation(view.asset),
      data_status: 'unavailable',
    };
  const parts = [
    view.coin.bias ? `leans ${view.coin.bias}` : 'no directional evidence',
    view.derivatives?.state && view.derivatives.state !== 'unavailable'
      ? `positioning: ${words(view.derivatives.state)}`
      : null,
    view.liquidity?.liquidity_context ? `liquidity: ${view.liquidity.liquidity_context}` : null,
  ].filter(Boolean);
  return {
    asset: view.asset,
    bias: view.coin.bias,
    confidence: view.coin.confidence,
    risk_level: view.riskLevel,
    derivatives_state: view.derivatives?.state ?? null,
    liquidity_context: view.liquidity?.liquidity_context ?? null,
    note: `${view.asset} ${parts.join('; ')}.`,
    data_status: view.coin.data_status,
  };
}

export function paidMarketRegimeBody(
  free: FreeSnapshots,
  views: readonly AssetView[],
  clock: RunClock,
): PaidMarketRegime {
  const regimeBody = free.marketRegime;
  const { factors, gaps } = riskFactors(free, views);
  const source = regimeBody.source;
  return {
    success: true,
    project: PROJECT,
    endpoint: 'x402-market-regime',
    type: 'paid_market_regime',
    product_id: 'SVC-X402-001',
    schema_version: SCHEMA_VERSION,
    payment_status: 'settled',
    market_mode: regimeBody.market_mode,
    market_state: regimeBody.market_state,
    summary: regimeBody.summary,
    confidence: regimeBody.confidence,
    risk_score: regimeBody.regime.risk_score,
    risk_level: regimeBody.regime.risk_level,
    risk_factors: factors,
    regime: regimeBody.regime,
    assets: Object.fromEntries(views.map((v) => [v.asset, assetRegime(v)])),
    evidence: regimeBody.regime.evidence,
    limitations: [...regimeBody.regime.limitations, ...gaps],
    source: sourceLine(source),
    source_mode: source.mode,
    simulated: source.simulated,
    updated: iso(clock.generatedAt),
    educational_only: true,
    disclaimer: DISCLAIMER,
  };
}
