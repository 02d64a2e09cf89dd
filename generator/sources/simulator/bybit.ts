// The simulated market in Bybit v5's JSON (linear USDT contracts): the tickers list with its documented oddities
// (dated futures with empty funding fields, a halted contract with empty prices), funding history and open-interest
// history (both sides in `openInterest`, one side in `singleOpenInterest`), errors in the retCode envelope over 200.
import { HOUR_MS } from './market-model.ts';
import type { SimulatedMarket } from './market-model.ts';
import { BYBIT_DATED_FUTURES, BYBIT_HALTED, BYBIT_UNLISTED } from './listings.ts';
import { fixed8, intParam, ok } from './reply.ts';
import type { SimContext, SimHandler, SimReply } from './reply.ts';

const envelope = (result: object, time: number): SimReply =>
  ok({ retCode: 0, retMsg: 'OK', result, retExtInfo: {}, time });

/** Bybit's parameter errors come over HTTP 200 with a non-zero retCode. */
const bybitError = (retCode: number, retMsg: string): SimReply =>
  ok({ retCode, retMsg, result: {}, retExtInfo: {}, time: 0 });

const listed = (symbol: string, { universe, gaps }: SimContext): boolean =>
  universe.has(symbol) && !(gaps && BYBIT_UNLISTED.has(symbol));

/** BTCUSDT -> BTC when Bybit (simulated) lists a perpetual for it. */
function symbolParam(query: URLSearchParams, context: SimContext): string | SimReply {
  if (query.get('category') !== 'linear') return bybitError(10001, 'params error: category invalid');
  const instrument = query.get('symbol') ?? '';
  const base = instrument.endsWith('USDT') ? instrument.slice(0, -4) : '';
  return listed(base, context) ? base : bybitError(10001, 'params error: symbol invalid');
}

const markAt = (market: SimulatedMarket, symbol: string, time: number): number =>
  market.priceAt(symbol, time) * (1 + market.basis(symbol, Math.floor(time / HOUR_MS)));

/** The rate of one interval, per that interval. */
const perInterval = (market: SimulatedMarket, symbol: string, hour: number): number =>
  (market.funding8h(symbol, hour) * market.params(symbol).fundingIntervalHours) / 8;

function perpetualRow(market: SimulatedMarket, symbol: string): Record<string, string> {
  const interval = market.params(symbol).fundingIntervalHours;
  const intervalMs = interval * HOUR_MS;
  const last = market.priceAt(symbol, market.asOf);
  const dayAgo = market.priceAt(symbol, market.asOf - 24 * HOUR_MS);
  const mark = markAt(market, symbol, market.asOf);
  const oneSidedUsd = market.openInterestUsd(symbol, market.currentHour);
  return {
    symbol: `${symbol}USDT`,
    lastPrice: fixed8(last),
    indexPrice: fixed8(last),
    markPrice: fixed8(mark),
    prevPrice24h: fixed8(dayAgo),
    price24hPcnt: (last / dayAgo - 1).toFixed(6), // a fraction
    openInterest: fixed8((2 * oneSidedUsd) / mark), // both sides, coins
    openInterestValue: (2 * oneSidedUsd).toFixed(2), // both sides, USDT
    fundingRate: perInterval(market, symbol, market.currentHour).toFixed(8),
    nextFundingTime: String((Math.floor(market.asOf / intervalMs) + 1) * intervalMs),
    fundingIntervalHour: String(interval),
    predictedDeliveryPrice: '',
    deliveryTime: '0',
    curPreListingPhase: '',
  };
}

/** A halted contract: listed, but every price and funding field empty (as in pre-listing or suspension). */
const haltedRow = (symbol: string): Record<string, string> => ({
  symbol: `${symbol}USDT`,
  lastPrice: '',
  indexPrice: '',
  markPrice: '',
  prevPrice24h: '',
  price24hPcnt: '',
  openInterest: '',
  openInterestValue: '',
  fundingRate: '',
  nextFundingTime: '',
  fundingIntervalHour: '8',
  curPreListingPhase: '',
});

/** A dated future in the linear list: prices, but `fundingRate` and `nextFundingTime` empty (no funding). */
function datedFutureRow(market: SimulatedMarket, symbol: string): Record<string, string> {
  const price = market.priceAt(symbol, market.asOf);
  return {
    symbol: `${symbol}USDT-26DEC26`,
    lastPrice: fixed8(price),
    indexPrice: fixed8(price),
    markPrice: fixed8(price * 1.01),
    prevPrice24h: fixed8(price),
    price24hPcnt: '0',
    openInterest: '6.622',
    openInterestValue: fixed8(6.622 * price),
    fundingRate: '',
    nextFundingTime: '',
    deliveryTime: '2026-12-26T08:00:00Z',
    basisRate: '0.01',
  };
}

/** `/v5/market/tickers?category=linear`: every linear contract, perpetuals and dated futures mixed. */
const tickers: SimHandler = (query, context) => {
  if (query.get('category') !== 'linear') return bybitError(10001, 'params error: category invalid');
  const { market, universe } = context;
  const list = [...universe]
    .filter((symbol) => listed(symbol, context))
    .flatMap((symbol) => [
      context.gaps && BYBIT_HALTED.has(symbol) ? haltedRow(symbol) : perpetualRow(market, symbol),
      ...(BYBIT_DATED_FUTURES.includes(symbol) ? [datedFutureRow(market, symbol)] : []),
    ]);
  return envelope({ category: 'linear', list }, market.asOf);
};

/** `/v5/market/funding/history?category=linear&symbol=X&limit=N`: settled rates, newest first, times as strings. */
const fundingHistory: SimHandler = (query, context) => {
  const base = symbolParam(query, context);
  if (typeof base !== 'string') return base;
  const limit = intParam(query, 'limit', 200, 200);
  if (limit === null) return bybitError(10001, 'params error: limit invalid');
  const { market } = context;
  const intervalMs = market.params(base).fundingIntervalHours * HOUR_MS;
  const latest = Math.floor(market.asOf / intervalMs) * intervalMs;
  const list = Array.from({ length: limit }, (_, i) => latest - i * intervalMs).map((time) => ({
    symbol: `${base}USDT`,
    fundingRate: perInterval(market, base, time / HOUR_MS - 1).toFixed(8),
    fundingRateTimestamp: String(time),
  }));
  return envelope({ category: 'linear', list }, market.asOf);
};

/** `/v5/market/open-interest?category=linear&symbol=X&intervalTime=1h&limit=N`: hourly, newest first. */
const openInterest: SimHandler = (query, context) => {
  const base = symbolParam(query, context);
  if (typeof base !== 'string') return base;
  if (query.get('intervalTime') !== '1h') return bybitError(10001, 'params error: intervalTime invalid');
  const limit = intParam(query, 'limit', 50, 200);
  if (limit === null) return bybitError(10001, 'params error: limit invalid');
  const { market } = context;
  const mark = markAt(market, base, market.asOf);
  const list = Array.from({ length: limit }, (_, i) => market.currentHour - i).map((hour) => {
    const coins = market.openInterestUsd(base, hour) / mark;
    return {
      openInterest: fixed8(2 * coins), // both sides
      singleOpenInterest: fixed8(coins),
      timestamp: String(hour * HOUR_MS),
    };
  });
  return envelope({ symbol: `${base}USDT`, category: 'linear', list, nextPageCursor: '' }, market.asOf);
};

export const BYBIT_ROUTES: Readonly<Record<string, SimHandler>> = {
  '/v5/market/tickers': tickers,
  '/v5/market/funding/history': fundingHistory,
  '/v5/market/open-interest': openInterest,
};
