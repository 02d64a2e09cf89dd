// Body of /api/derivatives.php.
import { DISCLAIMER, FREE_ACCESS, LITE_VERSION, PROJECT, type DataMode } from '../../schemas/common.ts';
import type { DerivativesAsset, DerivativesResponse } from '../../schemas/derivatives.ts';
import type { MarketAnalysis } from './analysis.ts';
import { noDataLimitation, type AssetAnalysis } from './asset-analysis.ts';
import {
  groupedBySymbol,
  leaningOf,
  meanOverAllAssets,
  missingDataNotes,
  overallBias,
  prevailingState,
} from './aggregate.ts';
import { iso, type RunClock } from './clock.ts';
import { PAID_ATLAS, PAID_MAIN_BRAIN, REASONING_TEMPLATE, relatedResources } from './links.ts';
import { sourceInfo, sourceLine, truthStatement, venueLabel } from './labels.ts';
import { round, roundOrNull, roundSignificant } from './math.ts';
import { PUBLISHED_DECIMALS as POSITIONING_DECIMALS } from './positioning.ts';

const ENGINE_VERSION = '1.0.0';
const toPct = (fraction: number | null, decimals: number): number | null =>
  fraction === null ? null : round(fraction * 100, decimals);

const derivativesAsset = (a: AssetAnalysis, mode: DataMode): DerivativesAsset => {
  const {
    funding: f,
    openInterest: o,
    liquidations: l,
    state,
    vote,
    confidence,
    evidence,
    limitations,
  } = a.derivatives;
  const noData = a.dataStatus === 'unavailable';
  return {
    asset: a.symbol,
    // No data for the asset at all: no positioning state either (`unavailable` is for an asset that has other data).
    state: noData ? null : state,
    vote,
    confidence,
    funding: f && {
      rate_8h_pct: round(f.rate8h * 100, POSITIONING_DECIMALS.fundingPct),
      rate_kind: f.rateKind,
      annualised_pct: round(f.annualised * 100, 2),
      venue_interval_hours: f.intervalHours,
      z_score_30d: roundOrNull(f.z, POSITIONING_DECIMALS.zScore),
      history_points: f.historyPoints,
      level: f.level,
      crowding: f.crowding,
      basis_pct: toPct(f.basis, 4),
      venue: venueLabel(f.venue, mode),
    },
    open_interest: o && {
      value_usd: round(o.valueUsd, 0),
      change_24h_pct: toPct(o.change24h, POSITIONING_DECIMALS.changePct),
      price_change_24h_pct: toPct(o.priceChange24h, POSITIONING_DECIMALS.changePct),
      reading: o.reading,
      leverage_proxy: o.leverageProxy === null ? null : roundSignificant(o.leverageProxy, 4),
      venue: venueLabel(o.venue, mode),
    },
    liquidations: l && {
      long_usd_24h: round(l.longUsd, 0),
      short_usd_24h: round(l.shortUsd, 0),
      events: l.estimated ? null : Math.round(l.events),
      dominant_side: l.dominant,
      estimated: l.estimated,
      venue: venueLabel(l.venue, mode),
    },
    evidence,
    limitations: noData ? [noDataLimitation(a.symbol), ...limitations] : limitations,
    data_status: a.dataStatus,
  };
};

/** The derivatives vote of each asset, counted like the brain's biases. */
const voteLeaning = (assets: readonly AssetAnalysis[]) =>
  leaningOf(assets.map((a) => ({ ...a, bias: a.derivatives.vote })));

export function derivativesBody(analysis: MarketAnalysis, clock: RunClock): DerivativesResponse {
  const { snapshot, assets } = analysis;
  const rows = assets.map((a) => derivativesAsset(a, snapshot.mode));
  const withData = assets.filter((a) => a.derivatives.state !== 'unavailable');
  const degraded = assets.some((a) => a.derivatives.limitations.length > 0);
  const state = prevailingState(assets);
  const leaning = voteLeaning(withData);
  const vote = withData.length > 0 ? overallBias(leaning) : null;
  // Overall confidence: the mean over every tracked asset, one without a positioning reading counting as 0
  // (MEAN_OVER_ALL_ASSETS_RULE). It used to average the assets with a reading and scale by the share voting with the
  // overall vote, so that losing an asset's reading could raise it (9 -> 34 when XLM's funding failed); how many
  // assets share the vote is said in the summary instead.
  const confidence = meanOverAllAssets(assets.map((a) => a.derivatives.confidence));
  const generated = iso(clock.generatedAt);
  const source = sourceInfo(snapshot, analysis.venues, clock, degraded);
  const crowded = (side: string) => withData.filter((a) => a.derivatives.state === side).map((a) => a.symbol);
  const evidence = [
    `${withData.length} of ${assets.length} assets have a positioning reading (funding or a 24-hour open-interest change) this run.`,
    ...(crowded('crowded_longs').length
      ? [`Crowded long positioning: ${crowded('crowded_longs').join(', ')}.`]
      : []),
    ...(crowded('crowded_shorts').length
      ? [`Crowded short positioning: ${crowded('crowded_shorts').join(', ')}.`]
      : []),
  ];
  return {
    success: true,
    project: PROJECT,
    endpoint: 'derivatives',
    name: 'Derivatives intelligence',
    version: LITE_VERSION,
    access: FREE_ACCESS,
    source_mode: snapshot.mode,
    source_details: source,
    educational_only: true,
    generated_at: generated,
    updated_utc: generated,
    status: degraded ? 'degraded' : 'available',
    engine: 'derivatives-positioning',
    engine_version: ENGINE_VERSION,
    source: sourceLine(source),
    summary:
      vote === null
        ? 'No positioning reading this run (no funding and no 24-hour open-interest change): positioning cannot be described.'
        : `Positioning across ${withData.length} assets reads ${state?.replaceAll('_', ' ') ?? 'unclear'}; ` +
          `the evidence leans ${vote} for ${leaning[vote]} of them. Educational context, not advice.`,
    overall_state: state,
    overall_vote: vote,
    truth_statement: truthStatement(snapshot, analysis.venues),
    confidence,
    assets: Object.fromEntries(rows.map((r) => [r.asset, r])),
    evidence,
    // Every reason an asset's entry has limitations (and so the body is `degraded`) is named here, by kind.
    limitations: [
      ...missingDataNotes(snapshot, ['funding', 'openInterest', 'liquidations']),
      ...groupedBySymbol(assets.map((a) => ({ symbol: a.symbol, lines: a.derivatives.gaps }))),
    ],
    related_endpoints: relatedResources(analysis.defaultAsset),
    explore: { reasoning_by_asset: REASONING_TEMPLATE, supported_assets: analysis.supportedAssets },
    upgrade_path: {
      description: 'The paid atlas and main brain extend this reading, per request over x402.',
      protocol: 'x402 v2',
      endpoints: [PAID_ATLAS, PAID_MAIN_BRAIN],
    },
    disclaimer: DISCLAIMER,
  };
}
