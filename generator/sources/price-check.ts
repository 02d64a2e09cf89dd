// Cross-venue price check: each asset's price is compared with the other ticker venues of the fallback order, in
// order. A venue that cannot give a current price is passed over for the next one (at most MAX_REFERENCE_VENUES per
// asset); a gap beyond the threshold is an issue on that asset's ticker, and so is a price no other venue could
// confirm (the engines list both as limitations and lower the asset's confidence). A gap far beyond the threshold
// gets a second opinion: when two other venues agree with each other, the outlier is set aside and their price used.
import type { AssetMarket, SourceIssue, Sourced, Ticker24h } from '../market/types.ts';
import { inBatches } from './adapters/source.ts';
import { timeProblem } from './freshness.ts';
import type { FetchContext, SectionSource } from './adapters/source.ts';
import type { VenueGate } from './venue-gate.ts';

/** Other venues asked per asset at most: bounds the calls a failing or disagreeing venue can cost a run. */
export const MAX_REFERENCE_VENUES = 3;

/** A gap this large (percent) is a wrong price, not a spread between venues: a second reference is asked. */
export const OUTLIER_GAP_PCT = 10;

export interface PriceCheckOptions {
  sources: readonly SectionSource<'ticker'>[];
  context: FetchContext;
  gate: VenueGate;
  /** Percent, e.g. 1 for 1 %. */
  thresholdPct: number;
  run: <T>(task: () => Promise<T>) => Promise<T>;
}

export interface PriceCheckResult {
  issues: SourceIssue[];
  /** Symbol -> the ticker to publish instead of an outlier that two other venues contradicted. */
  replacements: Map<string, Sourced<Ticker24h>>;
}

/** One asset's check in progress. */
interface AssetCheck {
  symbol: string;
  primary: Sourced<Ticker24h>;
  /** Other venues not yet asked, in fallback order. */
  candidates: SectionSource<'ticker'>[];
  asked: number;
  /** Current prices from other venues, in the order they came. */
  references: Sourced<Ticker24h>[];
  /** Why each venue asked (or skipped) gave no current price: "coinbase: HTTP 503". */
  misses: string[];
}

const fmt = (price: number): string => price.toPrecision(6).replace(/\.?0+$/, '');

const gapPct = (price: number, reference: number): number => (Math.abs(price - reference) / reference) * 100;

const firstLine = (error: unknown): string =>
  error instanceof Error ? error.message.split('\n')[0]! : String(error);

const quoted = (ticker: Sourced<Ticker24h>): string =>
  `${ticker.provenance.venue} (${fmt(ticker.value.last)})`;

export function disagreement(
  symbol: string,
  primary: Sourced<Ticker24h>,
  reference: Sourced<Ticker24h>,
  thresholdPct: number,
): SourceIssue | null {
  const gap = gapPct(primary.value.last, reference.value.last);
  if (!(gap > thresholdPct)) return null;
  return tickerIssue(primary, symbol, disagreementText(primary, reference, gap, thresholdPct));
}

function disagreementText(
  primary: Sourced<Ticker24h>,
  reference: Sourced<Ticker24h>,
  gap: number,
  thresholdPct: number,
): string {
  return (
    `price ${fmt(primary.value.last)} differs from ${quoted(reference)} ` +
    `by ${gap.toFixed(2)} %, beyond the ${thresholdPct} % cross-venue threshold`
  );
}

const tickerIssue = (primary: Sourced<Ticker24h>, symbol: string, message: string): SourceIssue => ({
  venue: primary.provenance.venue,
  symbol,
  section: 'ticker',
  message,
});

/** Whether the asset's check needs one more venue: none confirmed a price yet, or the one that did is far off. */
function needsAnother(check: AssetCheck): boolean {
  if (check.candidates.length === 0 || check.asked >= MAX_REFERENCE_VENUES) return false;
  const [first, second] = check.references;
  if (!first) return true;
  return !second && gapPct(check.primary.value.last, first.value.last) > OUTLIER_GAP_PCT;
}

/**
 * The next venue to ask for each asset that needs one, grouped by venue; venues that refused the run are passed
 * over (and named) without a call.
 */
