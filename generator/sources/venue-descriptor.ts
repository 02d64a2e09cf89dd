// One venue, described once, in its own adapter module: where its API lives, how it is called, how fast, how it says
// "error", how it names the tracked assets and what it serves. The registry (venues.ts) lists the descriptors; the
// source catalogue, the default fallback order, the rate table, the configuration's venue names and the simulator's
// routing are all derived from them, so adding a venue is one module and its line in the registry.
import type { SectionName, SectionSource } from './adapters/source.ts';
import type { VenueErrors } from './adapters/venue-errors.ts';

/** A kind of data a venue serves: the adapter, and its place in the default live fallback order (lower first). */
export interface ServedSection<S extends SectionName> {
  readonly source: SectionSource<S>;
  readonly rank: number;
}

export type VenueServes = { readonly [S in SectionName]?: ServedSection<S> };

export interface VenueDescriptor<Id extends string = string> {
  /** Provenance and configuration name, e.g. "binance-spot". */
  readonly id: Id;
  /** Name in messages ("Bybit error 10001: ..."). */
  readonly name: string;
  /**
   * Canonical origin of its public REST API. Adapters always build URLs on it (so recordings and the simulator are
   * keyed the same way whatever the deployment); a live transport may route the origin elsewhere.
   */
  readonly baseUrl: string;
  /** GET with query parameters, or POST with the request in a JSON body (Hyperliquid). */
  readonly method: 'GET' | 'POST';
  /** Default call starts per second on its host, below its published keyless limit (default: `http` settings). */
  readonly requestsPerSecond?: number;
  /** Its error envelope and rate-limit codes. */
  readonly errors: VenueErrors;
  /** Its name for a tracked asset's market (BTC -> "BTCUSDT", "XBTUSD", "bitcoin"); null when it has none. */
  readonly instrument: (symbol: string) => string | null;
  /** The kinds of data it serves. */
  readonly serves: VenueServes;
}
