// Liquidity of one asset: spread, depth within 1% of mid, book imbalance, relative volume, Amihud illiquidity,
// a Corwin-Schultz spread estimate when there is no book, and market structure from swing pivots.
import {
  LIQUIDITY_CONTEXT_RULE,
  RELATIVE_VOLUME_DAYS,
  type LiquidityContext,
  type MarketStructure,
  type SpreadMethod,
} from '../../schemas/liquidity-lite.ts';
import type { AssetMarket, Candle, OrderBook } from '../market/types.ts';
import { logReturns, mean, median, round } from './math.ts';

export interface LiquidityReading {
  spreadBps: number | null;
  spreadMethod: SpreadMethod | null;
  bidDepthUsd: number | null;
  askDepthUsd: number | null;
  /** (bid - ask) / (bid + ask) depth within 1% of mid, in [-1, 1]. */
  imbalance: number | null;
  relativeVolume: number | null;
  /** Average |hourly return| per million USD traded. */
  amihud: number | null;
  context: LiquidityContext | null;
  structure: MarketStructure | null;
  /**
   * Limitations of a book that came in but could not be read (each starting "SYMBOL: "): the brain loses its
   * book evidence, so every body built on the asset lists them; a missing book is stated by each body itself.
   */
  gaps: string[];
}

const DEPTH_BAND = 0.01;
const PIVOT_SPAN = 3;
const STRUCTURE_BARS = 120;
const PIVOT_TOLERANCE = 0.001;

interface BookReading {
  spreadBps: number;
  bidDepthUsd: number;
  askDepthUsd: number;
  imbalance: number | null;
}

export const readBook = (book: OrderBook): BookReading | null => {
  const bestBid = book.bids[0]?.[0];
  const bestAsk = book.asks[0]?.[0];
  if (bestBid === undefined || bestAsk === undefined || !(bestBid > 0) || !(bestAsk > bestBid)) return null;
  const mid = (bestBid + bestAsk) / 2;
  let bidDepthUsd = 0;
  for (const [px, qty] of book.bids) if (px >= mid * (1 - DEPTH_BAND)) bidDepthUsd += px * qty;
  let askDepthUsd = 0;
  for (const [px, qty] of book.asks) if (px <= mid * (1 + DEPTH_BAND)) askDepthUsd += px * qty;
  const total = bidDepthUsd + askDepthUsd;
  return {
    spreadBps: ((bestAsk - bestBid) / mid) * 1e4,
    bidDepthUsd,
    askDepthUsd,
    imbalance: total > 0 ? (bidDepthUsd - askDepthUsd) / total : null,
  };
};

/** Corwin & Schultz (2012) high-low spread estimate, averaged over recent pairs of bars; negatives count as 0. */
export const corwinSchultzBps = (candles: readonly Candle[], pairs = 48): number | null => {
  const recent = candles.slice(-(pairs + 1));
  const k = 3 - 2 * Math.SQRT2;
  const estimates: number[] = [];
  for (let i = 1; i < recent.length; i++) {
    const a = recent[i - 1]!;
    const b = recent[i]!;
    if (!(a.low > 0 && b.low > 0)) continue;
    const beta = Math.log(a.high / a.low) ** 2 + Math.log(b.high / b.low) ** 2;
    const gamma = Math.log(Math.max(a.high, b.high) / Math.min(a.low, b.low)) ** 2;
    const alpha = (Math.sqrt(2 * beta) - Math.sqrt(beta)) / k - Math.sqrt(gamma / k);
    const s = (2 * (Math.exp(alpha) - 1)) / (1 + Math.exp(alpha));
    estimates.push(Math.max(0, s));
  }
  const m = mean(estimates);
  return m === null ? null : m * 1e4;
};

const dollarVolumes = (candles: readonly Candle[]): number[] => candles.map((c) => c.volumeBase * c.close);

/**
 * Last 24 hours of volume against the median of the earlier whole 24-hour blocks (at least three) of the last
 * RELATIVE_VOLUME_DAYS: an older candle never counts.
 */
export const relativeVolume = (candles: readonly Candle[]): number | null => {
  const dv = dollarVolumes(candles.slice(-24 * RELATIVE_VOLUME_DAYS));
  const blocks: number[] = [];
  for (let end = dv.length; end - 24 >= 0; end -= 24)
    blocks.push(dv.slice(end - 24, end).reduce((a, b) => a + b, 0));
  const [latest, ...earlier] = blocks;
  const usual = median(earlier);
  if (latest === undefined || earlier.length < 3 || usual === null || !(usual > 0)) return null;
  return latest / usual;
};

export const amihudIlliquidity = (candles: readonly Candle[], bars = 168): number | null => {
  const recent = candles.slice(-(bars + 1));
  const returns = logReturns(recent.map((c) => c.close));
  const ratios: number[] = [];
  returns.forEach((r, i) => {
    const c = recent[i + 1]!;
    const usd = c.volumeBase * c.close;
    if (usd > 0) ratios.push(Math.abs(r) / (usd / 1e6));
  });
  return mean(ratios);
};

