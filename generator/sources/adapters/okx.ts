// OKX v5 USDT swaps: filled liquidation orders (the only keyless REST feed of liquidations), funding and open
// interest. Raw shapes as documented by OKX, pure normalisers into the market types, and the collector's sources.
import * as z from 'zod';
import type { Funding, Liquidations, OpenInterest } from '../../market/types.ts';
import type { VenueDescriptor } from '../venue-descriptor.ts';
import { per8h, settledHistory } from './funding.ts';
import {
  compiledOnFirstUse,
  Decimal,
  DecimalString,
  MsTime,
  OptionalDecimal,
  parseRaw,
  SourceError,
  venueCalls,
} from './request.ts';
import { amountProblem, refusal } from './price-checks.ts';
import type { FetchContext } from './source.ts';
import { callTime, perSymbolSource, sourced } from './source.ts';
import type { VenueErrors } from './venue-errors.ts';

const VENUE = 'okx';
const BASE_URL = 'https://www.okx.com';

/** OKX names the underlying of a USDT swap with a dash: BTC -> BTC-USDT (the instrument is BTC-USDT-SWAP). */
export const okxUnderlying = (symbol: string): string => `${symbol}-USDT`;
export const okxSwap = (symbol: string): string => `${okxUnderlying(symbol)}-SWAP`;

/**
 * Coins per contract of OKX's USDT swaps (the instruments endpoint's `ctVal`), needed because OKX reports
 * liquidation sizes in contracts. Values as listed by OKX for these swaps; runs read them from
 * `/api/v5/public/instruments?instType=SWAP` and fall back to this table only when that list cannot be had. Any other
 * coin (the synthetic benchmark symbols) counts 1 coin.
 */
const OKX_CONTRACT_VALUES: Readonly<Record<string, number>> = {
  BTC: 0.01,
  ETH: 0.1,
  XRP: 100,
  SOL: 1,
  ALGO: 10,
  XLM: 100,
  HBAR: 100,
};

export const okxContractValue = (symbol: string): number => OKX_CONTRACT_VALUES[symbol] ?? 1;

/** `{code: "51001", msg, data: []}` (code a string, "0" when fine), over HTTP 200 or 4xx; 50011 is its rate limit. */
const ERRORS: VenueErrors = {
  envelope: (body) =>
    (typeof body.code === 'string' && body.code !== '0') || typeof body.code === 'number'
      ? { code: String(body.code), message: String(body.msg ?? '') }
      : null,
  rateLimitCodes: ['50011'],
};
const calls = venueCalls('OKX', ERRORS);
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const PAGE_SIZE = 100;
const INSTRUMENTS_URL = `${BASE_URL}/api/v5/public/instruments?instType=SWAP`;
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
const LIQUIDATION_ROWS = compiledOnFirstUse(OkxLiquidationOrders);

const envelope = <T extends z.ZodType>(row: T) =>
  z.object({ code: z.string(), msg: z.string(), data: z.array(row) });

/** `/api/v5/public/funding-rate`: the rate of the period settling at `fundingTime`, per that period. */
export const OkxFundingRateRow = z.object({
  instId: z.string(),
  fundingRate: DecimalString,
  fundingTime: MsTime,
  nextFundingTime: MsTime,
  ts: MsTime,
});
export type OkxFundingRateRow = z.infer<typeof OkxFundingRateRow>;
export const OkxFundingRate = envelope(OkxFundingRateRow);

/**
 * `/api/v5/public/funding-rate-history`, newest first. `realizedRate` is the rate actually settled; `fundingRate`
 * is the rate predicted before the settlement (they differ: 0.0001515032 predicted, 0.00015 realised).
 */
export const OkxFundingHistoryRow = z.object({
  fundingRate: DecimalString,
  realizedRate: OptionalDecimal,
  fundingTime: MsTime,
});
export type OkxFundingHistoryRow = z.infer<typeof OkxFundingHistoryRow>;
export const OkxFundingHistory = envelope(OkxFundingHistoryRow);
const FUNDING_HISTORY_ROWS = compiledOnFirstUse(OkxFundingHistory);

