// `emi sources check`: one cheap probe per venue through its adapter (so a venue that answers in the wrong shape
// counts as failing), with the wall time and the assets it covered. A value the generator would set aside as from
// another time (freshness.ts) does not count as covered: the venue is `stale` or `ahead`, by how much.
import type { Provenance } from '../market/types.ts';
import { SOURCE_CATALOG } from './adapters/plan.ts';
import type { SourceOrder } from './adapters/plan.ts';
import { callTime, inBatches } from './adapters/source.ts';
import type { FetchContext, SectionName, SectionSource } from './adapters/source.ts';
import type { Transport } from './transport.ts';
import { SourceError } from './adapters/request.ts';
import { duration, timeProblem } from './freshness.ts';
import type { VenueId } from './venues.ts';

/** The cheapest kind of data each venue serves, tried in this order. */
const PROBE_ORDER: readonly SectionName[] = [
  'ticker',
  'openInterest',
  'funding',
  'liquidations',
  'book',
  'candles',
];

export interface VenueCheck {
  venue: VenueId;
  baseUrl: string;
  probe: SectionName | null;
  /** `stale` / `ahead`: answers came, but none describes the check's time (a run would not use them). */
  status: 'ok' | 'partial' | 'unavailable' | 'failed' | 'stale' | 'ahead';
  latencyMs: number | null;
  covered: string[];
  missing: string[];
  note: string;
}

/** The cheapest section the venue serves, preferring those the configured order uses it for. */
function probeFor(
  venue: VenueId,
  order?: SourceOrder,
): { section: SectionName; source: SectionSource<SectionName> } | null {
  const candidates = PROBE_ORDER.filter((section) => order?.[section].includes(venue)).concat(PROBE_ORDER);
  for (const section of candidates) {
    const source = (SOURCE_CATALOG[section] as Partial<Record<VenueId, SectionSource<SectionName>>>)[venue];
    if (source) return { section, source };
  }
  return null;
}

/** "stale by 3 h" / "ahead by 2 h" with the generator's reason, or null when the value describes `asOf`. */
export function clockNote(
  section: SectionName,
  provenance: Provenance,
  asOf: number,
): { status: 'stale' | 'ahead'; note: string } | null {
  const problem = timeProblem(section, provenance, asOf);
  if (problem === null) return null;
  const age = asOf - provenance.asOf;
  const status = age > 0 ? 'stale' : 'ahead';
  return { status, note: `${status} by ${duration(Math.abs(age))}: ${problem.replace(/^stale: /, '')}` };
}

type ClockNote = NonNullable<ReturnType<typeof clockNote>>;

/**
 * A value stamped with the call's time tells nothing of the venue's clock (Coinbase's and Kraken's tickers carry no
 * time): the venue's hourly candles, which end on its own clock, are asked for one asset instead.
 */
async function candleClock(venue: VenueId, symbol: string, context: FetchContext): Promise<ClockNote | null> {
  const source = SOURCE_CATALOG.candles[venue];
  if (!source) return null;
  const value = (await source.fetch([symbol], context).catch(() => null))?.get(symbol);
  return value ? clockNote('candles', value.provenance, context.asOf) : null;
}

export async function checkVenue(
  venue: VenueId,
  baseUrl: string,
  symbols: readonly string[],
  context: FetchContext,
  order?: SourceOrder,
  now: () => number = performance.now.bind(performance),
): Promise<VenueCheck> {
  const probe = probeFor(venue, order);
  const base = { venue, baseUrl, probe: probe?.section ?? null, covered: [], missing: [...symbols] };
  if (!probe) return { ...base, status: 'failed', latencyMs: null, note: 'no adapter' };
  const started = now();
  const errors: unknown[] = [];
  const covered = new Set<string>();
  const late: ClockNote[] = [];
  let venueTimed = false;
  await Promise.all(
    inBatches(symbols, probe.source.batchSize).map(async (batch) => {
      try {
        for (const [symbol, value] of await probe.source.fetch(batch, context)) {
          const clock = clockNote(probe.section, value.provenance, context.asOf);
          venueTimed ||= value.provenance.asOf !== callTime(context);
          if (clock) late.push(clock);
          else covered.add(symbol);
        }
      } catch (error) {
        errors.push(error);
      }
    }),
  );
  const latencyMs = Math.round(now() - started);
  const firstCovered = symbols.find((s) => covered.has(s));
  if (!venueTimed && firstCovered !== undefined) {
    const clock = await candleClock(venue, firstCovered, context);
    if (clock) late.push(clock);
  }
  const refused = errors.find((e) => e instanceof SourceError && e.kind === 'unavailable');
  const first = errors[0];
  const note =
    late[0]?.note ??
    (first === undefined ? '' : first instanceof Error ? first.message.split('\n')[0]! : String(first));
  const result = {
    ...base,
    latencyMs,
    covered: symbols.filter((s) => covered.has(s)),
    missing: symbols.filter((s) => !covered.has(s)),
    note,
  };
  if (refused) return { ...result, status: 'unavailable' };
  if (result.covered.length === 0) return { ...result, status: late[0]?.status ?? 'failed' };
  // Every asset covered, yet the venue's clock is off: a run would set aside its timed answers.
  if (result.missing.length === 0 && late[0]) return { ...result, status: late[0].status };
  return { ...result, status: result.missing.length > 0 ? 'partial' : 'ok' };
}

export async function checkVenues(options: {
  venues: readonly VenueId[];
  baseUrls: Readonly<Record<VenueId, string>>;
  symbols: readonly string[];
  transport: Transport;
  asOf: number;
  /** The configured fallback order: each venue is probed on a kind of data it is used for. */
  order?: SourceOrder;
}): Promise<VenueCheck[]> {
  const context: FetchContext = {
    transport: options.transport,
    asOf: options.asOf,
    candleLimit: 24,
    shared: new Map(),
  };
  return Promise.all(
    options.venues.map((venue) =>
      checkVenue(venue, options.baseUrls[venue], options.symbols, context, options.order),
    ),
  );
}

const truncate = (text: string, max: number): string =>
  text.length > max ? `${text.slice(0, max - 1)}…` : text;

/** A plain-text table, one row per venue. */
export function formatChecks(checks: readonly VenueCheck[]): string {
  const rows = [
    ['venue', 'status', 'latency', 'probe', 'assets', 'base URL', 'note'],
    ...checks.map((c) => [
      c.venue,
      c.status,
      c.latencyMs === null ? '-' : `${c.latencyMs} ms`,
      c.probe ?? '-',
      c.covered.length === 0
        ? '-'
        : `${c.covered.length}/${c.covered.length + c.missing.length} ${c.covered.join(',')}`,
      c.baseUrl,
      truncate(c.note, 60),
    ]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  return rows
    .map((row) =>
      row
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