const isPivot = (xs: readonly number[], i: number, higher: boolean): boolean => {
  for (let j = i - PIVOT_SPAN; j <= i + PIVOT_SPAN; j++) {
    if (j === i) continue;
    // Strict on the left and loose on the right so that a flat top yields one pivot, not several.
    const beaten = higher
      ? xs[j]! > xs[i]! || (j < i && xs[j] === xs[i])
      : xs[j]! < xs[i]! || (j < i && xs[j] === xs[i]);
    if (beaten) return false;
  }
  return true;
};

const lastTwoPivots = (xs: readonly number[], higher: boolean): [number, number] | null => {
  const found: number[] = [];
  for (let i = xs.length - 1 - PIVOT_SPAN; i >= PIVOT_SPAN && found.length < 2; i--) {
    if (isPivot(xs, i, higher)) found.push(xs[i]!);
  }
  return found.length === 2 ? [found[1]!, found[0]!] : null;
};

const direction = ([older, newer]: [number, number]): 1 | -1 | 0 =>
  newer > older * (1 + PIVOT_TOLERANCE) ? 1 : newer < older * (1 - PIVOT_TOLERANCE) ? -1 : 0;

/** Higher highs and higher lows, lower highs and lower lows, or a range, from the last two swing pivots. */
export const marketStructure = (candles: readonly Candle[]): MarketStructure | null => {
  const recent = candles.slice(-STRUCTURE_BARS);
  const highs = lastTwoPivots(
    recent.map((c) => c.high),
    true,
  );
  const lows = lastTwoPivots(
    recent.map((c) => c.low),
    false,
  );
  if (highs === null || lows === null) return null;
  const h = direction(highs);
  const l = direction(lows);
  if (h === 1 && l === 1) return 'higher_highs_higher_lows';
  if (h === -1 && l === -1) return 'lower_highs_lower_lows';
  return 'range';
};

/**
 * Decimals of the published `spread_bps` and depths (liquidity-lite-body.ts). The label reads them at these
 * decimals, so that a spread published as 25 bps is not labelled `thin` ("wider than 25 bps").
 */
export const PUBLISHED_DECIMALS = { spreadBps: 2, depthUsd: 0 } as const;

/**
 * `liquidity_context` by LIQUIDITY_CONTEXT_RULE (its published description says the same). Depth needs a readable
 * order book (`minDepth`, the thinner side within 1 % of mid): without one, only a spread past the thin mark reads
 * `thin`, and anything narrower has no label, since `moderate` and `deep` are statements about depth.
 */
const classify = (
  rawSpreadBps: number | null,
  method: SpreadMethod | null,
  rawMinDepth: number | null,
): LiquidityContext | null => {
  const r = LIQUIDITY_CONTEXT_RULE;
  if (rawSpreadBps === null) return null;
  const spreadBps = round(rawSpreadBps, PUBLISHED_DECIMALS.spreadBps);
  const minDepth = rawMinDepth === null ? null : round(rawMinDepth, PUBLISHED_DECIMALS.depthUsd);
  const slack = method === 'high_low_estimate' ? r.estimateSlack : 1;
  const wide = spreadBps > r.thinSpreadBps * slack;
  if (minDepth === null) return wide ? 'thin' : null;
  if (wide || minDepth < r.thinDepthUsd) return 'thin';
  if (spreadBps <= r.deepSpreadBps && minDepth >= r.deepDepthUsd) return 'deep';
  return 'moderate';
};

export function readLiquidity(asset: AssetMarket): LiquidityReading {
  const candles = asset.candles?.value ?? [];
  const book = asset.book ? readBook(asset.book.value) : null;
  const ticker = asset.ticker?.value;
  let spreadBps: number | null = book?.spreadBps ?? null;
  let spreadMethod: SpreadMethod | null = book ? 'order_book' : null;
  if (spreadBps === null && ticker?.bid && ticker.ask && ticker.ask > ticker.bid) {
    spreadBps = ((ticker.ask - ticker.bid) / ((ticker.ask + ticker.bid) / 2)) * 1e4;
    spreadMethod = 'ticker';
  }
  if (spreadBps === null && candles.length >= 2) {
    spreadBps = corwinSchultzBps(candles);
    spreadMethod = spreadBps === null ? null : 'high_low_estimate';
  }
  const minDepth = book ? Math.min(book.bidDepthUsd, book.askDepthUsd) : null;
  const gaps: string[] = [];
  if (asset.book && !book)
    gaps.push(
      `${asset.symbol}: the order book came back empty or unreadable; depth and book imbalance are unavailable.`,
    );
  else if (book && book.imbalance === null)
    gaps.push(
      `${asset.symbol}: the order book holds no depth within 1% of mid; book imbalance is unavailable.`,
    );
  return {
    spreadBps,
    spreadMethod,
    bidDepthUsd: book?.bidDepthUsd ?? null,
    askDepthUsd: book?.askDepthUsd ?? null,
    imbalance: book?.imbalance ?? null,
    relativeVolume: relativeVolume(candles),
    amihud: amihudIlliquidity(candles),
    context: classify(spreadBps, spreadMethod, minDepth),
    structure: marketStructure(candles),
    gaps,
  };
}