/** `/api/v5/public/open-interest`: oi in contracts, oiCcy in coins, oiUsd in USD. */
export const OkxOpenInterestRow = z.object({
  instId: z.string(),
  oi: DecimalString,
  oiCcy: DecimalString,
  oiUsd: DecimalString,
  ts: MsTime,
});
export type OkxOpenInterestRow = z.infer<typeof OkxOpenInterestRow>;
export const OkxOpenInterest = envelope(OkxOpenInterestRow);

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

/**
 * The orders, or a SourceError naming the first whose bankruptcy price or size is not above zero: it would add a
 * zero or negative amount to the day's totals, and a venue sending one is not trusted for the rest (price-checks.ts).
 */
export function checkedLiquidations(
  instrument: string,
  details: readonly OkxLiquidationDetail[],
): OkxLiquidationDetail[] {
  for (const detail of details) {
    const problem = amountProblem('bkPx', Number(detail.bkPx)) ?? amountProblem('sz', Number(detail.sz));
    if (problem !== null) {
      const at = new Date(Number(detail.ts)).toISOString();
      throw refusal({ venue: VENUE, instrument }, 'liquidations', `the order of ${at}: ${problem}`);
    }
  }
  return [...details];
}

/** OKX reports failures inside its envelope: a non-zero code (50011 is its rate limit), message kept. */
function unwrap<T>(raw: { code: string; msg: string; data: T[] }): T[] {
  if (raw.code !== '0') throw calls.envelopeFailure(raw.code, raw.msg);
  return raw.data;
}

/** `/api/v5/public/instruments?instType=SWAP`: coins per contract (`ctVal`) and the trading state. */
export const OkxInstrument = z.object({
  instId: z.string(),
  ctVal: Decimal,
  ctValCcy: z.string().optional(),
  state: z.string(), // "live", "suspend", "preopen", "test"
});
export type OkxInstrument = z.infer<typeof OkxInstrument>;
export const OkxInstruments = envelope(z.unknown());

/** Coins per contract of a swap, read from the venue; a suspended swap is unavailable (its sizes mean nothing now). */
export function contractValueOf(instrument: OkxInstrument): number {
  if (instrument.state !== 'live')
    throw new SourceError(`${instrument.instId} is ${instrument.state}: not available`);
  const value = Number(instrument.ctVal);
  if (!(value > 0)) throw new SourceError(`${instrument.instId} has no contract value`);
  return value;
}

/** The current rate per its own period (`nextFundingTime - fundingTime`), normalised to 8 h like the history. */
export function normaliseFunding(
  current: OkxFundingRateRow,
  history: readonly OkxFundingHistoryRow[],
): Funding {
  const { history8h, historyTimes, latestIntervalHours } = settledHistory(
    // The settled rate where OKX states it; older rows without `realizedRate` settled at their `fundingRate`.
    history.map((row) => ({
      time: Number(row.fundingTime),
      rate: Number(row.realizedRate ?? row.fundingRate),
    })),
  );
  const period = Math.round((Number(current.nextFundingTime) - Number(current.fundingTime)) / HOUR_MS);
  const intervalHours = period >= 1 && period <= 8 ? period : (latestIntervalHours ?? 8);
  return {
    rate8h: per8h(Number(current.fundingRate), intervalHours),
    rateKind: 'predicted', // the running period's rate, not yet settled
    intervalHours,
    markPrice: null,
    indexPrice: null,
    history8h,
    historyTimes,
  };
}

/**
 * OKX's public REST gives current open interest only: a one-point history (no 24 h change can be read). A USD value
 * not above zero is refused (price-checks.ts), not published as the swap's open interest.
 */
export function normaliseOpenInterest(row: OkxOpenInterestRow): OpenInterest {
  const valueUsd = Number(row.oiUsd);
  const problem = amountProblem('oiUsd', valueUsd);
  if (problem !== null) throw refusal({ venue: VENUE, instrument: row.instId }, 'open interest', problem);
  return { valueUsd, history: [{ time: Number(row.ts), valueUsd }] };
}

