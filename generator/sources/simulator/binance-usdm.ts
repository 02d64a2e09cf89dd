// The simulated market in Binance USDⓈ-M futures' JSON: premium index, funding history and open-interest history.
import { HOUR_MS } from './market-model.ts';
import type { SimulatedMarket } from './market-model.ts';
import { BINANCE_USDM_UNLISTED } from './listings.ts';
import { binanceError, binanceInvalidSymbol, binanceSymbolParam, fixed8, intParam, ok } from './reply.ts';
import type { SimContext, SimReply } from './reply.ts';
import type { SimHandler } from './reply.ts';

/** The rate charged at one settlement, per the contract's own interval (not per 8 h). */
function settledRate(market: SimulatedMarket, symbol: string, settlementTime: number): number {
  const intervalHours = market.params(symbol).fundingIntervalHours;
  return (market.funding8h(symbol, settlementTime / HOUR_MS - 1) * intervalHours) / 8;
}

const markPriceAt = (market: SimulatedMarket, symbol: string, time: number): number =>
  market.priceAt(symbol, time) * (1 + market.basis(symbol, Math.floor(time / HOUR_MS)));

/** `/fapi/v1/premiumIndex?symbol=X`. */
const premiumIndex: SimHandler = (query, context) => {
  const { market } = context;
  const base = usdmSymbol(query, context);
  if (typeof base !== 'string') return base;
  const intervalMs = market.params(base).fundingIntervalHours * HOUR_MS;
  const index = market.priceAt(base, market.asOf);
  const current = (market.funding8h(base, market.currentHour) * intervalMs) / (8 * HOUR_MS);
  return ok({
    symbol: `${base}USDT`,
    markPrice: fixed8(markPriceAt(market, base, market.asOf)),
    indexPrice: fixed8(index),
    estimatedSettlePrice: fixed8(index),
    lastFundingRate: fixed8(current),
    interestRate: '0.00010000',
    nextFundingTime: (Math.floor(market.asOf / intervalMs) + 1) * intervalMs,
    time: market.asOf,
  });
};

/** `/fapi/v1/fundingRate?symbol=X&limit=N[&startTime=T][&endTime=T]`: settlements, oldest first. */
const fundingRate: SimHandler = (query, context) => {
  const { market } = context;
  const base = usdmSymbol(query, context);
  if (typeof base !== 'string') return base;
  const limit = intParam(query, 'limit', 100, 1000);
  const start = optionalTime(query.get('startTime'));
  const end = Math.min(optionalTime(query.get('endTime')) ?? market.asOf, market.asOf);
  if (limit === null || Number.isNaN(start) || Number.isNaN(end)) {
    return binanceError(-1100, 'Illegal characters found in a parameter.');
  }
  const intervalMs = market.params(base).fundingIntervalHours * HOUR_MS;
  const latest = Math.floor(end / intervalMs) * intervalMs;
  const first =
    start === null ? latest - (limit - 1) * intervalMs : Math.ceil(start / intervalMs) * intervalMs;
  const rows = [];
  for (let time = first; time <= latest && rows.length < limit; time += intervalMs) {
    rows.push({
      symbol: `${base}USDT`,
      fundingTime: time,
      fundingRate: fixed8(settledRate(market, base, time)),
      markPrice: fixed8(markPriceAt(market, base, time)),
    });
  }
  return ok(rows);
};

/** `/futures/data/openInterestHist?symbol=X&period=1h&limit=N`: hourly, oldest first (only 1h is simulated). */
const openInterestHist: SimHandler = (query, context) => {
  const { market } = context;
  const base = usdmSymbol(query, context);
  if (typeof base !== 'string') return base;
  if (query.get('period') !== '1h')
    return binanceError(-1130, "Data sent for parameter 'period' is not valid.");
  const limit = intParam(query, 'limit', 30, 500);
  if (limit === null) return binanceError(-1130, "Data sent for parameter 'limit' is not valid.");
  const rows = [];
  for (let hour = market.currentHour - limit + 1; hour <= market.currentHour; hour++) {
    const valueUsd = market.openInterestUsd(base, hour);
    rows.push({
      symbol: `${base}USDT`,
      sumOpenInterest: fixed8(valueUsd / market.priceAt(base, hour * HOUR_MS)),
      sumOpenInterestValue: fixed8(valueUsd),
      timestamp: hour * HOUR_MS,
    });
  }
  return ok(rows);
};

/** The tracked symbol behind `?symbol=` when this venue (simulated) lists its perpetual, or Binance's error. */
function usdmSymbol(query: URLSearchParams, { universe, gaps }: SimContext): string | SimReply {
  const base = binanceSymbolParam(query, universe);
  return gaps && typeof base === 'string' && BINANCE_USDM_UNLISTED.has(base) ? binanceInvalidSymbol() : base;
}

/** null when absent, NaN when malformed. */
function optionalTime(raw: string | null): number | null {
  if (raw === null) return null;
  return /^\d+$/.test(raw) ? Number(raw) : NaN;
}

export const BINANCE_USDM_ROUTES: Readonly<Record<string, SimHandler>> = {
  '/fapi/v1/premiumIndex': premiumIndex,
  '/fapi/v1/fundingRate': fundingRate,
  '/futures/data/openInterestHist': openInterestHist,
};
