// The embedded default source: a Transport that answers the venues' URLs from the seeded market simulator, byte for
// byte in each venue's JSON, so simulated runs go through exactly the parsing code of live runs.
import { TRACKED_ASSETS } from '../../../schemas/common.ts';
import type { Transport, TransportRequest, TransportResponse } from '../transport.ts';
import { VENUE_BASE_URLS, VENUES } from '../venues.ts';
import type { VenueId } from '../venues.ts';
import { BINANCE_SPOT_ROUTES } from './binance-spot.ts';
import { BINANCE_USDM_ROUTES } from './binance-usdm.ts';
import { BYBIT_ROUTES } from './bybit.ts';
import { HYPERLIQUID_ROUTES } from './hyperliquid.ts';
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

/** The venues the simulator imitates; the others (fallbacks of live runs) answer 404 here. */
export const SIMULATED_VENUES = [
  'binance-spot',
  'binance-usdm',
  'okx',
  'bybit',
  'hyperliquid',
] as const satisfies readonly VenueId[];

/** Origins of venues whose API is POST with a JSON body (the request type is in the body). */
const POST_VENUES: ReadonlySet<string> = new Set(
  VENUES.filter((venue) => venue.method === 'POST').map((venue) => new URL(venue.baseUrl).origin),
);

const ROUTES: Readonly<Record<(typeof SIMULATED_VENUES)[number], Readonly<Record<string, SimHandler>>>> = {
  'binance-spot': BINANCE_SPOT_ROUTES,
  'binance-usdm': BINANCE_USDM_ROUTES,
  okx: OKX_ROUTES,
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
    async fetch(request: TransportRequest, signal?: AbortSignal): Promise<TransportResponse> {
      signal?.throwIfAborted();
      const url = new URL(request.url);
      const method = request.method ?? 'GET';
      const expected = POST_VENUES.has(url.origin) ? 'POST' : 'GET';
      const handler = method === expected ? HANDLERS.get(url.origin + url.pathname) : undefined;
      if (!handler) return { status: 404, headers: { 'content-type': 'text/plain' }, body: 'Not Found' };
      const reply = handler(
        url.searchParams,
        context,
        method === 'POST' ? parseBody(request.body) : undefined,
      );
      const body = typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body);
      return { status: reply.status, headers: { ...JSON_HEADERS }, body };
    },
  };
}
