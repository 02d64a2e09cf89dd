// Body of /api/liquidity-lite.php.
import { DISCLAIMER, FREE_ACCESS, LITE_VERSION, PROJECT, type DataMode } from '../../schemas/common.ts';
import type { LiquidityLiteAsset, LiquidityLiteResponse } from '../../schemas/liquidity-lite.ts';
import type { MarketAnalysis } from './analysis.ts';
import type { AssetMarket, SourceIssue } from '../market/types.ts';
import {
  assetIssueLine,
  deliveredDespite,
  distinctIssues,
  noDataLimitation,
  type AssetAnalysis,
} from './asset-analysis.ts';
import { groupedBySymbol, missingDataNotes } from './aggregate.ts';
import { BOOK_IMBALANCE_DECIMALS, bookLeanOf } from './agreement.ts';
import { iso, type RunClock } from './clock.ts';
import { PAID_ATLAS, PAID_MAIN_BRAIN } from './links.ts';
import { sourceInfo, sourceLine, truthStatement } from './labels.ts';
import { roundOrNull, roundSignificant } from './math.ts';
import { coinSnapshot } from './main-brain-body.ts';
import { PUBLISHED_DECIMALS as LIQUIDITY_DECIMALS } from './liquidity.ts';

type Status = LiquidityLiteAsset['status'];

/**
 * The sections a liquidity entry reads: the order book (spread, depth, imbalance), hourly candles (relative volume,
 * Amihud, structure, the spread estimate without a book) and the ticker (quoted spread, the entry's price and
 * change). Funding, open interest and liquidations are derivatives.php's, and the asset's overall `data_status`.
 */
const LIQUIDITY_SECTIONS = ['candles', 'ticker', 'book'] as const;
const isLiquiditySection = (section: string): boolean =>
  (LIQUIDITY_SECTIONS as readonly string[]).includes(section);

/** A candle metric the candles that came in could not give, with what it needs. */
const candleMetricGaps = (a: AssetAnalysis, market: AssetMarket): string[] => {
  const candles = market.candles?.value.length;
  if (candles === undefined) return []; // the body's "No hourly candles for ..." line names it
  const from = `from the ${candles} hourly candles`;
  return [
    a.liquidity.relativeVolume === null
      ? `${a.symbol}: relative volume could not be read ${from} (it sets the last 24 hours of volume against ` +
        'earlier whole days with volume).'
      : null,
    a.liquidity.amihud === null
      ? `${a.symbol}: Amihud illiquidity could not be read ${from} (it needs hourly returns with volume).`
      : null,
  ].filter((line): line is string => line !== null);
};

/**
 * Why an entry's liquidity reading came in weaker than whole, each line starting "SYMBOL: ": a book that came in
 * unreadable, a data issue of this asset on a section liquidity reads that still came in, a candle metric the history
 * could not give. A missing section is named by the body's "No ... for ..." lines. The asset's other gaps (its
 * positioning, its trend) belong to the bodies that read them.
 */
const liquidityGaps = (a: AssetAnalysis, market: AssetMarket, issues: readonly SourceIssue[]): string[] => [
  ...a.liquidity.gaps,
  ...distinctIssues(issues)
    .filter((i) => i.symbol === a.symbol && isLiquiditySection(i.section) && deliveredDespite(market, i))
    .map((i) => assetIssueLine(a.symbol, i)),
  ...candleMetricGaps(a, market),
];

/**
 * `verified` only for what was observed live and came in whole: every section liquidity reads, nothing weaker (no
 * `gaps`). Simulated or replayed data that came in whole is not verified (null); anything missing or weaker is
 * `partial`; nothing to read is `unavailable`. Judged on liquidity's own inputs: a derivatives gap leaves it whole.
 */
const statusOf = (market: AssetMarket, gaps: readonly string[], mode: DataMode): Status => {
  if (LIQUIDITY_SECTIONS.every((section) => market[section] === null)) return 'unavailable';
  const whole = LIQUIDITY_SECTIONS.every((section) => market[section] !== null) && gaps.length === 0;
  if (!whole) return 'partial';
  return mode === 'live' ? 'verified' : null;
};

