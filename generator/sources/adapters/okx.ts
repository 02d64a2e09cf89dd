// OKX v5: filled liquidation orders of the USDT swaps (the only keyless REST feed of liquidations). Raw shape as
// documented by OKX, a pure normaliser into the market types, and the source the collector calls.
import { z } from 'zod';
import type { Liquidations } from '../../market/types.ts';
import { okxContractValue, okxUnderlying, VENUE_BASE_URLS } from '../venues.ts';
import { DecimalString, fetchParsed, MsTime, SourceError } from './request.ts';
import { perSymbolSource, sourced } from './source.ts';

const VENUE = 'okx';
const BASE_URL = VENUE_BASE_URLS[VENUE];
const DAY_MS = 86_400_000;
const PAGE_SIZE = 100;
/** Enough for a busy day; a day with more forced closes than this is counted from its latest orders only. */
const MAX_PAGES = 5;

// ---- raw shapes -------------------------------------------------------------------------------------------------

export const OkxLiquidationDetail = z.object({
  side: z.enum(['buy', 'sell']), // the liquidation order's side
  posSide: z.string(), // "long" | "short", or "net" in one-way mode
  bkPx: DecimalString, // bankruptcy price, USDT
  sz: DecimalString, // contracts
  ts: MsTime,
});
export type OkxLiquidationDetail = z.infer<typeof OkxLiquidationDetail>;

export const OkxLiquidationOrders = z.object({
  code: z.string(),
  msg: z.string(),
  data: z.array(
    z.object({
      instId: z.string().optional(),
      uly: z.string().optional(),
      details: z.array(OkxLiquidationDetail),
    }),
  ),
});
export type OkxLiquidationOrders = z.infer<typeof OkxLiquidationOrders>;

// ---- normalisers --------------------------------------------------------------------------------------------------

/** The position that was closed: a long is liquidated by a sell order, a short by a buy. */
export const liquidatedPosition = (detail: OkxLiquidationDetail): 'long' | 'short' =>
  detail.posSide === 'long' || detail.posSide === 'short'
    ? detail.posSide
    : detail.side === 'sell'
      ? 'long'
      : 'short';

/** The 24 h ending at `asOf`, in USD: contracts x coins per contract x bankruptcy price. */
export function normaliseLiquidations(
  details: readonly OkxLiquidationDetail[],
  contractValue: number,
  asOf: number,
): Liquidations {
  const totals = { longUsd24h: 0, shortUsd24h: 0, events: 0 };
  for (const detail of details) {
    const time = Number(detail.ts);
    if (time <= asOf - DAY_MS || time > asOf) continue;
    const usd = Number(detail.sz) * contractValue * Number(detail.bkPx);
    if (liquidatedPosition(detail) === 'long') totals.longUsd24h += usd;
    else totals.shortUsd24h += usd;
    totals.events += 1;
  }
  return totals;
}

/** OKX reports failures inside its envelope: a non-zero code. */
function unwrap(raw: OkxLiquidationOrders): OkxLiquidationDetail[] {
  if (raw.code !== '0') throw new SourceError(`OKX error ${raw.code}: ${raw.msg}`);
  return raw.data.flatMap((entry) => entry.details);
}

// ---- sources ------------------------------------------------------------------------------------------------------

export const okxLiquidations = perSymbolSource<'liquidations'>(VENUE, async (symbol, context) => {
  const base = `${BASE_URL}/api/v5/public/liquidation-orders?instType=SWAP&uly=${okxUnderlying(symbol)}&state=filled`;
  const details: OkxLiquidationDetail[] = [];
  let after: number | null = null;
  // Newest first, one page at a time, until the page reaches back a full day.
  for (let page = 0; page < MAX_PAGES; page++) {
    const url = `${base}&limit=${PAGE_SIZE}${after === null ? '' : `&after=${after}`}`;
    const pageDetails = unwrap(
      await fetchParsed(context.transport, url, OkxLiquidationOrders, context.signal),
    );
    details.push(...pageDetails);
    const oldest = Math.min(...pageDetails.map((detail) => Number(detail.ts)));
    if (pageDetails.length < PAGE_SIZE || oldest <= context.asOf - DAY_MS) break;
    after = oldest;
  }
  const value = normaliseLiquidations(details, okxContractValue(symbol), context.asOf);
  return sourced(value, VENUE, context.asOf, context);
});
