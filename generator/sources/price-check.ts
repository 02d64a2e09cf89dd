// Cross-venue price check: each asset's price is compared with the next ticker venue of the fallback order; a gap
// beyond the threshold is reported as an issue on that asset's ticker (the engines list it as a limitation).
import type { AssetMarket, SourceIssue, Sourced, Ticker24h } from '../market/types.ts';
import { inBatches } from './adapters/source.ts';
import { timeProblem } from './freshness.ts';
import type { FetchContext, SectionSource } from './adapters/source.ts';
import type { VenueGate } from './venue-gate.ts';

export interface PriceCheckOptions {
  sources: readonly SectionSource<'ticker'>[];
  context: FetchContext;
  gate: VenueGate;
  /** Percent, e.g. 1 for 1 %. */
  thresholdPct: number;
  run: <T>(task: () => Promise<T>) => Promise<T>;
}

const fmt = (price: number): string => price.toPrecision(6).replace(/\.?0+$/, '');

export function disagreement(
  symbol: string,
  primary: Sourced<Ticker24h>,
  reference: Sourced<Ticker24h>,
  thresholdPct: number,
): SourceIssue | null {
  const gapPct = (Math.abs(primary.value.last - reference.value.last) / reference.value.last) * 100;
  if (!(gapPct > thresholdPct)) return null;
  return {
    venue: primary.provenance.venue,
    symbol,
    section: 'ticker',
    message:
      `price ${fmt(primary.value.last)} differs from ${reference.provenance.venue} (${fmt(reference.value.last)}) ` +
      `by ${gapPct.toFixed(2)} %, beyond the ${thresholdPct} % cross-venue threshold`,
  };
}

/**
 * Failures of the reference venue are not issues, nor is a reference price from another time: the check is a bonus,
 * the price itself was delivered.
 */
export async function checkPrices(
  assets: readonly AssetMarket[],
  options: PriceCheckOptions,
): Promise<SourceIssue[]> {
  const groups = new Map<SectionSource<'ticker'>, Array<[string, Sourced<Ticker24h>]>>();
  for (const asset of assets) {
    if (!asset.ticker) continue;
    const primaryVenue = asset.ticker.provenance.venue;
    const reference = options.sources.find(
      (source) => source.venue !== primaryVenue && !options.gate.isUnavailable(source.venue),
    );
    if (!reference) continue;
    groups.set(reference, [...(groups.get(reference) ?? []), [asset.symbol, asset.ticker]]);
  }
  const batches = [...groups].flatMap(([source, tickers]) =>
    inBatches(tickers, source.batchSize).map((batch) => ({ source, batch })),
  );
  const issues: SourceIssue[] = [];
  await Promise.all(
    batches.map(async ({ source, batch }) => {
      const values = await options
        .run(() =>
          source.fetch(
            batch.map(([symbol]) => symbol),
            options.context,
          ),
        )
        .catch((error: unknown) => {
          options.gate.observe(source.venue, error);
          return new Map<string, Sourced<Ticker24h>>();
        });
      for (const [symbol, primary] of batch) {
        const reference = values.get(symbol);
        // A reference price from another time would report a gap that is only time passing.
        const current =
          reference && timeProblem('ticker', reference.provenance, options.context.asOf) === null;
        const issue = current && disagreement(symbol, primary, reference, options.thresholdPct);
        if (issue) issues.push(issue);
      }
    }),
  );
  const order = new Map(assets.map((asset, i) => [asset.symbol, i]));
  return issues.sort((a, b) => (order.get(a.symbol ?? '') ?? 0) - (order.get(b.symbol ?? '') ?? 0));
}
