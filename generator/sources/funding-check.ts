// Cross-venue funding check: each asset's funding rate is compared with the next funding venue of the fallback order
// that gives a current rate for it (a venue that fails, lacks the asset or answers for another time is passed over,
// at most MAX_REFERENCE_VENUES per asset). Without it the positioning vote's sign could rest on whichever venue
// answered first: +0.2 % per 8 h at one venue reads crowded longs (bearish), -0.06 % at the next crowded shorts
// (bullish). Two rates further apart than the threshold are an issue on that asset's funding, and so is a rate no
// other configured venue could confirm; the engines list both as limitations and lower the asset's confidence.
// A plan with one funding venue has nothing to compare with: no check and no issue (the operator's choice).
import type { AssetMarket, Funding, SourceIssue, Sourced } from '../market/types.ts';
import { inBatches } from './adapters/source.ts';
import type { FetchContext, SectionSource } from './adapters/source.ts';
import { timeProblem } from './freshness.ts';
import { MAX_REFERENCE_VENUES } from './price-check.ts';
import type { VenueGate } from './venue-gate.ts';

/**
 * Two venues' rates further apart than this (percentage points per 8 h) disagree: the size of the -0.05 % mark and
 * half the +0.1 % mark of FUNDING_RULE, so a gap past it can move a reading across a fixed mark.
 */
export const FUNDING_DISAGREEMENT_PCT_8H = 0.05;

export interface FundingCheckOptions {
  sources: readonly SectionSource<'funding'>[];
  context: FetchContext;
  gate: VenueGate;
  /** Percentage points per 8 h, e.g. 0.05. */
  thresholdPct8h: number;
  run: <T>(task: () => Promise<T>) => Promise<T>;
}

/** One asset's check in progress. */
interface AssetCheck {
  symbol: string;
  primary: Sourced<Funding>;
  /** Other venues not yet asked, in fallback order. */
  candidates: SectionSource<'funding'>[];
  asked: number;
  /** The first current rate another venue gave. */
  reference: Sourced<Funding> | null;
  /** Why each venue asked (or skipped) gave no current rate: "bybit: HTTP 503". */
  misses: string[];
}

/** A rate per 8 h in percent, signed, at the decimals `rate_8h_pct` is published with: 0.002 -> "+0.2000 %". */
const pct8h = (rate8h: number): string => `${rate8h > 0 ? '+' : ''}${(rate8h * 100).toFixed(4)} %`;

/** The gap between two rates in percentage points per 8 h, at the 4 decimals it is stated with (and judged at). */
const gapPct8h = (a: number, b: number): number => Math.round(Math.abs(a - b) * 1e6) / 1e4;

const firstLine = (error: unknown): string =>
  error instanceof Error ? error.message.split('\n')[0]! : String(error);

const fundingIssue = (
  { symbol, primary }: Pick<AssetCheck, 'symbol' | 'primary'>,
  message: string,
): SourceIssue => ({ venue: primary.provenance.venue, symbol, section: 'funding', message });

/** The issue an asset's finished check comes to, or null when another venue confirmed the rate. */
function fundingVerdict(check: AssetCheck, thresholdPct8h: number): SourceIssue | null {
  const rate = check.primary.value.rate8h;
  if (!check.reference) {
    // No venue asked and none passed over: the run was stopped (its deadline) before the check could start.
    const tried = check.misses.length > 0 ? check.misses.join('; ') : 'the collection was stopped before';
    return fundingIssue(
      check,
      `funding ${pct8h(rate)} per 8 h not cross-checked: no other venue gave a current funding rate (${tried})`,
    );
  }
  const other = check.reference.value.rate8h;
  const gap = gapPct8h(rate, other);
  if (!(gap > thresholdPct8h)) return null;
  return fundingIssue(
    check,
    `funding ${pct8h(rate)} per 8 h differs from ${check.reference.provenance.venue} (${pct8h(other)}) by ` +
      `${gap.toFixed(4)} points per 8 h, beyond the ${thresholdPct8h}-point cross-venue threshold; the ` +
      'positioning read from it may not hold',
  );
}

/** The next venue to ask for each asset still unconfirmed, grouped by venue; refusing venues are passed over. */
function nextRound(
  checks: readonly AssetCheck[],
  gate: VenueGate,
): Map<SectionSource<'funding'>, AssetCheck[]> {
  const round = new Map<SectionSource<'funding'>, AssetCheck[]>();
  for (const check of checks) {
    while (!check.reference && check.candidates.length > 0 && check.asked < MAX_REFERENCE_VENUES) {
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

/** Asks one venue for a batch of assets; a failure or a rate from another time is a miss, never an error. */
async function askReference(
  source: SectionSource<'funding'>,
  batch: readonly AssetCheck[],
  options: FundingCheckOptions,
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
    // A rate from another time would report a gap that is only time passing.
    const late = reference && timeProblem('funding', reference.provenance, options.context.asOf);
    if (reference && !late) check.reference = reference;
    else
      check.misses.push(
        `${source.venue}: ${late ?? values.reasons?.get(check.symbol) ?? 'no funding rate for this asset'}`,
      );
  }
}

/**
 * Cross-checks every asset's funding rate against the other funding venues of the plan. Rounds of calls, one venue
 * per asset per round, batched by venue; no new round once the run's signal (its deadline) has fired.
 */
export async function checkFunding(
  assets: readonly AssetMarket[],
  options: FundingCheckOptions,
): Promise<SourceIssue[]> {
  const checks: AssetCheck[] = assets.flatMap((asset) => {
    if (!asset.funding) return [];
    const venue = asset.funding.provenance.venue;
    const candidates = options.sources.filter((source) => source.venue !== venue);
    return candidates.length === 0
      ? []
      : [{ symbol: asset.symbol, primary: asset.funding, candidates, asked: 0, reference: null, misses: [] }];
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
  return checks.flatMap((check) => fundingVerdict(check, options.thresholdPct8h) ?? []);
}
