// Gathers one MarketSnapshot: every kind of data for every symbol, through the sources of a plan, with bounded
// concurrency. A failure degrades one section of one asset (a SourceIssue and a null section); it never throws.
// A venue that refuses the run (403/451) is skipped from then on; a value whose venue time does not describe the
// run's as-of (freshness.ts) counts as that venue's failure; prices and funding rates are cross-checked between
// venues; missing liquidations may be estimated from open interest (off by default; labelled estimated).
import pLimit from 'p-limit';
import type { LimitFunction } from 'p-limit';
import type { AssetMarket, MarketSnapshot, SourceIssue, Sourced } from '../market/types.ts';
import { DEFAULT_SOURCE_PLAN, planVenues, SIMULATED_RUN_PLAN } from './adapters/plan.ts';
import type { SharedResponses } from './adapters/request.ts';
import { inBatches, SECTION_NAMES } from './adapters/source.ts';
import type {
  FetchContext,
  SectionName,
  SectionAnswer,
  SectionSource,
  SectionValues,
  SourcePlan,
} from './adapters/source.ts';
import { createSimulatedTransport } from './simulator/transport.ts';
import { timeProblem } from './freshness.ts';
import { estimateLiquidations } from './liquidation-estimate.ts';
import { checkFunding, FUNDING_DISAGREEMENT_PCT_8H } from './funding-check.ts';
import { checkPrices } from './price-check.ts';
import type { Transport } from './transport.ts';
import { VenueGate } from './venue-gate.ts';

export const DEFAULT_CANDLE_LIMIT = 500;
export const DEFAULT_CONCURRENCY = 8;
export const SIMULATOR_PROVIDER = 'seeded market simulator';

export interface CollectOptions {
  transport: Transport;
  symbols: readonly string[];
  /** The run's clock (ms). */
  asOf: number;
  /** The simulator's seed, recorded in the snapshot; null for live and replay runs. */
  seed: number | null;
  /** Venue calls in flight at once (default 8). */
  concurrency?: number;
  /** Closed hourly bars per symbol (default 500). */
  candleLimit?: number;
  /** Sources per kind of data, in fallback order (default: Binance spot, Binance USDⓈ-M, OKX). */
  plan?: SourcePlan;
  /** Cross-check each price with the other ticker venues; a gap above this percent is an issue (default: no check). */
  priceDisagreementPct?: number | null;
  /**
   * Cross-check each funding rate with the next funding venue; a gap above this many percentage points per 8 h is an
   * issue. Default: FUNDING_DISAGREEMENT_PCT_8H when prices are cross-checked (live and replay runs), else no check.
   */
  fundingDisagreementPct8h?: number | null;
  /** Fill missing liquidations with an estimate from open-interest drops (default false). */
  estimateLiquidations?: boolean;
  signal?: AbortSignal;
}

type SectionResult<S extends SectionName> = {
  values: Map<string, Sourced<SectionValues[S]>>;
  issues: SourceIssue[];
};

export async function collectMarket(options: CollectOptions): Promise<MarketSnapshot> {
  const plan = options.plan ?? DEFAULT_SOURCE_PLAN;
  const symbols = [...new Set(options.symbols)];
  const limit = pLimit(options.concurrency ?? DEFAULT_CONCURRENCY);
  const context: FetchContext = {
    transport: options.transport,
    asOf: options.asOf,
    candleLimit: options.candleLimit ?? DEFAULT_CANDLE_LIMIT,
    signal: options.signal,
    shared: new Map() satisfies SharedResponses,
  };
  const gate = new VenueGate();
  const collect = <S extends SectionName>(section: S): Promise<SectionResult<S>> =>
    collectSection(section, plan[section], symbols, { context, limit, gate });
  const [candles, ticker, book, funding, openInterest, liquidations] = await Promise.all([
    collect('candles'),
    collect('ticker'),
    collect('book'),
    collect('funding'),
    collect('openInterest'),
    collect('liquidations'),
  ]);
  const assets: AssetMarket[] = symbols.map((symbol) => ({
    symbol,
    candles: candles.values.get(symbol) ?? null,
    ticker: ticker.values.get(symbol) ?? null,
    book: book.values.get(symbol) ?? null,
    funding: funding.values.get(symbol) ?? null,
    openInterest: openInterest.values.get(symbol) ?? null,
    liquidations: liquidations.values.get(symbol) ?? null,
  }));
  if (options.estimateLiquidations) fillEstimatedLiquidations(assets, options.asOf);
  const fundingThreshold =
    options.fundingDisagreementPct8h !== undefined
      ? options.fundingDisagreementPct8h
      : options.priceDisagreementPct == null
        ? null
        : FUNDING_DISAGREEMENT_PCT_8H;
  // Both checks at once: they ask different kinds of venue, within the same deadline.
  const [priceCheck, fundingIssues] = await Promise.all([
    options.priceDisagreementPct == null
      ? null
      : checkPrices(assets, {
          sources: plan.ticker,
          context,
          gate,
          thresholdPct: options.priceDisagreementPct,
          run: limit,
        }),
    fundingThreshold === null
      ? []
      : checkFunding(assets, {
          sources: plan.funding,
          context,
          gate,
          thresholdPct8h: fundingThreshold,
          run: limit,
        }),
  ]);
  // An outlier price that two other venues contradicted is set aside for theirs (its issue says so), and so are that
  // venue's candles and book of the asset: a venue wrong about the price level is wrong about levels and depth too.
  const outliers = new Map<string, string>();
  for (const asset of assets) {
    const replacement = priceCheck?.replacements.get(asset.symbol);
    if (!replacement || !asset.ticker) continue;
    outliers.set(asset.symbol, asset.ticker.provenance.venue);
    asset.ticker = replacement;
  }
  const outlierIssues = await recollectWithout(outliers, assets, plan, { context, limit, gate });
  const results = { candles, ticker, book, funding, openInterest, liquidations };
  return {
    asOf: options.asOf,
    mode: options.transport.mode,
    seed: options.seed,
    provider: describeProvider(options.transport.mode, plan),
    assets,
    issues: [
      ...gate.issues(),
      ...SECTION_NAMES.flatMap((section) => results[section].issues),
      ...(priceCheck?.issues ?? []),
      ...fundingIssues,
      ...outlierIssues,
    ],
  };
}

