// The registry of venues: one descriptor per venue, each in its own adapter module (see venue-descriptor.ts). Every
// table about venues (names, base URLs, rates, the catalogue of sources and the default fallback order) is derived
// from this list; a new venue is its module and one line here.
import { BINANCE_SPOT } from './adapters/binance-spot.ts';
import { BINANCE_USDM } from './adapters/binance-usdm.ts';
import { BYBIT } from './adapters/bybit.ts';
import { COINBASE } from './adapters/coinbase.ts';
import { COINGECKO } from './adapters/coingecko.ts';
import { HYPERLIQUID } from './adapters/hyperliquid.ts';
import { KRAKEN } from './adapters/kraken.ts';
import { OKX } from './adapters/okx.ts';
import { anyVenueErrors } from './adapters/venue-errors.ts';
import type { VenueErrors } from './adapters/venue-errors.ts';
import type { VenueDescriptor } from './venue-descriptor.ts';

/** In this order in listings (`emi sources check`, configuration messages); ties of rank are broken by it too. */
export const VENUES = [
  BINANCE_SPOT,
  BINANCE_USDM,
  OKX,
  COINBASE,
  KRAKEN,
  COINGECKO,
  BYBIT,
  HYPERLIQUID,
] as const satisfies readonly VenueDescriptor[];

export type VenueId = (typeof VENUES)[number]['id'];

export const VENUE_IDS = VENUES.map((venue) => venue.id) as unknown as readonly [VenueId, ...VenueId[]];

const BY_ID = new Map<string, VenueDescriptor<VenueId>>(VENUES.map((venue) => [venue.id, venue]));

export function venueDescriptor(id: VenueId): VenueDescriptor<VenueId> {
  const venue = BY_ID.get(id);
  if (!venue) throw new Error(`unknown venue ${id}`);
  return venue;
}

/** Canonical base URL of each venue's public REST API. */
export const VENUE_BASE_URLS = Object.fromEntries(
  VENUES.map((venue) => [venue.id, venue.baseUrl]),
) as unknown as Readonly<Record<VenueId, string>>;

/** The error envelope of the venue whose canonical host this is; any venue's for a host no venue uses. */
const ANY_VENUE_ERRORS = anyVenueErrors(VENUES.map((venue) => venue.errors));
const ERRORS_BY_HOST = new Map<string, VenueErrors>(
  VENUES.map((venue) => [new URL(venue.baseUrl).host, venue.errors]),
);
export const venueErrorsForHost = (host: string): VenueErrors => ERRORS_BY_HOST.get(host) ?? ANY_VENUE_ERRORS;
