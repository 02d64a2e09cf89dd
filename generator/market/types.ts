// Normalised market data: what every venue adapter (live, replay or simulated) produces and every engine reads.
// Units are fixed here once so that engines never guess: prices in USD, fractions not percents, times in ms.
import type { DataMode } from '../../schemas/common.ts';

export type { DataMode };

/** Where one value came from. */
export interface Provenance {
  /** e.g. "binance-spot"; whether it was simulated is `mode`. An estimate names its input, never a venue. */
  venue: string;
  /**
   * ms since epoch: the venue's own time for the value where it states one (a ticker's close time, the end of the
   * last closed bar, the last open-interest point), else the time of the call (the run's as-of). The collector
   * uses no value whose time does not describe the run's as-of (sources/freshness.ts).
   */
  asOf: number;
  mode: DataMode;
  /** True when the value is derived rather than observed (e.g. liquidations estimated from open-interest drops). */
  estimated: boolean;
}

export interface Sourced<T> {
  value: T;
  provenance: Provenance;
}

/** One hourly bar. */
export interface Candle {
  openTime: number; // ms
  open: number;
  high: number;
  low: number;
  close: number;
  volumeBase: number;
}

/**
 * Whose trades a ticker's 24-hour volume counts: one venue's own market (an exchange's ticker), or every exchange's
 * (CoinGecko's aggregate, a hundred times larger or more): a ratio against it reads nothing about one venue.
 */
export type VolumeScope = 'venue' | 'all-exchanges';

export interface Ticker24h {
  last: number;
  change24h: number; // fraction, e.g. 0.0123 for +1.23 %
  quoteVolume24h: number; // USD
  /** Absent is read as 'venue' (the exchanges' own tickers); an aggregate must say 'all-exchanges'. */
  volumeScope?: VolumeScope;
  bid: number | null;
  ask: number | null;
}

export interface OrderBook {
  bids: Array<[price: number, quantity: number]>; // best first
  asks: Array<[price: number, quantity: number]>; // best first
}

/**
 * What a funding rate is: `predicted`, the venue's rate for the period still running (it may change until the period
 * settles: Binance `lastFundingRate`, Bybit and OKX `fundingRate`, Hyperliquid `funding`), or `settled`, a rate
 * already charged (Binance and Bybit funding history, OKX `realizedRate`).
 */
export type FundingRateKind = 'predicted' | 'settled';

export interface Funding {
  rate8h: number; // fraction per 8 hours (normalised from the venue's interval)
  rateKind: FundingRateKind; // what rate8h is
  intervalHours: number; // the venue's own funding interval
  markPrice: number | null;
  indexPrice: number | null;
  history8h: number[]; // past settled rates only, normalised to 8 h, oldest first
  /**
   * Settlement time (ms) of each `history8h` rate, same order, where the adapter carries them: the 30-day window is
   * then read by time, right across a change of interval. Without them it is counted at `intervalHours`.
   */
  historyTimes?: number[];
}

export interface OpenInterest {
  valueUsd: number;
  history: Array<{ time: number; valueUsd: number }>; // hourly, oldest first
}

export interface Liquidations {
  longUsd24h: number; // long positions liquidated (sell orders)
  shortUsd24h: number; // short positions liquidated (buy orders)
  events: number; // liquidation orders reported by the venue; 0 for an estimate, which observes none
}

/** Everything known about one asset for one run. A null section is data that could not be had. */
export interface AssetMarket {
  symbol: string;
  candles: Sourced<Candle[]> | null; // hourly, oldest first
  ticker: Sourced<Ticker24h> | null;
  book: Sourced<OrderBook> | null;
  funding: Sourced<Funding> | null;
  openInterest: Sourced<OpenInterest> | null;
  liquidations: Sourced<Liquidations> | null;
}

/** A problem met while collecting data: it degrades a section, it never fails the run on its own. */
export interface SourceIssue {
  venue: string;
  symbol: string | null;
  section: keyof Omit<AssetMarket, 'symbol'> | 'all';
  message: string;
}

export interface MarketSnapshot {
  asOf: number; // ms: the run's clock
  mode: DataMode;
  seed: number | null;
  provider: string;
  assets: AssetMarket[];
  issues: SourceIssue[];
}
