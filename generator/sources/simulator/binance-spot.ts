// The simulated market in Binance spot's JSON: 24 h tickers, hourly klines and the depth snapshot.
import { dayWindow } from './day-window.ts';
import { HOUR_MS, roundTo } from './market-model.ts';
import type { SimulatedMarket } from './market-model.ts';
import {
  binanceBase,
  binanceError,
  binanceInvalidSymbol,
  binanceMissing,
  binanceSymbolParam,
  fixed8,
  intParam,
  ok,
} from './reply.ts';
import type { SimContext, SimHandler } from './reply.ts';
import { BINANCE_SPOT_UNLISTED } from './listings.ts';

const listedSets = new WeakMap<SimContext, ReadonlySet<string>>();

/**
 * The symbols Binance spot (simulated) lists: all of them, or all but BINANCE_SPOT_UNLISTED in the default run.
 * Built once per simulated market (per request it made large universes quadratic).
 */
function spotUniverse(context: SimContext): ReadonlySet<string> {
  if (!context.gaps) return context.universe;
  let listed = listedSets.get(context);
  if (!listed) {
    listed = new Set([...context.universe].filter((symbol) => !BINANCE_SPOT_UNLISTED.has(symbol)));
    listedSets.set(context, listed);
  }
  return listed;
}

/** `/api/v3/ticker/24hr?symbol=X` (one object) or `?symbols=["X","Y"]` (an array; any unknown symbol fails all). */
const ticker24h: SimHandler = (query, context) => {
  const single = query.get('symbol');
  if (single !== null) {
    const base = binanceBase(single, spotUniverse(context));
    return base ? ok(tickerBody(context.market, base, single)) : binanceInvalidSymbol();
  }
  const list = parseSymbolList(query.get('symbols'));
  if (!list) return binanceMissing('symbols');
  const bases = list.map((instrument) => binanceBase(instrument, spotUniverse(context)));
  if (bases.some((base) => base === null)) return binanceInvalidSymbol();
  return ok(list.map((instrument, i) => tickerBody(context.market, bases[i] ?? '', instrument)));
};

function parseSymbolList(raw: string | null): string[] | null {
  if (raw === null) return null;
  try {
    const parsed: unknown = JSON.parse(raw);
    return Array.isArray(parsed) && parsed.every((s) => typeof s === 'string') && parsed.length > 0
      ? parsed
      : null;
  } catch {
    return null;
  }
}

/** Binance's rolling 24 h window ending at the as-of time. */
function tickerBody(market: SimulatedMarket, symbol: string, instrument: string): Record<string, unknown> {
  const decimals = market.params(symbol).priceDecimals;
  const price = (value: number): string => fixed8(roundTo(value, decimals));
  const {
    openTime,
    open,
    last,
    high,
    low,
    volumeBase: volume,
    quoteVolume,
    trades,
  } = dayWindow(market, symbol);
  const top = market.book(symbol, 1);
  const bid = top.bids[0] ?? [0, 0];
  const ask = top.asks[0] ?? [0, 0];
  const change = roundTo(last, decimals) - roundTo(open, decimals);
  const lastId = Math.floor(market.asOf / 100);
  return {
    symbol: instrument,
    priceChange: fixed8(change),
    priceChangePercent: ((change / roundTo(open, decimals)) * 100).toFixed(3),
    weightedAvgPrice: fixed8(volume > 0 ? quoteVolume / volume : last),
    prevClosePrice: price(market.priceAt(symbol, openTime - 60_000)),
    lastPrice: price(last),
    lastQty: fixed8(bid[1] / 50),
    bidPrice: fixed8(bid[0]),
    bidQty: fixed8(bid[1]),
    askPrice: fixed8(ask[0]),
    askQty: fixed8(ask[1]),
    openPrice: price(open),
    highPrice: price(high),
    lowPrice: price(low),
    volume: fixed8(volume),
    quoteVolume: fixed8(quoteVolume),
    openTime,
    closeTime: market.asOf,
    firstId: lastId - trades + 1,
    lastId,
    count: trades,
  };
}

/** `/api/v3/klines?symbol=X&interval=1h&limit=N`: the last N hourly bars, the current (partial) one last. */
const klines: SimHandler = (query, context) => {
  const base = binanceSymbolParam(query, spotUniverse(context));
  if (typeof base !== 'string') return base;
  if (query.get('interval') !== '1h') return binanceError(-1120, 'Invalid interval.');
  const limit = intParam(query, 'limit', 500, 1000);
  if (limit === null) return binanceError(-1100, "Illegal characters found in parameter 'limit'.");
  const { market } = context;
  const decimals = market.params(base).priceDecimals;
  const price = (value: number): string => fixed8(roundTo(value, decimals));
  const rows = [];
  for (let hour = market.currentHour - limit + 1; hour <= market.currentHour; hour++) {
    const bar = market.candle(base, hour);
    const average = bar.quoteVolume / (bar.volumeBase || 1);
    rows.push([
      bar.openTime,
      price(bar.open),
      price(bar.high),
      price(bar.low),
      price(bar.close),
      fixed8(bar.volumeBase),
      bar.openTime + HOUR_MS - 1,
      fixed8(bar.quoteVolume),
      bar.trades,
      fixed8(bar.takerBuyBase),
      fixed8(bar.takerBuyBase * average),
      '0',
    ]);
  }
  return ok(rows);
};

/** `/api/v3/depth?symbol=X&limit=N`. */
const depth: SimHandler = (query, context) => {
  const base = binanceSymbolParam(query, spotUniverse(context));
  if (typeof base !== 'string') return base;
  const limit = intParam(query, 'limit', 100, 5000);
  if (limit === null) return binanceError(-1100, "Illegal characters found in parameter 'limit'.");
  const book = context.market.book(base, limit);
  const levels = (side: Array<[number, number]>): string[][] => side.map(([p, q]) => [fixed8(p), fixed8(q)]);
  return ok({
    lastUpdateId: Math.floor(context.market.asOf / 100),
    bids: levels(book.bids),
    asks: levels(book.asks),
  });
};

export const BINANCE_SPOT_ROUTES: Readonly<Record<string, SimHandler>> = {
  '/api/v3/ticker/24hr': ticker24h,
  '/api/v3/klines': klines,
  '/api/v3/depth': depth,
};