const notesOf = (a: AssetAnalysis): string[] => {
  const l = a.liquidity;
  const notes: string[] = [];
  // Without a book the depth is unknown: the context is `thin` from a wide spread, or no label at all.
  const label =
    l.context === 'thin'
      ? 'the spread alone reads thin'
      : 'depth cannot be read, so there is no liquidity label (only a spread past the thin mark would read thin)';
  if (l.spreadMethod === 'high_low_estimate')
    notes.push(
      `No order book or quoted spread: the spread is estimated from hourly high-low ranges (Corwin-Schultz); ${label}.`,
    );
  if (l.spreadMethod === 'ticker')
    notes.push(`No order book: the spread comes from the quoted best bid and ask; ${label}.`);
  if (l.relativeVolume !== null)
    notes.push(
      l.relativeVolume >= 1.5
        ? `Volume over the last 24 hours is ${l.relativeVolume.toFixed(1)} times its usual level.`
        : l.relativeVolume <= 0.67
          ? `Volume over the last 24 hours is ${l.relativeVolume.toFixed(1)} times its usual level: quieter than usual.`
          : 'Volume over the last 24 hours is near its usual level.',
    );
  const lean = bookLeanOf(l.imbalance);
  if (lean === 'bullish' || lean === 'bearish')
    notes.push(`Resting depth within 1% of mid leans to the ${lean === 'bullish' ? 'bid' : 'ask'} side.`);
  return notes;
};

const liquidityAsset = (
  a: AssetAnalysis,
  market: AssetMarket,
  gaps: readonly string[],
  mode: DataMode,
): LiquidityLiteAsset => {
  const coin = coinSnapshot(a);
  const l = a.liquidity;
  const hasMetrics = l.spreadBps !== null || l.relativeVolume !== null || l.amihud !== null;
  return {
    asset: a.symbol,
    status: statusOf(market, gaps, mode),
    liquidity_context: l.context,
    market_structure: l.structure,
    price: coin.price,
    change_24h: coin.change_24h,
    confidence: a.confidence,
    bias: a.bias,
    // An asset with no data says so where a reader of this entry looks, not only in the body's limitations.
    notes: a.dataStatus === 'unavailable' ? [noDataLimitation(a.symbol)] : notesOf(a),
    metrics: hasMetrics
      ? {
          spread_bps: roundOrNull(l.spreadBps, LIQUIDITY_DECIMALS.spreadBps),
          spread_method: l.spreadMethod,
          bid_depth_usd_1pct: roundOrNull(l.bidDepthUsd, LIQUIDITY_DECIMALS.depthUsd),
          ask_depth_usd_1pct: roundOrNull(l.askDepthUsd, LIQUIDITY_DECIMALS.depthUsd),
          book_imbalance: roundOrNull(l.imbalance, BOOK_IMBALANCE_DECIMALS),
          relative_volume: roundOrNull(l.relativeVolume, 2),
          amihud_illiquidity: l.amihud === null ? null : roundSignificant(l.amihud, 4),
        }
      : null,
    data_status: a.dataStatus,
  };
};

export function liquidityLiteBody(analysis: MarketAnalysis, clock: RunClock): LiquidityLiteResponse {
  const { snapshot, assets } = analysis;
  const gaps = assets.map((a, i) => ({
    symbol: a.symbol,
    lines: liquidityGaps(a, snapshot.assets[i]!, snapshot.issues),
  }));
  const rows = assets.map((a, i) => liquidityAsset(a, snapshot.assets[i]!, gaps[i]!.lines, snapshot.mode));
  const verified = rows.filter((r) => r.status === 'verified').length;
  const failed = rows.filter((r) => r.status === 'unavailable').length;
  const degraded = rows.some((r) => r.status === 'partial' || r.status === 'unavailable');
  const generated = iso(clock.generatedAt);
  const source = sourceInfo(snapshot, analysis.venues, clock, degraded);
  return {
    success: true,
    ok: true,
    project: PROJECT,
    endpoint: 'liquidity-lite',
    name: 'Liquidity lite',
    version: LITE_VERSION,
    access: FREE_ACCESS,
    description:
      'Educational liquidity context per asset: spread, depth within 1% of mid, book imbalance, relative volume, ' +
      'Amihud illiquidity and market structure from swing highs and lows, next to the main brain’s reading.',
    source_mode: snapshot.mode,
    source: sourceLine(source),
    source_details: source,
    educational_only: true,
    not_financial_advice: true,
    legacy_endpoint: null,
    engine: 'liquidity-lite',
    provider: snapshot.provider,
    generated_at: generated,
    updated_at: generated,
    updated_utc: generated,
    truth_statement: truthStatement(snapshot, analysis.venues),
    asset_count: rows.length,
    assets_verified: verified,
    assets_failed: failed,
    assets: Object.fromEntries(rows.map((r) => [r.asset, r])),
    upsell: {
      message: 'The paid atlas and main brain add the evidence behind each reading, per request over x402.',
      protocol: 'x402 v2',
      endpoints: [PAID_ATLAS, PAID_MAIN_BRAIN],
    },
    disclaimer: DISCLAIMER,
    // Every reason an entry is `partial`, by kind: the sections liquidity reads that are missing (and run-wide
    // issues), and what came in weaker. An asset's other gaps are in its `data_status` and the bodies that read them.
    limitations: [...missingDataNotes(snapshot, LIQUIDITY_SECTIONS), ...groupedBySymbol(gaps)],
  };
}
