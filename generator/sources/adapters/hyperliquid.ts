// Hyperliquid perpetuals: one POST /info {"type":"metaAndAssetCtxs"} answers every coin (hourly funding, open
// interest in coins, mark and oracle prices); {"type":"fundingHistory"} adds past hourly rates per coin.
import * as z from 'zod';
import type { Funding, OpenInterest, Sourced } from '../../market/types.ts';
import type { TransportRequest } from '../transport.ts';
import type { VenueDescriptor } from '../venue-descriptor.ts';
import { per8h, settledHistory } from './funding.ts';
import {
  Decimal,
  compiledOnFirstUse,
  DecimalString,
  OptionalDecimal,
  parseEntries,
  positiveOrNull,
  SourceError,
  venueCalls,
} from './request.ts';
import type { FetchContext, SectionSource, SectionValues } from './source.ts';
import { callTime, perSymbolSource, sourced } from './source.ts';
import type { VenueErrors } from './venue-errors.ts';

const VENUE = 'hyperliquid';
const BASE_URL = 'https://api.hyperliquid.xyz';
const INFO_URL = `${BASE_URL}/info`;

/** No envelope: a malformed request is an HTTP 422 with a plain-text reason (kept as the message). */
const ERRORS: VenueErrors = { envelope: () => null, rateLimitCodes: [] };
const calls = venueCalls('Hyperliquid', ERRORS);
const HOUR_MS = 3_600_000;
/** Hyperliquid settles funding every hour (every 8 h until June 2023, which its history still shows). */
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

/** One coin's context; `premium`, `midPx` and `impactPxs` may be null (documented), so they are not read. */
export const HyperliquidAssetCtx = z.object({
  funding: Decimal, // per hour, the running hour's predicted rate
  openInterest: Decimal, // coins, one side
  markPx: Decimal,
  oraclePx: Decimal,
  prevDayPx: OptionalDecimal,
  dayNtlVlm: OptionalDecimal,
});
export type HyperliquidAssetCtx = z.infer<typeof HyperliquidAssetCtx>;

/** A coin of the universe; a delisted coin stays listed with `isDelisted: true` and zeros in its context. */
export const HyperliquidCoin = z.object({ name: z.string(), isDelisted: z.boolean().nullish() });

/** [meta, contexts]: the i-th context belongs to the i-th coin of `meta.universe`; contexts are parsed one by one. */
export const HyperliquidMetaAndAssetCtxs = z.tuple([
  z.looseObject({ universe: z.array(HyperliquidCoin) }),
  z.array(z.unknown()),
]);

export const HyperliquidFundingRow = z.object({
  coin: z.string(),
  fundingRate: DecimalString,
  time: z.number().int(),
});
export type HyperliquidFundingRow = z.infer<typeof HyperliquidFundingRow>;
const FUNDING_ROWS = compiledOnFirstUse(z.array(HyperliquidFundingRow));

// ---- normalisers --------------------------------------------------------------------------------------------------

/**
 * The running hour's rate times 8; each settled rate per its own settlement spacing (settledHistory), only those
 * settled by `asOf` (the history answers from its start time on, past a replay's or a backfill's as-of); the oracle
 * price plays the index's part.
 */
export function normaliseFunding(
  ctx: HyperliquidAssetCtx,
  history: readonly HyperliquidFundingRow[],
  asOf: number,
): Funding {
  const settled = history
    .filter((row) => row.time <= asOf)
    .map((row) => ({ time: row.time, rate: Number(row.fundingRate) }));
  const { history8h, historyTimes } = settledHistory(settled, INTERVAL_HOURS);
  return {
    rate8h: per8h(Number(ctx.funding), INTERVAL_HOURS),
    rateKind: 'predicted', // the running period's rate, not yet settled
    intervalHours: INTERVAL_HOURS,
    markPrice: positiveOrNull(ctx.markPx),
    indexPrice: positiveOrNull(ctx.oraclePx),
    history8h,
    historyTimes,
  };
}

/** Coins x mark price; the public API has no open-interest history, so one point. */
export function normaliseOpenInterest(ctx: HyperliquidAssetCtx, asOf: number): OpenInterest {
  const valueUsd = Number(ctx.openInterest) * Number(ctx.markPx);
  if (!(Number(ctx.markPx) > 0)) throw new SourceError('no mark price (halted): not available');
  return { valueUsd, history: [{ time: asOf, valueUsd }] };
}

// ---- sources ------------------------------------------------------------------------------------------------------

async function contextsByCoin(context: FetchContext): Promise<Map<string, HyperliquidAssetCtx | string>> {
  const [meta, ctxs] = await calls.shared(context, META_AND_ASSET_CTXS, HyperliquidMetaAndAssetCtxs);
  if (meta.universe.length !== ctxs.length)
    throw new SourceError('universe and asset contexts differ in length');
  // A delisted coin's zeros are "not available", never zero open interest; a bad context costs its coin only.
  const { good, bad } = parseEntries(
    HyperliquidAssetCtx,
    meta.universe
      .filter((coin) => !coin.isDelisted)
      .map((coin) => [coin.name, ctxs[meta.universe.indexOf(coin)]] as const),
  );
  const delisted = meta.universe
    .filter((coin) => coin.isDelisted)
    .map((coin): [string, string] => [coin.name, `${coin.name} is delisted: not available`]);
  return new Map<string, HyperliquidAssetCtx | string>([...good, ...bad, ...delisted]);
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
    if (ctx === undefined) throw new SourceError(`no perpetual ${symbol} in the universe`);
    if (typeof ctx === 'string') throw new SourceError(ctx);
    return load(symbol, ctx, context);
  });
}

export const hyperliquidFunding = hyperliquidSource<'funding'>(async (symbol, ctx, context) => {
  const startTime = Math.floor(context.asOf / HOUR_MS) * HOUR_MS - HISTORY_HOURS * HOUR_MS;
  const request = info({ type: 'fundingHistory', coin: symbol, startTime });
  const history = await calls.parsed(context, request, FUNDING_ROWS);
  return sourced(normaliseFunding(ctx, history, context.asOf), VENUE, callTime(context), context);
});

export const hyperliquidOpenInterest = hyperliquidSource<'openInterest'>(async (_symbol, ctx, context) =>
  sourced(normaliseOpenInterest(ctx, context.asOf), VENUE, callTime(context), context),
);

export const HYPERLIQUID: VenueDescriptor<'hyperliquid'> = {
  id: VENUE,
  name: 'Hyperliquid',
  baseUrl: BASE_URL,
  method: 'POST',
  errors: ERRORS,
  // Coins by their own name.
  instrument: (symbol) => symbol,
  // No open-interest history; reachable where other venues are geo-blocked: last.
  serves: {
    funding: { source: hyperliquidFunding, rank: 4 },
    openInterest: { source: hyperliquidOpenInterest, rank: 4 },
  },
};