// ---- sources ------------------------------------------------------------------------------------------------------

export const okxLiquidations = perSymbolSource<'liquidations'>(VENUE, async (symbol, context) => {
  const base = `${BASE_URL}/api/v5/public/liquidation-orders?instType=SWAP&uly=${okxUnderlying(symbol)}&state=filled`;
  const details: OkxLiquidationDetail[] = [];
  let after: number | null = null;
  // Newest first, one page at a time, until the page reaches back a full day.
  for (let page = 0; page < MAX_PAGES; page++) {
    const url = `${base}&limit=${PAGE_SIZE}${after === null ? '' : `&after=${after}`}`;
    const pageDetails = unwrap(await calls.parsed(context, url, LIQUIDATION_ROWS)).flatMap(
      (entry) => entry.details,
    );
    details.push(...pageDetails);
    const oldest = Math.min(...pageDetails.map((detail) => Number(detail.ts)));
    if (pageDetails.length < PAGE_SIZE || oldest <= context.asOf - DAY_MS) break;
    after = oldest;
  }
  const checked = checkedLiquidations(okxSwap(symbol), details);
  const value = normaliseLiquidations(checked, await contractValue(symbol, context), context.asOf);
  return sourced(value, VENUE, callTime(context), context);
});

/**
 * The swap's `ctVal` from the instruments list (one shared call per run, entries parsed one by one). When the list
 * cannot be had at all, the values OKX listed for these swaps (above) stand in; a swap the list shows suspended or
 * lacks is unavailable.
 */
async function contractValue(symbol: string, context: FetchContext): Promise<number> {
  let data: unknown[];
  try {
    data = unwrap(await calls.shared(context, INSTRUMENTS_URL, OkxInstruments));
  } catch {
    return okxContractValue(symbol);
  }
  const instId = okxSwap(symbol);
  const raw = data.find((row) => (row as { instId?: unknown } | null)?.instId === instId);
  if (raw === undefined) throw new SourceError(`${instId} is not listed (delisted?): not available`);
  return contractValueOf(parseRaw(OkxInstrument, raw));
}

const firstRow = <T>(rows: T[], what: string): T => {
  const row = rows[0];
  if (row === undefined) throw new SourceError(`no ${what} in the response`);
  return row;
};

export const okxFunding = perSymbolSource<'funding'>(VENUE, async (symbol, context) => {
  const instId = okxSwap(symbol);
  const [current, history] = await Promise.all([
    calls.parsed(context, `${BASE_URL}/api/v5/public/funding-rate?instId=${instId}`, OkxFundingRate),
    calls.parsed(
      context,
      `${BASE_URL}/api/v5/public/funding-rate-history?instId=${instId}&limit=100`,
      FUNDING_HISTORY_ROWS,
    ),
  ]);
  const row = firstRow(unwrap(current), 'funding rate');
  return sourced(normaliseFunding(row, unwrap(history)), VENUE, Number(row.ts), context);
});

export const okxOpenInterest = perSymbolSource<'openInterest'>(VENUE, async (symbol, context) => {
  const url = `${BASE_URL}/api/v5/public/open-interest?instType=SWAP&instId=${okxSwap(symbol)}`;
  const row = firstRow(unwrap(await calls.parsed(context, url, OkxOpenInterest)), 'open interest');
  return sourced(normaliseOpenInterest(row), VENUE, Number(row.ts), context);
});

export const OKX: VenueDescriptor<'okx'> = {
  id: VENUE,
  name: 'OKX',
  baseUrl: BASE_URL,
  method: 'GET',
  requestsPerSecond: 8,
  errors: ERRORS,
  instrument: okxSwap,
  // The only keyless REST feed of liquidations; funding and open interest without an hourly history: third.
  serves: {
    funding: { source: okxFunding, rank: 3 },
    openInterest: { source: okxOpenInterest, rank: 3 },
    liquidations: { source: okxLiquidations, rank: 1 },
  },
};
