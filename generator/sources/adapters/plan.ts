// Which venue serves which kind of data, in fallback order. The catalog lists every adapter; a plan picks an order
// from it. A new venue is a new adapter added to the catalog.
import type { VenueId } from '../venues.ts';
import { binanceSpotBook, binanceSpotCandles, binanceSpotTicker } from './binance-spot.ts';
import { binanceUsdmFunding, binanceUsdmOpenInterest } from './binance-usdm.ts';
import { bybitFunding, bybitOpenInterest } from './bybit.ts';
import { coinbaseBook, coinbaseCandles, coinbaseTicker } from './coinbase.ts';
import { coingeckoTicker } from './coingecko.ts';
import { hyperliquidFunding, hyperliquidOpenInterest } from './hyperliquid.ts';
import { krakenCandles, krakenTicker } from './kraken.ts';
import { okxFunding, okxLiquidations, okxOpenInterest } from './okx.ts';
import { SECTION_NAMES } from './source.ts';
import type { SectionName, SectionSource, SourcePlan } from './source.ts';

/** Every adapter, by kind of data and venue. */
export const SOURCE_CATALOG: { readonly [S in SectionName]: Partial<Record<VenueId, SectionSource<S>>> } = {
  candles: { 'binance-spot': binanceSpotCandles, coinbase: coinbaseCandles, kraken: krakenCandles },
  ticker: {
    'binance-spot': binanceSpotTicker,
    coinbase: coinbaseTicker,
    kraken: krakenTicker,
    coingecko: coingeckoTicker,
  },
  book: { 'binance-spot': binanceSpotBook, coinbase: coinbaseBook },
  funding: {
    'binance-usdm': binanceUsdmFunding,
    bybit: bybitFunding,
    okx: okxFunding,
    hyperliquid: hyperliquidFunding,
  },
  openInterest: {
    'binance-usdm': binanceUsdmOpenInterest,
    bybit: bybitOpenInterest,
    okx: okxOpenInterest,
    hyperliquid: hyperliquidOpenInterest,
  },
  liquidations: { okx: okxLiquidations },
};

export type SourceOrder = { readonly [S in SectionName]: readonly VenueId[] };

/** Live runs: deepest books and longest histories first, aggregators and one-point histories last. */
export const DEFAULT_LIVE_ORDER: SourceOrder = {
  candles: ['binance-spot', 'coinbase', 'kraken'],
  ticker: ['binance-spot', 'coinbase', 'kraken', 'coingecko'],
  book: ['binance-spot', 'coinbase'],
  funding: ['binance-usdm', 'bybit', 'okx', 'hyperliquid'],
  openInterest: ['binance-usdm', 'bybit', 'okx', 'hyperliquid'],
  liquidations: ['okx'],
};

/** One simulated venue per kind of data, every asset listed: the plan of tests that sabotage one venue. */
export const SIMULATOR_ORDER: SourceOrder = {
  candles: ['binance-spot'],
  ticker: ['binance-spot'],
  book: ['binance-spot'],
  funding: ['binance-usdm'],
  openInterest: ['binance-usdm'],
  liquidations: ['okx'],
};

/**
 * The default simulated run (`emi generate --source sim`): the derivatives in the live fallback order, over simulated
 * venues that leave some assets out (simulator/listings.ts), so every derivatives adapter and the chain run.
 */
export const SIMULATED_RUN_ORDER: SourceOrder = {
  ...SIMULATOR_ORDER,
  funding: ['binance-usdm', 'bybit', 'okx', 'hyperliquid'],
  openInterest: ['binance-usdm', 'bybit', 'okx', 'hyperliquid'],
};

/** Venues that can serve a kind of data (for configuration errors and `emi sources check`). */
export const venuesFor = (section: SectionName): VenueId[] =>
  Object.keys(SOURCE_CATALOG[section]) as VenueId[];

function sourcesFor<S extends SectionName>(section: S, venues: readonly VenueId[]): SectionSource<S>[] {
  const catalog: Partial<Record<VenueId, SectionSource<S>>> = SOURCE_CATALOG[section];
  return venues.map((venue) => {
    const source = catalog[venue];
    if (!source) throw new Error(`${venue} does not serve ${section}: use ${venuesFor(section).join(', ')}`);
    return source;
  });
}

export function buildPlan(order: SourceOrder): SourcePlan {
  const plan = Object.fromEntries(
    SECTION_NAMES.map((section) => [section, sourcesFor(section, order[section])]),
  );
  return plan as unknown as SourcePlan;
}

export const DEFAULT_SOURCE_PLAN: SourcePlan = buildPlan(SIMULATOR_ORDER);
export const SIMULATED_RUN_PLAN: SourcePlan = buildPlan(SIMULATED_RUN_ORDER);

/** Venues named in a plan, in first-use order (for a snapshot's provider line). */
export function planVenues(plan: SourcePlan): string[] {
  return [...new Set(Object.values(plan).flatMap((sources) => sources.map((source) => source.venue)))];
}
