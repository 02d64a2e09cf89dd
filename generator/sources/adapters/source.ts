// The adapter contract: one small interface per kind of data, one implementation per venue. The collector tries the
// sources of each kind in a configured order, so adding a venue or a fallback means adding a source to a plan.
import type {
  AssetMarket,
  Candle,
  DataMode,
  Funding,
  Liquidations,
  OpenInterest,
  OrderBook,
  Sourced,
  Ticker24h,
} from '../../market/types.ts';
import type { Transport } from '../transport.ts';
import type { SharedResponses } from './request.ts';

export type SectionName = Exclude<keyof AssetMarket, 'symbol'>;

/**
 * Hours of open-interest history asked of a venue: every reader looks back 24 hours (the positioning reading's
 * day-ago value, the liquidation estimate's drops), so two days leave a day's margin for gaps. Asking for the
 * venues' maximum (500 rows at Binance) made open interest about two fifths of a run's venue bytes for nothing.
 */
export const OPEN_INTEREST_HISTORY_HOURS = 48;

/** The order in which sections appear in a snapshot (and issues in its list). */
export const SECTION_NAMES: readonly SectionName[] = [
  'candles',
  'ticker',
  'book',
  'funding',
  'openInterest',
  'liquidations',
];

/** The normalised value of each kind of data. */
export interface SectionValues {
  candles: Candle[];
  ticker: Ticker24h;
  book: OrderBook;
  funding: Funding;
  openInterest: OpenInterest;
  liquidations: Liquidations;
}

export interface FetchContext {
  transport: Transport;
  /** The run's clock (ms): bars still open at this time are left out, windows end here. */
  asOf: number;
  /** Closed hourly bars wanted. */
  candleLimit: number;
  signal?: AbortSignal;
  /** Raw answers shared between sections for this run (set by the collector). */
  shared?: SharedResponses;
}

/** A batch answer: values per symbol, and why each symbol left out of it was (a bad or delisted entry). */
export type SectionAnswer<S extends SectionName> = Map<string, Sourced<SectionValues[S]>> & {
  reasons?: ReadonlyMap<string, string>;
};

/** Attaches per-symbol reasons to a batch answer (read by the collector for the source issues). */
export function withReasons<T>(
  values: Map<string, T>,
  reasons: ReadonlyMap<string, string>,
): Map<string, T> & { reasons: ReadonlyMap<string, string> } {
  return Object.assign(values, { reasons });
}

export interface SectionSource<S extends SectionName> {
  /** Provenance name of the venue, e.g. "binance-spot". */
  readonly venue: string;
  /** Symbols one call can serve: 1 for per-instrument endpoints, more where the venue answers a list. */
  readonly batchSize: number;
  /**
   * Values for the symbols the venue answered; a symbol left out of the map failed (the collector records it).
   * Throws when the whole call failed (HTTP error, bad JSON, unexpected shape).
   */
  fetch(symbols: readonly string[], context: FetchContext): Promise<SectionAnswer<S>>;
}

/** For each kind of data, the sources to try in order: the first one that answers a symbol wins. */
export type SourcePlan = { readonly [S in SectionName]: readonly SectionSource<S>[] };

/** The symbols split into the calls a source makes: batches of its size (at least one symbol each). */
export function inBatches<T>(items: readonly T[], batchSize: number): T[][] {
  const size = Math.max(1, batchSize);
  const batches: T[][] = [];
  for (let i = 0; i < items.length; i += size) batches.push(items.slice(i, i + size));
  return batches;
}

/** A source for an endpoint that serves one instrument per call. */
export function perSymbolSource<S extends SectionName>(
  venue: string,
  load: (symbol: string, context: FetchContext) => Promise<Sourced<SectionValues[S]>>,
): SectionSource<S> {
  return {
    venue,
    batchSize: 1,
    async fetch(symbols, context) {
      const values = new Map<string, Sourced<SectionValues[S]>>();
      for (const symbol of symbols) values.set(symbol, await load(symbol, context));
      return values;
    },
  };
}

/**
 * The time of a value whose venue states none (a book, Coinbase's stats, Kraken's ticker): when its call was
 * answered, i.e. the transport's fixed instant (a replay answers with what was recorded then), else the run's as-of.
 */
export const callTime = (context: FetchContext): number => context.transport.answersAt ?? context.asOf;

/** Tags a normalised value with where and when it came from. */
export function sourced<T>(
  value: T,
  venue: string,
  asOf: number,
  context: FetchContext,
  estimated = false,
): Sourced<T> {
  const mode: DataMode = context.transport.mode;
  return { value, provenance: { venue, asOf, mode, estimated } };
}
