// Asking other venues for a value an asset already has (its price, its funding rate), to confirm it or not: the
// part the price check and the funding check share. Each asset's other venues of the plan are asked in fallback
// order, in rounds of one venue per asset, batched by venue; a venue that refused the run is passed over without a
// call, one that fails, lacks the asset or answers for another time is a miss, never an error; at most
// MAX_REFERENCE_VENUES per asset, and no new round once the run's signal (its deadline) has fired.
import type { AssetMarket, Sourced } from '../market/types.ts';
import { inBatches } from './adapters/source.ts';
import type { FetchContext, SectionSource, SectionValues } from './adapters/source.ts';
import { timeProblem } from './freshness.ts';
import type { VenueGate } from './venue-gate.ts';

/** Other venues asked per asset at most: bounds the calls a failing or disagreeing venue can cost a run. */
export const MAX_REFERENCE_VENUES = 3;

export type CheckedSection = 'ticker' | 'funding';

export interface CrossCheckOptions<S extends CheckedSection> {
  sources: readonly SectionSource<S>[];
  context: FetchContext;
  gate: VenueGate;
  run: <T>(task: () => Promise<T>) => Promise<T>;
}

/** One asset's check: its own value, and what the other venues said. */
export interface CrossCheck<S extends CheckedSection> {
  symbol: string;
  primary: Sourced<SectionValues[S]>;
  /** Other venues not yet asked, in fallback order. */
  candidates: SectionSource<S>[];
  asked: number;
  /** Current values from other venues, in the order they came. */
  references: Sourced<SectionValues[S]>[];
  /** Why each venue asked (or skipped) gave no current value: "coinbase: HTTP 503". */
  misses: string[];
}

const firstLine = (error: unknown): string =>
  error instanceof Error ? error.message.split('\n')[0]! : String(error);

/** The next venue to ask for each asset that `wantsMore`, grouped by venue; refusing venues are passed over. */
function nextRound<S extends CheckedSection>(
  checks: readonly CrossCheck<S>[],
  gate: VenueGate,
  wantsMore: (check: CrossCheck<S>) => boolean,
): Map<SectionSource<S>, CrossCheck<S>[]> {
  const round = new Map<SectionSource<S>, CrossCheck<S>[]>();
  for (const check of checks) {
    while (check.candidates.length > 0 && check.asked < MAX_REFERENCE_VENUES && wantsMore(check)) {
      const source = check.candidates.shift()!;
      if (gate.isUnavailable(source.venue)) {
        check.misses.push(`${source.venue}: ${gate.skipMessage(source.venue)}`);
        continue;
      }
      check.asked += 1;
      round.set(source, [...(round.get(source) ?? []), check]);
      break;
    }
  }
  return round;
}

/** Asks one venue for a batch of assets; a value from another time would report a gap that is only time passing. */
async function askReference<S extends CheckedSection>(
  section: S,
  source: SectionSource<S>,
  batch: readonly CrossCheck<S>[],
  options: CrossCheckOptions<S>,
  noValue: string,
): Promise<void> {
  const symbols = batch.map((check) => check.symbol);
  const values = await options
    .run(() => source.fetch(symbols, options.context))
    .catch((error: unknown) => {
      options.gate.observe(source.venue, error);
      return firstLine(error);
    });
  for (const check of batch) {
    if (typeof values === 'string') {
      check.misses.push(`${source.venue}: ${values}`);
      continue;
    }
    const reference = values.get(check.symbol);
    const late = reference && timeProblem(section, reference.provenance, options.context.asOf);
    if (reference && !late) check.references.push(reference);
    else check.misses.push(`${source.venue}: ${late ?? values.reasons?.get(check.symbol) ?? noValue}`);
  }
}

/**
 * The checks of every asset with a value in `section` and another venue to ask, once the other venues have said
 * what they say: asked while `wantsMore` holds. `noValue` is the miss of a venue that answered without the asset.
 */
export async function crossCheck<S extends CheckedSection>(
  section: S,
  assets: readonly AssetMarket[],
  options: CrossCheckOptions<S>,
  wantsMore: (check: CrossCheck<S>) => boolean,
  noValue: string,
): Promise<CrossCheck<S>[]> {
  const checks = assets.flatMap((asset): CrossCheck<S>[] => {
    const primary = asset[section] as Sourced<SectionValues[S]> | null;
    if (!primary) return [];
    const candidates = options.sources.filter((source) => source.venue !== primary.provenance.venue);
    return candidates.length === 0
      ? []
      : [{ symbol: asset.symbol, primary, candidates, asked: 0, references: [], misses: [] }];
  });
  for (;;) {
    if (options.context.signal?.aborted) break;
    const round = nextRound(checks, options.gate, wantsMore);
    if (round.size === 0) break;
    const batches = [...round].flatMap(([source, due]) =>
      inBatches(due, source.batchSize).map((batch) => ({ source, batch })),
    );
    await Promise.all(
      batches.map(({ source, batch }) => askReference(section, source, batch, options, noValue)),
    );
  }
  return checks;
}