function nextRound(
  checks: readonly AssetCheck[],
  gate: VenueGate,
): Map<SectionSource<'ticker'>, AssetCheck[]> {
  const round = new Map<SectionSource<'ticker'>, AssetCheck[]>();
  for (const check of checks) {
    while (needsAnother(check)) {
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

/** Asks one venue for a batch of assets; a failure or a price from another time is a miss, never an error. */
async function askReference(
  source: SectionSource<'ticker'>,
  batch: readonly AssetCheck[],
  options: PriceCheckOptions,
): Promise<void> {
  const values = await options
    .run(() =>
      source.fetch(
        batch.map((check) => check.symbol),
        options.context,
      ),
    )
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
    // A reference price from another time would report a gap that is only time passing.
    const late = reference && timeProblem('ticker', reference.provenance, options.context.asOf);
    if (reference && !late) check.references.push(reference);
    else
      check.misses.push(
        `${source.venue}: ${late ?? values.reasons?.get(check.symbol) ?? 'no price for this asset'}`,
      );
  }
}

/** The issue (and the replacement price, if any) that an asset's finished check comes to. */
function verdict(
  check: AssetCheck,
  thresholdPct: number,
): { issue: SourceIssue | null; replacement?: Sourced<Ticker24h> } {
  const { symbol, primary, references, misses } = check;
  const [first, second] = references;
  // No venue asked and none passed over: the run was stopped (its deadline) before the check could start.
  const tried = misses.length > 0 ? ` (${misses.join('; ')})` : ' (the collection was stopped before)';
  if (!first)
    return {
      issue: tickerIssue(
        primary,
        symbol,
        `price ${fmt(primary.value.last)} not cross-checked: no other venue gave a current price${tried}`,
      ),
    };
  const firstGap = gapPct(primary.value.last, first.value.last);
  if (firstGap <= thresholdPct) return { issue: null };
  if (!second) return { issue: disagreement(symbol, primary, first, thresholdPct) };
  // The second opinion settles a gap far beyond the threshold.
  if (gapPct(primary.value.last, second.value.last) <= thresholdPct) return { issue: null };
  if (gapPct(second.value.last, first.value.last) <= thresholdPct)
    return {
      issue: tickerIssue(
        primary,
        symbol,
        `price ${fmt(primary.value.last)} set aside as an outlier: it differs by ${firstGap.toFixed(2)} % from ` +
          `${quoted(first)} and ${quoted(second)}, which agree within the ${thresholdPct} % cross-venue ` +
          `threshold; the price published is ${first.provenance.venue}'s`,
      ),
      replacement: first,
    };
  return {
    issue: tickerIssue(
      primary,
      symbol,
      `${disagreementText(primary, first, firstGap, thresholdPct)}; ${quoted(second)} agrees with neither`,
    ),
  };
}

/**
 * Cross-checks every asset's ticker against the other ticker venues. No other ticker venue configured means no check
 * (the operator's choice). Rounds of calls, one venue per asset per round, batched by venue; no new round once the
 * run's signal (its deadline) has fired.
 */
export async function checkPrices(
  assets: readonly AssetMarket[],
  options: PriceCheckOptions,
): Promise<PriceCheckResult> {
  const checks: AssetCheck[] = assets.flatMap((asset) => {
    if (!asset.ticker) return [];
    const venue = asset.ticker.provenance.venue;
    const candidates = options.sources.filter((source) => source.venue !== venue);
    return candidates.length === 0
      ? []
      : [{ symbol: asset.symbol, primary: asset.ticker, candidates, asked: 0, references: [], misses: [] }];
  });
  for (;;) {
    if (options.context.signal?.aborted) break;
    const round = nextRound(checks, options.gate);
    if (round.size === 0) break;
    const batches = [...round].flatMap(([source, due]) =>
      inBatches(due, source.batchSize).map((batch) => ({ source, batch })),
    );
    await Promise.all(batches.map(({ source, batch }) => askReference(source, batch, options)));
  }
  const issues: SourceIssue[] = [];
  const replacements = new Map<string, Sourced<Ticker24h>>();
  for (const check of checks) {
    const { issue, replacement } = verdict(check, options.thresholdPct);
    if (issue) issues.push(issue);
    if (replacement) replacements.set(check.symbol, replacement);
  }
  return { issues, replacements };
}
