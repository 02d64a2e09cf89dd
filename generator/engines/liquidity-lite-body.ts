// Body of /api/liquidity-lite.php.
import { DISCLAIMER, FREE_ACCESS, LITE_VERSION, PROJECT, type DataMode } from '../../schemas/common.ts';
import type { LiquidityLiteAsset, LiquidityLiteResponse } from '../../schemas/liquidity-lite.ts';
import type { MarketAnalysis } from './analysis.ts';
import { noDataLimitation, type AssetAnalysis } from './asset-analysis.ts';
import { assetDataNotes } from './aggregate.ts';
import { BOOK_IMBALANCE_DECIMALS, bookLeanOf } from './agreement.ts';
import { iso, type RunClock } from './clock.ts';
import { PAID_ATLAS, PAID_MAIN_BRAIN } from './links.ts';
import { sourceInfo, sourceLine, truthStatement } from './labels.ts';
import { roundOrNull, roundSignificant } from './math.ts';
import { coinSnapshot } from './main-brain-body.ts';
import { PUBLISHED_DECIMALS as LIQUIDITY_DECIMALS } from './liquidity.ts';

type Status = LiquidityLiteAsset['status'];

/**
 * `verified` only for what was observed live and came in whole: candles, a quote or book, a spread, and an asset
 * with nothing missing (`data_status` available). Simulated or replayed data that came in whole is not verified
 * (null); anything missing is `partial`; nothing to read is `unavailable`.
 */
const statusOf = (
  a: AssetAnalysis,
  market: MarketAnalysis['snapshot']['assets'][number],
  mode: DataMode,
): Status => {
  if (!market.candles && !market.ticker && !market.book) return 'unavailable';
  const complete = market.candles && (market.book || market.ticker) && a.liquidity.spreadBps !== null;
  if (!complete || a.dataStatus !== 'available') return 'partial';
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
  market: MarketAnalysis['snapshot']['assets'][number],
  mode: DataMode,
): LiquidityLiteAsset => {
  const coin = coinSnapshot(a);
  const l = a.liquidity;
  const hasMetrics = l.spreadBps !== null || l.relativeVolume !== null || l.amihud !== null;
  return {
    asset: a.symbol,
    status: statusOf(a, market, mode),
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
  const rows = assets.map((a, i) => liquidityAsset(a, snapshot.assets[i]!, snapshot.mode));
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
    // Every reason an entry is `partial`: missing sections, books that came in but could not be read (their
    // depth is null too), and the asset's other gaps, which its `data_status` reflects.
    limitations: assetDataNotes(snapshot, assets),
  };
}
