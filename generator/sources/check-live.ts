// `emi sources check --live`: every venue probed once per kind of data it serves, through its adapter, so an operator
// sees a format change (an answer that no longer parses, a value out of its usual range, a unit that moved) before it
// degrades a run. Per venue and kind: how many assets parsed, the range of the main values and their units, and
// which parsed values a run would set aside as from another time (freshness.ts): `stale by 3 h`, `ahead by 2 h`.
import { SOURCE_CATALOG } from './adapters/plan.ts';
import { inBatches, SECTION_NAMES } from './adapters/source.ts';
import { clockNote } from './check.ts';
import type { FetchContext, SectionName, SectionSource, SectionValues } from './adapters/source.ts';
import type { Sourced } from '../market/types.ts';
import type { VenueId } from './venues.ts';

/** One measured quantity of a kind of data, with its unit as the project normalises it. */
interface Measure<S extends SectionName> {
  name: string;
  unit: string;
  of: (value: SectionValues[S]) => number | null;
}

const MEASURES: { readonly [S in SectionName]: ReadonlyArray<Measure<S>> } = {
  candles: [
    { name: 'bars', unit: 'closed hourly bars', of: (v) => v.length },
    { name: 'close', unit: 'USD', of: (v) => v.at(-1)?.close ?? null },
  ],
  ticker: [
    { name: 'last', unit: 'USD', of: (v) => v.last },
    { name: 'change24h', unit: 'fraction', of: (v) => v.change24h },
    { name: 'quoteVolume24h', unit: 'USD', of: (v) => v.quoteVolume24h },
  ],
  book: [
    { name: 'levels', unit: 'bid + ask levels', of: (v) => v.bids.length + v.asks.length },
    { name: 'bestBid', unit: 'USD', of: (v) => v.bids[0]?.[0] ?? null },
  ],
  funding: [
    { name: 'rate8h', unit: 'fraction per 8 h', of: (v) => v.rate8h },
    { name: 'interval', unit: 'h (venue interval)', of: (v) => v.intervalHours },
    { name: 'settled', unit: 'past rates', of: (v) => v.history8h.length },
  ],
  openInterest: [
    { name: 'valueUsd', unit: 'USD, one side', of: (v) => v.valueUsd },
    { name: 'history', unit: 'hourly points', of: (v) => v.history.length },
  ],
  liquidations: [
    { name: 'longUsd24h', unit: 'USD', of: (v) => v.longUsd24h },
    { name: 'shortUsd24h', unit: 'USD', of: (v) => v.shortUsd24h },
  ],
};

export interface RangeReport {
  name: string;
  unit: string;
  min: number;
  max: number;
}

export interface KindProbe {
  venue: VenueId;
  section: SectionName;
  /** Assets whose answer parsed into a value. */
  parsed: string[];
  /** Asset (or "*" for the whole call) -> why it has no value. */
  failures: Record<string, string>;
  /** Parsed asset -> why a run would not use its value ("stale by 3 h: ..."): it describes another time. */
  late: Record<string, string>;
  ranges: RangeReport[];
  latencyMs: number;
}

function rangesOf<S extends SectionName>(
  section: S,
  values: ReadonlyArray<Sourced<SectionValues[S]>>,
): RangeReport[] {
  const measures = MEASURES[section] as ReadonlyArray<Measure<S>>;
  return measures.flatMap((measure) => {
    const numbers = values
      .map((v) => measure.of(v.value))
      .filter((n): n is number => n !== null && Number.isFinite(n));
    return numbers.length === 0
      ? []
      : [{ name: measure.name, unit: measure.unit, min: Math.min(...numbers), max: Math.max(...numbers) }];
  });
}

