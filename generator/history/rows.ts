// The key values of one run, one row per history resource, taken from the bodies the run publishes.
import { TRACKED_ASSETS } from '../../schemas/common.ts';
import type { DataMode } from '../../schemas/common.ts';
import type { HumanConsensusResponse } from '../../schemas/arena.ts';
import type { DerivativesResponse } from '../../schemas/derivatives.ts';
import type { HistoryResourceId, HistoryRow, HistoryValue } from '../../schemas/history.ts';
import type { LiquidityLiteResponse } from '../../schemas/liquidity-lite.ts';
import type { MainBrainResponse } from '../../schemas/main-brain.ts';
import type { MarketRegimeResponse } from '../../schemas/market-regime.ts';
import type { StatisticsResponse } from '../../schemas/statistics.ts';

/** The published bodies of one run that the history keeps values of. */
export interface HistoryBodies {
  marketRegime: MarketRegimeResponse;
  mainBrain: MainBrainResponse;
  liquidityLite: LiquidityLiteResponse;
  derivatives: DerivativesResponse;
  humanConsensus: HumanConsensusResponse;
  statistics: StatisticsResponse;
}

export type RunRows = Record<HistoryResourceId, HistoryRow>;

const perAsset = (values: (asset: string, lower: string) => Record<string, HistoryValue>) =>
  Object.assign({}, ...TRACKED_ASSETS.map((asset) => values(asset, asset.toLowerCase()))) as Record<
    string,
    HistoryValue
  >;

export type MarketBodies = Pick<
  HistoryBodies,
  'marketRegime' | 'mainBrain' | 'liquidityLite' | 'derivatives'
>;
export type MarketRows = Pick<RunRows, 'market-regime' | 'main-brain' | 'liquidity-lite' | 'derivatives'>;

type SourceStatus = HistoryRow['source_status'];
const statusOf = (degraded: boolean): SourceStatus => (degraded ? 'degraded' : 'ok');

/**
 * The run's time and data mode, as the market regime's source block states them, with a resource's own source
 * status: each body says whether it was published degraded, and one resource's gap is not another's.
 */
function baseOf(marketRegime: MarketRegimeResponse, sourceStatus: SourceStatus) {
  const source = marketRegime.source;
  return { run_at: source.generated_at, data_mode: source.mode as DataMode, source_status: sourceStatus };
}

/** One row per resource, all with the run's time and data mode, each with its own body's source status. */
export function rowsOfRun(bodies: HistoryBodies): RunRows {
  const { marketRegime, humanConsensus, statistics } = bodies;
  // The arena bodies read the vote store, not the market venues, and carry no degraded status: a row of theirs
  // exists only when the store was read, so their source is ok.
  const base = baseOf(marketRegime, 'ok');
  const metrics = statistics.teacher_brain.metrics;
  return {
    ...marketRowsOf(bodies),
    'human-consensus': {
      ...base,
      round_id: humanConsensus.round.round_id,
      asset: humanConsensus.asset,
      consensus: humanConsensus.human_consensus.consensus,
      votes_total: humanConsensus.human_consensus.total,
      human_votes: humanConsensus.vote_sources.human_votes,
      synthetic_votes: humanConsensus.vote_sources.synthetic_votes,
      bullish_percent: humanConsensus.human_consensus.bullish_percent,
      bearish_percent: humanConsensus.human_consensus.bearish_percent,
      neutral_percent: humanConsensus.human_consensus.neutral_percent,
    },
    statistics: {
      ...base,
      teacher_status: statistics.teacher_brain.status,
      resolved_rounds: metrics.resolved_rounds,
      brain_n: metrics.brain.n,
      brain_hit_rate: metrics.brain.hit_rate?.value ?? null,
      brain_hit_rate_low: metrics.brain.hit_rate?.wilson_low ?? null,
      brain_hit_rate_high: metrics.brain.hit_rate?.wilson_high ?? null,
      brain_brier_score: metrics.brain.brier_score,
      crowd_n: metrics.crowd.n,
      crowd_hit_rate: metrics.crowd.hit_rate?.value ?? null,
      crowd_hit_rate_low: metrics.crowd.hit_rate?.wilson_low ?? null,
      crowd_hit_rate_high: metrics.crowd.hit_rate?.wilson_high ?? null,
      crowd_brier_score: metrics.crowd.brier_score,
      agreement_rate: metrics.agreement_rate?.value ?? null,
      agreement_n: metrics.agreement_n,
    },
  };
}

/** The rows of the market resources alone (a backfill has no arena bodies for past runs). */
export function marketRowsOf(bodies: MarketBodies): MarketRows {
  const { marketRegime, mainBrain, liquidityLite, derivatives } = bodies;
  const base = (degraded: boolean) => baseOf(marketRegime, statusOf(degraded));
  return {
    'market-regime': {
      ...base(marketRegime.status === 'degraded' || marketRegime.source.degraded),
      market_mode: marketRegime.market_mode,
      market_state: marketRegime.market_state,
      confidence: marketRegime.confidence,
      risk_score: marketRegime.regime.risk_score,
      risk_level: marketRegime.regime.risk_level,
    },
    'main-brain': {
      ...base(mainBrain.status === 'degraded' || mainBrain.source.degraded),
      ...perAsset((asset, a) => {
        const coin = mainBrain.coins[asset];
        return {
          [`${a}_price`]: coin?.price ?? null,
          [`${a}_bias`]: coin?.bias ?? null,
          [`${a}_confidence`]: coin?.confidence ?? null,
        };
      }),
    },
    'liquidity-lite': {
      ...base(liquidityLite.source_details.degraded),
      ...perAsset((asset, a) => {
        const entry = liquidityLite.assets[asset];
        return {
          [`${a}_liquidity_context`]: entry?.liquidity_context ?? null,
          [`${a}_spread_bps`]: entry?.metrics?.spread_bps ?? null,
          [`${a}_relative_volume`]: entry?.metrics?.relative_volume ?? null,
          [`${a}_book_imbalance`]: entry?.metrics?.book_imbalance ?? null,
        };
      }),
    },
    derivatives: {
      ...base(derivatives.status === 'degraded' || derivatives.source_details.degraded),
      overall_state: derivatives.overall_state,
      overall_vote: derivatives.overall_vote,
      confidence: derivatives.confidence,
      ...perAsset((asset, a) => {
        const entry = derivatives.assets[asset];
        return {
          [`${a}_state`]: entry?.state ?? null,
          [`${a}_funding_rate_8h_pct`]: entry?.funding?.rate_8h_pct ?? null,
          [`${a}_open_interest_change_24h_pct`]: entry?.open_interest?.change_24h_pct ?? null,
        };
      }),
    },
  };
}
