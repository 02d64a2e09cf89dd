// Honest labelling: every body says whether its numbers were simulated, live or replayed, and from where.
import { CACHE_SECONDS, type DataMode, type SourceInfo } from '../../schemas/common.ts';
import type { MarketSnapshot, SourceIssue } from '../market/types.ts';
import { iso, type RunClock } from './clock.ts';
import { listWords } from './format.ts';

/** A simulated venue may be written "sim:binance-spot"; published bodies name the venue it imitates. */
const SIM_PREFIX = 'sim:';
const bareVenue = (venue: string): string =>
  venue.startsWith(SIM_PREFIX) ? venue.slice(SIM_PREFIX.length) : venue;

/** Every venue that supplied a value this run (bare names), sorted for stable output. */
export const venuesOf = (snapshot: MarketSnapshot): string[] => {
  const venues = new Set<string>();
  for (const a of snapshot.assets) {
    for (const section of [a.candles, a.ticker, a.book, a.funding, a.openInterest, a.liquidations]) {
      if (section) venues.add(bareVenue(section.provenance.venue));
    }
  }
  return [...venues].sort();
};

/** "binance-spot (simulated)", "binance-spot (replayed)" or "binance-spot". */
export const venueLabel = (venue: string, mode: DataMode): string => {
  const bare = bareVenue(venue);
  return mode === 'simulated' ? `${bare} (simulated)` : mode === 'replay' ? `${bare} (replayed)` : bare;
};

/** `venues` is `venuesOf(snapshot)`, computed once per run (one pass over every asset). */
export const sourceInfo = (
  snapshot: MarketSnapshot,
  venues: readonly string[],
  clock: RunClock,
  degraded: boolean,
): SourceInfo => ({
  mode: snapshot.mode,
  provider: snapshot.provider,
  simulated: snapshot.mode === 'simulated',
  venues: [...venues],
  seed: snapshot.mode === 'simulated' ? snapshot.seed : null,
  as_of: iso(snapshot.asOf),
  generated_at: iso(clock.generatedAt),
  next_update_due: iso(clock.nextUpdateDue),
  cache_seconds: CACHE_SECONDS,
  degraded,
});

const venueWords = (venues: readonly string[]): string =>
  venues.length > 0 ? listWords(venues.map(bareVenue)) : 'no venue';

/** One line naming the provider and venues, for the bodies whose `source` is a string (free and paid). */
export const sourceLine = ({
  mode,
  provider,
  venues,
}: Pick<SourceInfo, 'mode' | 'provider' | 'venues'>): string => {
  const tag = mode === 'simulated' ? 'simulated ' : mode === 'replay' ? 'replayed ' : '';
  return `${provider}: ${tag}data from ${venueWords(venues)}`;
};

/** Venues whose terms ask for attribution wherever their data is shown. */
const ATTRIBUTIONS: Record<string, string> = { coingecko: 'Price data by CoinGecko.' };

export const truthStatement = (snapshot: MarketSnapshot, venues: readonly string[]): string => {
  // The simulator imitates a venue's answers; crediting the venue would say its data was used.
  const credits =
    snapshot.mode === 'simulated'
      ? []
      : [...new Set(venues.map(bareVenue))].flatMap((v) => ATTRIBUTIONS[v] ?? []);
  return [statementFor(snapshot, venues), ...credits].join(' ');
};

const statementFor = (snapshot: MarketSnapshot, venues: readonly string[]): string => {
  const asOf = iso(snapshot.asOf);
  switch (snapshot.mode) {
    case 'simulated':
      return (
        `SIMULATED DATA: every number here comes from a seeded market simulator (seed ${snapshot.seed ?? 'none'}) ` +
        `imitating ${venueWords(venues)}; none is a real market observation. The readings show how the methods ` +
        'behave, not what markets are doing.'
      );
    case 'replay':
      return `REPLAYED DATA: computed from recorded responses of ${venueWords(venues)}, replayed for ${asOf}; this is not current market data.`;
    case 'live':
      return `LIVE DATA: computed from public market data of ${venueWords(venues)} as of ${asOf}. The readings describe evidence at that time; they are not advice.`;
  }
};

export const issuesFor = (symbol: string, issues: readonly SourceIssue[]): SourceIssue[] =>
  issues.filter((i) => i.symbol === null || i.symbol === symbol);

export const issueText = (issue: SourceIssue): string =>
  `Data issue at ${bareVenue(issue.venue)} (${issue.section}${issue.symbol ? `, ${issue.symbol}` : ''}): ${issue.message}`;

/** A list of symbols short enough to read: the first few, then a count. */
export const symbolList = (symbols: readonly string[], max = 10): string =>
  symbols.length <= max
    ? listWords(symbols)
    : `${symbols.slice(0, max).join(', ')} and ${symbols.length - max} more`;
