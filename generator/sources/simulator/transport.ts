// The embedded default source: a Transport that answers the venues' URLs from the seeded market simulator in each
// venue's JSON, so simulated runs go through exactly the schemas and normalisers of live runs.
import { TRACKED_ASSETS } from '../../../schemas/common.ts';
import type { Transport, TransportRequest, TransportResponse } from '../transport.ts';
import { VENUE_BASE_URLS, VENUE_IDS, VENUES } from '../venues.ts';
import type { VenueId } from '../venues.ts';
import { BINANCE_SPOT_ROUTES } from './binance-spot.ts';
import { BINANCE_USDM_ROUTES } from './binance-usdm.ts';
import { BYBIT_ROUTES } from './bybit.ts';
import { COINBASE_ROUTES } from './coinbase.ts';
import { COINGECKO_ROUTES } from './coingecko.ts';
import { HYPERLIQUID_ROUTES } from './hyperliquid.ts';
import { KRAKEN_ROUTES } from './kraken.ts';
import { SimulatedMarket } from './market-model.ts';
import { OKX_ROUTES } from './okx.ts';
import type { SimContext, SimHandler } from './reply.ts';

export interface SimulatedTransportOptions {
  seed: number;
  /** The simulated venues' clock (ms): every answer describes the market at this instant. */
  asOf: number;
  /** Symbols the simulated venues list (default: the seven tracked assets); others are unknown instruments. */
  symbols?: readonly string[];
  /**
   * 'complete' (default): every simulated venue lists every symbol. 'with-gaps': venues leave out the assets of
   * listings.ts (as real venues do), so a run walks the fallback chain.
   */
  listings?: 'complete' | 'with-gaps';
}

/** The simulator speaks every venue's dialect (ROUTES must name each one). */
export const SIMULATED_VENUES: readonly VenueId[] = VENUE_IDS;

/** Origins of venues whose API is POST with a JSON body (the request type is in the body). */
const POST_VENUES: ReadonlySet<string> = new Set(
  VENUES.filter((venue) => venue.method === 'POST').map((venue) => new URL(venue.baseUrl).origin),
);

/** Paths per venue; a path ending in `/*` answers every path under it (the instrument is in the path). */
const ROUTES: Readonly<Record<VenueId, Readonly<Record<string, SimHandler>>>> = {
  'binance-spot': BINANCE_SPOT_ROUTES,
  'binance-usdm': BINANCE_USDM_ROUTES,
  okx: OKX_ROUTES,
  coinbase: COINBASE_ROUTES,
  kraken: KRAKEN_ROUTES,
  coingecko: COINGECKO_ROUTES,
  bybit: BYBIT_ROUTES,
  hyperliquid: HYPERLIQUID_ROUTES,
};

const HANDLERS = new Map<string, SimHandler>(
  Object.entries(ROUTES).flatMap(([venue, routes]) =>
    Object.entries(routes).map(
      ([path, handler]) => [VENUE_BASE_URLS[venue as VenueId] + path, handler] as const,
    ),
  ),
);

/** The handler of a URL: its exact path, else the `/*` route above it. */
function handlerFor(origin: string, path: string): SimHandler | undefined {
  const exact = HANDLERS.get(origin + path);
  if (exact) return exact;
  for (let cut = path.lastIndexOf('/'); cut > 0; cut = path.lastIndexOf('/', cut - 1)) {
    const under = HANDLERS.get(`${origin}${path.slice(0, cut)}/*`);
    if (under) return under;
  }
  return undefined;
}

const JSON_HEADERS = { 'content-type': 'application/json;charset=UTF-8' };

const parseBody = (body: string | undefined): unknown => {
  try {
    return JSON.parse(body ?? 'null') as unknown;
  } catch {
    return null;
  }
};

export function createSimulatedTransport(options: SimulatedTransportOptions): Transport {
  const context: SimContext = {
    market: new SimulatedMarket(options.seed, options.asOf),
    universe: new Set(options.symbols ?? TRACKED_ASSETS),
    gaps: options.listings === 'with-gaps',
  };
  return {
    mode: 'simulated',
    answersAt: options.asOf,
    async fetch(request: TransportRequest, signal?: AbortSignal): Promise<TransportResponse> {
      signal?.throwIfAborted();
      const url = new URL(request.url);
      const method = request.method ?? 'GET';
      const expected = POST_VENUES.has(url.origin) ? 'POST' : 'GET';
      const handler = method === expected ? handlerFor(url.origin, url.pathname) : undefined;
      if (!handler) return { status: 404, headers: { 'content-type': 'text/plain' }, body: 'Not Found' };
      const reply = handler(
        url.searchParams,
        context,
        method === 'POST' ? parseBody(request.body) : undefined,
        url.pathname,
      );
      if (typeof reply.body === 'string')
        return { status: reply.status, headers: { ...JSON_HEADERS }, body: reply.body };
      return jsonResponse(reply.status, reply.body);
    },
  };
}

/**
 * An answer built as a value: handed to the adapters as is (`json`), its bytes written only when someone reads
 * `body` (a recording, the replay server). Parsing the venues' JSON was a quarter of a large run for nothing; the
 * values are JSON's own (strings, finite numbers, arrays, plain objects), which a test holds equal to the bytes.
 */
function jsonResponse(status: number, value: unknown): TransportResponse {
  let body: string | undefined;
  return {
    status,
    headers: { ...JSON_HEADERS },
    json: value,
    get body() {
      return (body ??= JSON.stringify(value));
    },
  };
}
