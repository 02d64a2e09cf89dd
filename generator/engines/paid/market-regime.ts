// Paid market regime: the free regime reading, risk factors read beside its risk score as levels (volatility and
// breadth restate two of the score's parts; leverage, liquidity and data quality are context outside the score,
// and removing them leaves the score as it is), and a line per asset.
import { PAID_CATALOG } from '../../../schemas/catalog.ts';
import { DISCLAIMER, PROJECT, SCHEMA_VERSION, type DataStatus } from '../../../schemas/common.ts';
import { REGIME_RULE, RiskLevel } from '../../../schemas/market-regime.ts';
import type { AssetRegime, PaidMarketRegime, RiskFactor } from '../../../schemas/paid/paid-market-regime.ts';
import { iso, type RunClock } from '../clock.ts';
import { noDataLimitation } from '../asset-analysis.ts';
import { sourceLine } from '../labels.ts';
import type { FreeSnapshots } from '../index.ts';
import { groupedBySymbol } from '../aggregate.ts';
import {
  dataLabelOf,
  dataNoticeLines,
  levelFromCount,
  liquidityCounts,
  liquiditySentence,
  paidSourceOf,
  words,
  type AssetView,
} from './join.ts';

const VOLATILITY_RISK: Readonly<Record<string, RiskLevel>> = {
  calm: 'low',
  normal: 'moderate',
  elevated: 'elevated',
  extreme: 'high',
};

const COUNTED_FACTORS = {
  leverage: {
    name: 'Leverage (crowded positioning)',
    none: 'No derivatives positioning was available, so leverage is missing from the risk factors.',
  },
  liquidity: {
    name: 'Liquidity (thin books)',
    none: 'No liquidity reading was available, so liquidity is missing from the risk factors.',
  },
  breadth: {
    name: 'Breadth (assets above their 50-hour average)',
    none: 'Breadth could not be measured, so it is missing from the risk factors.',
  },
} as const;

/** Breadth's level from the share of assets above their 50-hour average: the fewer, the higher the risk. */
const breadthLevel = (share: number): RiskLevel =>
  share >= 0.6 ? 'low' : share >= 0.4 ? 'moderate' : share >= 0.2 ? 'elevated' : 'high';

/**
 * A factor that counts assets showing a sign among those read (COUNTED_FACTOR_RULE): an asset without a reading
 * could show it or not, so the factor gets a level only when the unread ones could not change it; otherwise the
 * line for the body's gaps says the range, since a level from the read assets alone could misstate the risk.
 * `levelWith(x)` is the level had `x` of the unread assets shown the sign; it moves one way with `x`, so its ends
 * (none of them, all of them) bound every level the unread assets leave open.
 */
function countedFactor(
  factor: keyof typeof COUNTED_FACTORS,
  levelWith: (shownByUnread: number) => RiskLevel,
  read: number,
  total: number,
): Pick<RiskFactor, 'factor' | 'level'> | string {
  const { name, none } = COUNTED_FACTORS[factor];
  if (read === 0) return none;
  const ends = [levelWith(0), levelWith(total - read)];
  if (ends[0] === ends[1]) return { factor, level: ends[0]! };
  const [from, to] = ends.sort((a, b) => RiskLevel.options.indexOf(a) - RiskLevel.options.indexOf(b));
  return (
    `${name} was read for ${read} of ${total} assets: the ${total - read} without a reading could put its level ` +
    `anywhere from ${from} to ${to}, so it is missing from the risk factors.`
  );
}

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
  const leverage = countedFactor(
    'leverage',
    (x) => levelFromCount(crowded.length + x),
    withPositioning,
    views.length,
  );
  if (typeof leverage === 'string') gaps.push(leverage);
  else
    factors.push({
      ...leverage,
      note: `${crowded.length} of ${withPositioning} assets with positioning data show crowded positioning or extreme funding${crowded.length ? ` (${crowded.map((v) => v.asset).join(', ')})` : ''}.`,
    });

  // Counted among the assets with a liquidity reading, saying how many had no order book (join.ts).
  const liquidity = liquidityCounts(views);
  const thin = countedFactor(
    'liquidity',
    (x) => levelFromCount(liquidity.thin.length + x),
    liquidity.labelled,
    views.length,
  );
  if (typeof thin === 'string') gaps.push(thin);
  else factors.push({ ...thin, note: liquiditySentence(views) });

  // Counted like leverage and liquidity: an asset without a trend reading could trade above its average or not.
  const { assets_above_ema50: above, assets_with_trend_data: withTrend } = regime.breadth;
  const breadth = countedFactor(
    'breadth',
    (x) => breadthLevel((above + x) / views.length),
    withTrend,
    views.length,
  );
  if (typeof breadth === 'string') gaps.push(breadth);
  else
    factors.push({
      ...breadth,
      note: `${above} of ${withTrend} assets trade above their 50-hour average.`,
    });

  factors.push(dataQuality(free, views));
  return { factors, gaps };
}

