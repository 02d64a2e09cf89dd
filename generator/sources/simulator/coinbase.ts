// The simulated market in Coinbase Exchange's JSON: 24 h stats, hourly candles and the level-2 book of the USD
// products, the instrument in the path. Numbers as strings, except the candles' (JSON numbers, in Coinbase's order
// [time, low, high, open, close, volume], newest first); errors as `{message}` with the HTTP status.
import { coinbaseProduct } from '../adapters/coinbase.ts';
import { dayWindow } from './day-window.ts';
import { HOUR_MS, roundTo } from './market-model.ts';
import type { SimulatedMarket } from './market-model.ts';
import { COINBASE_THROTTLED } from './listings.ts';
import { fixed8, ok } from './reply.ts';
import type { SimContext, SimHandler, SimReply } from './reply.ts';

const message = (status: number, text: string): SimReply => ({ status, body: { message: text } });
const NOT_FOUND = message(404, 'NotFound');
const RATE_LIMITED = message(429, 'Public rate limit exceeded');
/** Coinbase refuses a candle request spanning more buckets than this. */
const MAX_CANDLES = 300;

/** `/products/stats`: a rolling 24 h window; `volume` in the base asset. */
function stats(market: SimulatedMarket, symbol: string): SimReply {
  const decimals = market.params(symbol).priceDecimals;
  const price = (value: number): string => fixed8(roundTo(value, decimals));
  const day = dayWindow(market, symbol);
  return ok({
    open: price(day.open),
    high: price(day.high),
    low: price(day.low),
    last: price(day.last),
    volume: fixed8(day.volumeBase),
    volume_30day: fixed8(day.volumeBase * 30),
    rfq_volume_24hour: '0.000000',
    conversions_volume_24hour: '0.000000',
    rfq_volume_30day: '0.000000',
    conversions_volume_30day: '0.000000',
  });
}

const isoTime = (raw: string | null): number | null => {
  if (raw === null) return null;
  const time = Date.parse(raw);
  return Number.isNaN(time) ? NaN : time;
};

/** `/candles?granularity=3600[&start=ISO&end=ISO]`: buckets starting in [start, end], newest first, 300 at most. */
function candles(market: SimulatedMarket, symbol: string, query: URLSearchParams): SimReply {
  if (query.get('granularity') !== '3600') return message(400, 'Unsupported granularity');
  const start = isoTime(query.get('start'));
  const end = isoTime(query.get('end'));
  if (Number.isNaN(start) || Number.isNaN(end)) return message(400, 'Invalid start or end');
  const lastHour = Math.min(market.currentHour, Math.floor((end ?? market.asOf) / HOUR_MS));
  const firstHour = start === null ? lastHour - MAX_CANDLES + 1 : Math.ceil(start / HOUR_MS);
  if (lastHour - firstHour + 1 > MAX_CANDLES)
    return message(
      400,
      'granularity too small for the requested time range. Count of aggregations requested exceeds 300',
    );
  const decimals = market.params(symbol).priceDecimals;
  const rows: number[][] = [];
  for (let hour = lastHour; hour >= firstHour; hour--) {
    const bar = market.candle(symbol, hour);
    const price = (value: number): number => roundTo(value, decimals);
    rows.push([
      hour * (HOUR_MS / 1000),
      price(bar.low),
      price(bar.high),
      price(bar.open),
      price(bar.close),
      roundTo(bar.volumeBase, 8),
    ]);
  }
  return ok(rows);
}

/** `/book?level=2`: aggregated levels [price, size, number of orders], best first. */
function book(market: SimulatedMarket, symbol: string, query: URLSearchParams): SimReply {
  if (query.get('level') !== '2') return message(400, 'Invalid level');
  const levels = market.book(symbol, 100);
  const side = (rows: Array<[number, number]>): Array<[string, string, number]> =>
    rows.map(([price, size], k) => [fixed8(price), fixed8(size), 1 + (k % 7)]);
  return ok({
    bids: side(levels.bids),
    asks: side(levels.asks),
    sequence: Math.floor(market.asOf / 100),
    auction_mode: false,
    auction: null,
    time: new Date(market.asOf).toISOString(),
  });
}

/** BTC-USD -> BTC when Coinbase (simulated) has the product. */
function productSymbol(product: string, { universe }: SimContext): string | null {
  const symbol = product.endsWith('-USD') ? product.slice(0, -'-USD'.length) : '';
  return universe.has(symbol) && coinbaseProduct(symbol) === product ? symbol : null;
}

/** `/products/{id}/{stats|candles|book}`. */
const products: SimHandler = (query, context, _body, path = '') => {
  const [, , product = '', what = '', ...rest] = path.split('/');
  const symbol = productSymbol(product, context);
  if (symbol === null || rest.length > 0) return NOT_FOUND;
  const throttled = (kind: 'candles' | 'stats'): boolean =>
    context.gaps && COINBASE_THROTTLED[kind].has(symbol);
  switch (what) {
    case 'stats':
      return throttled('stats') ? RATE_LIMITED : stats(context.market, symbol);
    case 'candles':
      return throttled('candles') ? RATE_LIMITED : candles(context.market, symbol, query);
    case 'book':
      return book(context.market, symbol, query);
    default:
      return NOT_FOUND;
  }
};

export const COINBASE_ROUTES: Readonly<Record<string, SimHandler>> = { '/products/*': products };
