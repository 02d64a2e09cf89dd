// Paid main brain: the full picture per coin, with the free main brain's market state, brain and context around it.
import { PAID_CATALOG } from '../../../schemas/catalog.ts';
import { DISCLAIMER, PROJECT, SCHEMA_VERSION } from '../../../schemas/common.ts';
import type { CoinPicture, PaidMainBrain } from '../../../schemas/paid/paid-main-brain.ts';
import { iso, type RunClock } from '../clock.ts';
import type { FreeSnapshots } from '../index.ts';
import { dataLabelOf, dataNoticeLines, paidSourceOf, type AssetView } from './join.ts';

const sum = (a: number | null | undefined, b: number | null | undefined): number | null =>
  a === null || a === undefined || b === null || b === undefined ? null : a + b;

function coinPicture(view: AssetView): CoinPicture {
  const { coin, liquidity, derivatives, reasoning } = view;
  return {
    asset: view.asset,
    bias: coin.bias,
    confidence: coin.confidence,
    summary: coin.summary,
    agreement: view.agreement,
    agreement_readings: view.agreementReadings,
    risk_level: view.riskLevel,
    market: { price: coin.price, change_24h: coin.change_24h, price_source: coin.price_source },
    liquidity: liquidity && {
      status: liquidity.status,
      liquidity_context: liquidity.liquidity_context,
      market_structure: liquidity.market_structure,
      spread_bps: liquidity.metrics?.spread_bps ?? null,
      depth_usd_1pct: sum(liquidity.metrics?.bid_depth_usd_1pct, liquidity.metrics?.ask_depth_usd_1pct),
      book_imbalance: liquidity.metrics?.book_imbalance ?? null,
    },
    derivatives: derivatives && {
      state: derivatives.state,
      vote: derivatives.vote,
      confidence: derivatives.confidence,
      funding_rate_8h_pct: derivatives.funding?.rate_8h_pct ?? null,
      funding_level: derivatives.funding?.level ?? null,
      open_interest_change_24h_pct: derivatives.open_interest?.change_24h_pct ?? null,
      open_interest_reading: derivatives.open_interest?.reading ?? null,
    },
    reasoning: reasoning && {
      prediction: reasoning.prediction,
      confidence: reasoning.confidence,
      summary: reasoning.summary,
      reason_points: reasoning.reason_points,
    },
    evidence: view.evidence,
    limitations: view.limitations,
    data_status: coin.data_status,
  };
}

function summary(views: readonly AssetView[]): string {
  const count = (pick: (v: AssetView) => boolean) => views.filter(pick).length;
  const lean = `${count((v) => v.coin.bias === 'bullish')} lean bullish, ${count((v) => v.coin.bias === 'bearish')} bearish, ${count((v) => v.coin.bias === 'neutral')} neutral`;
  const agree = `the sections agree on ${count((v) => v.agreement === 'aligned')} and conflict on ${count((v) => v.agreement === 'conflicting')}`;
  return `Of ${views.length} assets, ${lean}; ${agree}. Educational context, not advice.`;
}

export function paidMainBrainBody(
  free: FreeSnapshots,
  views: readonly AssetView[],
  clock: RunClock,
): PaidMainBrain {
  const brain = free.mainBrain;
  return {
    success: true,
    project: PROJECT,
    endpoint: 'x402-main-brain',
    type: 'paid_main_brain',
    product_id: PAID_CATALOG.paidMainBrain.productId,
    schema_version: SCHEMA_VERSION,
    payment_status: 'settled',
    // Simulated or replayed numbers say so in the prose and the limitations, as in the atlas.
    summary: dataLabelOf(brain.source.mode) + summary(views),
    market_state: brain.market_state,
    confidence: brain.brain.average_confidence,
    brain: brain.brain,
    market_context: brain.market_context,
    coins: Object.fromEntries(views.map((v) => [v.asset, coinPicture(v)])),
    public_performance: brain.public_performance,
    evidence: brain.market_context.notes,
    // The free brain names every reason it is degraded; a generic line would add nothing, and would be wrong
    // when the only reason is the track record.
    limitations: [...dataNoticeLines(brain.source.mode, brain.truth_statement), ...brain.brain.limitations],
    source: paidSourceOf(free, 'paidMainBrain'),
    source_mode: brain.source.mode,
    updated: iso(clock.generatedAt),
    educational_only: true,
    disclaimer: DISCLAIMER,
  };
}