/**
 * For each asset whose price was set aside (symbol -> the outlier venue), its candles and book from that venue are
 * asked of the plan's other venues, as after a failure: the replacement or nothing, with an issue saying why.
 */
async function recollectWithout(
  outliers: ReadonlyMap<string, string>,
  assets: AssetMarket[],
  plan: SourcePlan,
  run: RunState,
): Promise<SourceIssue[]> {
  const issues: SourceIssue[] = [];
  for (const asset of assets) {
    const venue = outliers.get(asset.symbol);
    if (!venue) continue;
    /** The section asked of the other venues; what it got, with an issue saying why it was asked again. */
    const again = async <S extends 'candles' | 'book'>(section: S) => {
      const others = plan[section].filter((source) => source.venue !== venue);
      const result = await collectSection(section, others, [asset.symbol], run);
      const value = result.values.get(asset.symbol) ?? null;
      const from = value ? `taken from ${value.provenance.venue}` : 'no other venue had them';
      issues.push(
        {
          venue,
          symbol: asset.symbol,
          section,
          message: `${section === 'book' ? 'order book' : 'candles'} of ${venue} left out: its price was set aside as an outlier; ${from}`,
        },
        ...result.issues,
      );
      return value;
    };
    if (asset.candles?.provenance.venue === venue) asset.candles = await again('candles');
    if (asset.book?.provenance.venue === venue) asset.book = await again('book');
  }
  return issues;
}

/** The failure that left liquidations empty stays in the issues; the estimate says it is one. */
function fillEstimatedLiquidations(assets: AssetMarket[], asOf: number): void {
  for (const asset of assets) {
    if (asset.liquidations || !asset.openInterest) continue;
    asset.liquidations = estimateLiquidations(asset.openInterest, asset.candles?.value ?? [], asOf);
  }
}

/** The simulator answering the default plan: the embedded, offline default source. */
export function collectSimulatedMarket(options: {
  seed: number;
  asOf: number;
  symbols: readonly string[];
  candleLimit?: number;
  concurrency?: number;
}): Promise<MarketSnapshot> {
  const { seed, asOf, symbols } = options;
  const transport = createSimulatedTransport({ seed, asOf, symbols, listings: 'with-gaps' });
  return collectMarket({ ...options, transport, seed, plan: SIMULATED_RUN_PLAN });
}

function describeProvider(mode: Transport['mode'], plan: SourcePlan): string {
  const venues = planVenues(plan).join(', ');
  if (mode === 'simulated') return SIMULATOR_PROVIDER;
  return mode === 'live' ? `public venues (${venues})` : `recorded responses of public venues (${venues})`;
}

interface RunState {
  context: FetchContext;
  limit: LimitFunction;
  gate: VenueGate;
}

/**
 * One kind of data for every symbol: each source in turn gets the symbols still missing, in batches of its size.
 * A value whose venue time does not describe the run's as-of is a failed attempt. Issues are kept only for symbols
 * that end without data (one per failed attempt), in symbol order.
 */
async function collectSection<S extends SectionName>(
  section: S,
  sources: readonly SectionSource<S>[],
  symbols: readonly string[],
  run: RunState,
): Promise<SectionResult<S>> {
  const values = new Map<string, Sourced<SectionValues[S]>>();
  const failures = new Map<string, SourceIssue[]>(symbols.map((symbol) => [symbol, []]));
  let pending = symbols;
  for (const source of sources) {
    if (pending.length === 0) break;
    const batches = inBatches(pending, source.batchSize);
    const outcomes = await Promise.all(batches.map((batch) => run.limit(() => attempt(source, batch, run))));
    batches.forEach((batch, b) => {
      const outcome = outcomes[b];
      for (const symbol of batch) {
        const value = outcome?.values?.get(symbol);
        // Old (or later) data is not current data: the next venue is asked, as after a failure.
        const late = value ? timeProblem(section, value.provenance, run.context.asOf) : null;
        if (value && late === null) values.set(symbol, value);
        else {
          const message =
            late ??
            outcome?.error ??
            outcome?.values?.reasons?.get(symbol) ??
            'the venue returned no data for this symbol';
          failures.get(symbol)?.push({ venue: source.venue, symbol, section, message });
        }
      }
    });
    pending = pending.filter((symbol) => !values.has(symbol));
  }
  const issues = pending.flatMap((symbol) => {
    const attempts = failures.get(symbol) ?? [];
    return attempts.length > 0
      ? attempts
      : [{ venue: 'none', symbol, section, message: 'no source is configured for this kind of data' }];
  });
  return { values, issues };
}

async function attempt<S extends SectionName>(
  source: SectionSource<S>,
  batch: readonly string[],
  { context, gate }: RunState,
): Promise<{ values: SectionAnswer<S> | null; error: string | null }> {
  // Checked when the call's turn comes, so calls queued before a refusal are skipped too.
  if (gate.isUnavailable(source.venue)) return { values: null, error: gate.skipMessage(source.venue) };
  try {
    return { values: await source.fetch(batch, context), error: null };
  } catch (error) {
    gate.observe(source.venue, error);
    return { values: null, error: error instanceof Error ? error.message : String(error) };
  }
}