/** What the market regime itself lacked (a component, an asset or part of the history), null when nothing. */
function regimeGaps(free: FreeSnapshots): string | null {
  const body = free.marketRegime;
  if (body.status !== 'degraded') return null;
  const hours = body.regime.drawdown.lookback_hours;
  const short =
    hours < REGIME_RULE.drawdownLookbackHours
      ? `, its drawdown read from a ${hours}-hour window instead of the 7-day high`
      : '';
  return `the market regime rests on partial evidence${short} (see limitations)`;
}

/**
 * How complete the run's data was, from every asset's `data_status` (a section missing, weaker or with a collection
 * issue, a venue refusing the run), the regime's trend coverage and the regime's own gaps (a short history, a
 * component it could not read): `low` only when nothing was missing.
 */
function dataQuality(free: FreeSnapshots, views: readonly AssetView[]): RiskFactor {
  const total = views.length;
  const count = (status: DataStatus) => views.filter((v) => v.coin.data_status === status).length;
  const partial = count('partial');
  const none = count('unavailable');
  const priced = views.filter((v) => v.coin.price !== null).length;
  const withTrend = free.marketRegime.regime.assets_covered;
  const regime = regimeGaps(free);
  const level: RiskLevel =
    total === 0 || 2 * none >= total
      ? 'high'
      : none > 0 || withTrend < total
        ? 'elevated'
        : partial > 0 || regime !== null
          ? 'moderate'
          : 'low';
  const assetGaps =
    partial + none === 0
      ? 'every asset had all of its data'
      : `${partial} had partial data and ${none} had none (see limitations)`;
  const gaps = regime === null ? assetGaps : `${assetGaps}; ${regime}`;
  return {
    factor: 'data_quality',
    level,
    note: `${priced} of ${total} assets had a price and ${withTrend} enough hourly candles for a trend reading; ${gaps}.`,
  };
}

/** Why each `partial` asset is partial, grouped by reason ("XLM and HBAR: ..."), from the asset's own reading. */
const partialReasons = (views: readonly AssetView[]): string[] =>
  groupedBySymbol(
    views
      .filter((v) => v.coin.data_status === 'partial')
      .map((v) => ({ symbol: v.asset, lines: v.reasoning?.limitations ?? v.limitations })),
  );

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
  const state = view.derivatives?.state ?? null;
  const parts = [
    view.coin.bias ? `leans ${view.coin.bias}` : 'no directional evidence',
    state === null
      ? null
      : state === 'unavailable'
        ? 'no positioning reading'
        : `positioning: ${words(state)}`,
    view.liquidity?.liquidity_context ? `liquidity: ${view.liquidity.liquidity_context}` : null,
    view.coin.data_status === 'partial' ? 'partial data (see limitations)' : null,
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
    product_id: PAID_CATALOG.paidMarketRegime.productId,
    schema_version: SCHEMA_VERSION,
    payment_status: 'settled',
    market_mode: regimeBody.market_mode,
    market_state: regimeBody.market_state,
    // Simulated or replayed numbers say so in the prose and the limitations, as in the atlas.
    summary: dataLabelOf(source.mode) + regimeBody.summary,
    confidence: regimeBody.confidence,
    risk_score: regimeBody.regime.risk_score,
    risk_level: regimeBody.regime.risk_level,
    risk_factors: factors,
    regime: regimeBody.regime,
    assets: Object.fromEntries(views.map((v) => [v.asset, assetRegime(v)])),
    evidence: regimeBody.regime.evidence,
    limitations: [
      ...new Set([
        ...dataNoticeLines(source.mode, regimeBody.truth_statement),
        ...regimeBody.regime.limitations,
        ...gaps,
        ...partialReasons(views),
      ]),
    ],
    source: sourceLine(source),
    source_details: paidSourceOf(free, 'paidMarketRegime'),
    source_mode: source.mode,
    simulated: source.simulated,
    updated: iso(clock.generatedAt),
    educational_only: true,
    disclaimer: DISCLAIMER,
  };
}
