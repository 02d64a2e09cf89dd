// Whether a venue's value still describes the run's as-of. Each value carries the venue's own time for it
// (`Provenance.asOf`: a ticker's close time, the end of the last closed bar, the last open-interest point); a value
// older than its kind allows, or later than the run's as-of, is not used as current data: the collector turns it
// into a source issue for that asset and kind, like a venue failure, and falls back to the next venue.
import type { Provenance } from '../market/types.ts';
import type { SectionName } from './adapters/source.ts';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;

/**
 * The oldest a value may be, by kind. Quotes (ticker, book, funding, the liquidation window's end) are the venue's
 * present: a few minutes covers a slow venue or aggregator (CoinGecko refreshes about every minute). Hourly series
 * (candles, open-interest history) end on an hour: at hh:59 the last closed bar ended 59 minutes ago, so 2 hours
 * allows that and one late bar, but not a series that stopped.
 */
const MAX_AGE_MS: Readonly<Record<SectionName, number>> = {
  candles: 2 * HOUR_MS,
  ticker: 5 * MINUTE_MS,
  book: 5 * MINUTE_MS,
  funding: 5 * MINUTE_MS,
  openInterest: 2 * HOUR_MS,
  liquidations: 5 * MINUTE_MS,
};

/**
 * How far after the run's as-of a venue's time may be: a live run's as-of is the start of its minute and its calls
 * take a while (retries, rate budgets), so a few minutes; a value from well after the as-of describes another time.
 */
const MAX_AHEAD_MS = 10 * MINUTE_MS;

/** What the venue's time is the time of, in words. */
const WHAT: Readonly<Record<SectionName, string>> = {
  candles: 'last closed hourly bar',
  ticker: 'ticker',
  book: 'order book',
  funding: 'funding rate',
  openInterest: 'open interest',
  liquidations: 'liquidation total',
};

const iso = (ms: number): string => new Date(ms).toISOString();

/** "2 d 6 h", "1 h 5 min", "7 min", "40 s". */
export function duration(ms: number): string {
  const minutes = Math.floor(ms / MINUTE_MS);
  if (minutes < 1) return `${Math.round(ms / 1000)} s`;
  const [days, hours, mins] = [Math.floor(minutes / 1440), Math.floor((minutes % 1440) / 60), minutes % 60];
  if (days > 0) return hours > 0 ? `${days} d ${hours} h` : `${days} d`;
  if (hours > 0) return mins > 0 ? `${hours} h ${mins} min` : `${hours} h`;
  return `${mins} min`;
}

/** Why a value does not describe the run's as-of, or null when it does. */
export function timeProblem(section: SectionName, provenance: Provenance, asOf: number): string | null {
  const age = asOf - provenance.asOf;
  const when = `the venue's ${WHAT[section]} is from ${iso(provenance.asOf)}`;
  if (age > MAX_AGE_MS[section]) {
    return (
      `stale: ${when}, ${duration(age)} before the run's as-of ${iso(asOf)} ` +
      `(at most ${duration(MAX_AGE_MS[section])} allowed); not used as current data`
    );
  }
  if (-age > MAX_AHEAD_MS) {
    return `${when}, ${duration(-age)} after the run's as-of ${iso(asOf)}; it does not describe that time`;
  }
  return null;
}
