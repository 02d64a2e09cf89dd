// Hyperliquid perpetuals: one POST /info {"type":"metaAndAssetCtxs"} answers every coin (hourly funding, open
// interest in coins, mark and oracle prices); {"type":"fundingHistory"} adds past hourly rates per coin.
import { z } from 'zod';
import type { Funding, OpenInterest, Sourced } from '../../market/types.ts';
import type { TransportRequest } from '../transport.ts';
import { VENUE_BASE_URLS } from '../venues.ts';
import { per8h } from './funding.ts';
import { DecimalString, fetchParsed, fetchShared, positiveOrNull, SourceError } from './request.ts';
import type { FetchContext, SectionSource, SectionValues } from './source.ts';
import { perSymbolSource, sourced } from './source.ts';

const VENUE = 'hyperliquid';
const INFO_URL = `${VENUE_BASE_URLS[VENUE]}/info`;
const HOUR_MS = 3_600_000;
/** Hyperliquid settles funding every hour. */
const INTERVAL_HOURS = 1;
/** fundingHistory answers at most 500 rows: 20 days of hourly rates. */
const HISTORY_HOURS = 480;

const info = (body: object): TransportRequest => ({
  url: INFO_URL,
  method: 'POST',
  body: JSON.stringify(body),
});
export const META_AND_ASSET_CTXS = info({ type: 'metaAndAssetCtxs' });

// ---- raw shapes -------------------------------------------------------------------------------------------------

export const HyperliquidAssetCtx = z.object({
  funding: DecimalString, // per hour
  openInterest: DecimalString, // coins
  markPx: DecimalString,
  oraclePx: DecimalString,
  prevDayPx: DecimalString,
  dayNtlVlm: DecimalString,
});
export type HyperliquidAssetCtx = z.infer<typeof HyperliquidAssetCtx>;

/** [meta, contexts]: the i-th context belongs to the i-th coin of `meta.universe`. */
export const HyperliquidMetaAndAssetCtxs = z.tuple([
  z.object({ universe: z.array(z.object({ name: z.string() })) }),
  z.array(HyperliquidAssetCtx),
]);

export const HyperliquidFundingRow = z.object({
  coin: z.string(),
  fundingRate: DecimalString,
  time: z.number().int(),
});
export type HyperliquidFundingRow = z.infer<typeof HyperliquidFundingRow>;

// ---- normalisers --------------------------------------------------------------------------------------------------

/** Hourly rates times 8; the oracle price plays the index's part. */
export function normaliseFunding(
  ctx: HyperliquidAssetCtx,
  history: readonly HyperliquidFundingRow[],
): Funding {
  return {
    rate8h: per8h(Number(ctx.funding), INTERVAL_HOURS),
    intervalHours: INTERVAL_HOURS,
    markPrice: positiveOrNull(ctx.markPx),
    indexPrice: positiveOrNull(ctx.oraclePx),
    history8h: [...history]
      .sort((a, b) => a.time - b.time)
      .map((row) => per8h(Number(row.fundingRate), INTERVAL_HOURS)),
  };
}

/** Coins x mark price; the public API has no open-interest history, so one point. */
export function normaliseOpenInterest(ctx: HyperliquidAssetCtx, asOf: number): OpenInterest {
  const valueUsd = Number(ctx.openInterest) * Number(ctx.markPx);
  return { valueUsd, history: [{ time: asOf, valueUsd }] };
}

// ---- sources ------------------------------------------------------------------------------------------------------

async function contextsByCoin(context: FetchContext): Promise<Map<string, HyperliquidAssetCtx>> {
  const [meta, ctxs] = await fetchShared(
    context.shared,
    context.transport,
    META_AND_ASSET_CTXS,
    HyperliquidMetaAndAssetCtxs,
    context.signal,
  );
  if (meta.universe.length !== ctxs.length)
    throw new SourceError('universe and asset contexts differ in length');
  return new Map(meta.universe.map((coin, i) => [coin.name, ctxs[i] as HyperliquidAssetCtx]));
}

function hyperliquidSource<S extends 'funding' | 'openInterest'>(
  load: (
    symbol: string,
    ctx: HyperliquidAssetCtx,
    context: FetchContext,
  ) => Promise<Sourced<SectionValues[S]>>,
): SectionSource<S> {
  return perSymbolSource<S>(VENUE, async (symbol, context) => {
    const ctx = (await contextsByCoin(context)).get(symbol);
    if (!ctx) throw new SourceError(`no perpetual ${symbol} in the universe`);
    return load(symbol, ctx, context);
  });
}

export const hyperliquidFunding = hyperliquidSource<'funding'>(async (symbol, ctx, context) => {
  const startTime = Math.floor(context.asOf / HOUR_MS) * HOUR_MS - HISTORY_HOURS * HOUR_MS;
  const request = info({ type: 'fundingHistory', coin: symbol, startTime });
  const history = await fetchParsed(
    context.transport,
    request,
    z.array(HyperliquidFundingRow),
    context.signal,
  );
  return sourced(normaliseFunding(ctx, history), VENUE, context.asOf, context);
});

export const hyperliquidOpenInterest = hyperliquidSource<'openInterest'>(async (_symbol, ctx, context) =>
  sourced(normaliseOpenInterest(ctx, context.asOf), VENUE, context.asOf, context),
);