async function probeKind<S extends SectionName>(
  venue: VenueId,
  section: S,
  source: SectionSource<S>,
  symbols: readonly string[],
  context: FetchContext,
  now: () => number,
): Promise<KindProbe> {
  const started = now();
  const values = new Map<string, Sourced<SectionValues[S]>>();
  const failures: Record<string, string> = {};
  const late: Record<string, string> = {};
  for (const batch of inBatches(symbols, source.batchSize)) {
    try {
      const answer = await source.fetch(batch, context);
      for (const [symbol, value] of answer) {
        values.set(symbol, value);
        const clock = clockNote(section, value.provenance, context.asOf);
        if (clock) late[symbol] = clock.note;
      }
      for (const [symbol, reason] of answer.reasons ?? []) failures[symbol] = reason;
    } catch (error) {
      const message = error instanceof Error ? error.message.split('\n')[0]! : String(error);
      for (const symbol of batch) failures[symbol] = message;
    }
  }
  for (const symbol of symbols)
    if (!values.has(symbol) && failures[symbol] === undefined) failures[symbol] = 'not in the answer';
  return {
    venue,
    section,
    parsed: symbols.filter((s) => values.has(s)),
    failures,
    late,
    ranges: rangesOf(section, [...values.values()]),
    latencyMs: Math.round(now() - started),
  };
}

/** Every venue, every kind of data it serves, once; venues in parallel, kinds of one venue one after the other. */
export async function probeVenuesLive(options: {
  venues: readonly VenueId[];
  symbols: readonly string[];
  context: FetchContext;
  now?: () => number;
}): Promise<KindProbe[]> {
  const now = options.now ?? performance.now.bind(performance);
  const perVenue = await Promise.all(
    options.venues.map(async (venue) => {
      const probes: KindProbe[] = [];
      for (const section of SECTION_NAMES) {
        const source = (SOURCE_CATALOG[section] as Partial<Record<VenueId, SectionSource<typeof section>>>)[
          venue
        ];
        if (source)
          probes.push(await probeKind(venue, section, source, options.symbols, options.context, now));
      }
      return probes;
    }),
  );
  return perVenue.flat();
}

/** Whether a run could use any of the probe's values: parsed, and describing the probe's time. */
export const hasUsableValue = (probe: KindProbe): boolean =>
  probe.parsed.some((symbol) => !(symbol in probe.late));

/**
 * Parsing first (`FAILS`, `partial`), then time: every asset parsed but none describes the probe's time is `stale`
 * or `ahead`, some of them `partial`.
 */
function statusOf(probe: KindProbe): string {
  const total = probe.parsed.length + Object.keys(probe.failures).length;
  const late = Object.values(probe.late);
  if (probe.parsed.length === 0) return 'FAILS';
  if (probe.parsed.length < total) return 'partial';
  if (late.length === 0) return 'parses';
  return late.length < total ? 'partial' : late[0]!.startsWith('ahead') ? 'ahead' : 'stale';
}

const number = (n: number): string =>
  n === 0
    ? '0'
    : Math.abs(n) >= 1e6 || Math.abs(n) < 1e-3
      ? n.toExponential(3)
      : String(Number(n.toPrecision(6)));

/** Plain text: one block per venue, one line per kind of data, then one line per asset that failed. */
export function formatLiveProbes(probes: readonly KindProbe[]): string {
  const lines: string[] = [];
  let venue: string | null = null;
  for (const probe of probes) {
    if (probe.venue !== venue) {
      venue = probe.venue;
      lines.push(`${venue}`);
    }
    const total = probe.parsed.length + Object.keys(probe.failures).length;
    const status = statusOf(probe);
    const ranges = probe.ranges
      .map((r) => `${r.name} ${number(r.min)}..${number(r.max)} ${r.unit}`)
      .join('; ');
    lines.push(
      `  ${probe.section.padEnd(12)} ${status.padEnd(7)} ${probe.parsed.length}/${total}  ${probe.latencyMs} ms  ${ranges}`,
    );
    for (const [symbol, reason] of [...Object.entries(probe.failures), ...Object.entries(probe.late)])
      lines.push(`    ${symbol}: ${reason.slice(0, 160)}`);
  }
  return lines.join('\n');
}
