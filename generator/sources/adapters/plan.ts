// Which venue serves which kind of data, in fallback order. The catalogue and the default live order are read off
// the venue descriptors (venues.ts); a plan picks an order from the catalogue.
import { VENUES } from '../venues.ts';
import type { VenueId } from '../venues.ts';
import { SECTION_NAMES } from './source.ts';
import type { SectionName, SectionSource, SourcePlan } from './source.ts';

type Catalog = { readonly [S in SectionName]: Partial<Record<VenueId, SectionSource<S>>> };

/** The venues serving a kind of data, by rank (ties in registry order). */
function servingVenues<S extends SectionName>(section: S): Array<{ id: VenueId; source: SectionSource<S> }> {
  return VENUES.flatMap((venue) => {
    const served = venue.serves[section];
    return served ? [{ id: venue.id, source: served.source, rank: served.rank }] : [];
  })
    .sort((a, b) => a.rank - b.rank)
    .map(({ id, source }) => ({ id, source }));
}

/** Every adapter, by kind of data and venue (in default fallback order). */
export const SOURCE_CATALOG: Catalog = Object.fromEntries(
  SECTION_NAMES.map((section) => [
    section,
    Object.fromEntries(servingVenues(section).map(({ id, source }) => [id, source])),
  ]),
) as unknown as Catalog;

export type SourceOrder = { readonly [S in SectionName]: readonly VenueId[] };

/**
 * Live runs: every venue that serves a kind of data, by the rank its descriptor gives it (deepest books and longest
 * histories first, aggregators and one-point histories last).
 */
export const DEFAULT_LIVE_ORDER: SourceOrder = Object.fromEntries(
  SECTION_NAMES.map((section) => [section, servingVenues(section).map(({ id }) => id)]),
) as unknown as SourceOrder;

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
 * The default simulated run (`emi generate --source sim`): the live fallback order, over simulated venues that leave
 * some assets out (simulator/listings.ts), so every adapter and every fallback chain run.
 */
export const SIMULATED_RUN_ORDER: SourceOrder = DEFAULT_LIVE_ORDER;

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
