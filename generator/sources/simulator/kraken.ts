// The simulated market in Kraken's JSON: `{error: [], result}` envelopes, errors inside them over HTTP 200, pairs
// answered under their legacy names (XBTUSD -> XXBTZUSD), OHLC rows in seconds with the forming bar last.
import { krakenPair, krakenResultKeys } from '../adapters/kraken.ts';
import { dayWindow } from './day-window.ts';
import { HOUR_MS } from './market-model.ts';
import type { SimulatedMarket } from './market-model.ts';
import { KRAKEN_UNLISTED } from './listings.ts';
import { fixed8, ok } from './reply.ts';
import type { SimContext, SimHandler, SimReply } from './reply.ts';

/** Kraken reports every failure in its envelope, over HTTP 200. */
const krakenError = (...errors: string[]): SimReply => ok({ error: errors });
const result = (body: unknown): SimReply => ok({ error: [], result: body });
/** Kraken keeps the 720 most recent bars of an interval. */
const OHLC_ROWS = 720;

/** XBTUSD -> BTC when Kraken (simulated) lists the pair. */
function pairSymbol(pair: string, { universe, gaps }: SimContext): string | null {
  const base = pair.endsWith('USD') ? pair.slice(0, -'USD'.length) : '';
  const symbol = base === 'XBT' ? 'BTC' : base;
  const listed = universe.has(symbol) && !(gaps && KRAKEN_UNLISTED.has(symbol));
  return listed && krakenPair(symbol) === pair ? symbol : null;
}

/** The key Kraken answers a pair under: its legacy name where it has one. */
const resultKey = (symbol: string): string => krakenResultKeys(symbol)[0] ?? krakenPair(symbol);

function tickerEntry(market: SimulatedMarket, symbol: string): Record<string, unknown> {
  const decimals = market.params(symbol).priceDecimals;
  const price = (value: number): string => value.toFixed(decimals);
  const day = dayWindow(market, symbol);
  // "Today" is the UTC day so far; `o` is its opening price (not the price 24 h ago).
  const midnight = Math.floor(market.asOf / (24 * HOUR_MS)) * 24 * HOUR_MS;
  const todayShare = (market.asOf - midnight) / (24 * HOUR_MS);
  const top = market.book(symbol, 1);
  const [bid, bidQty] = top.bids[0] ?? [0, 0];
  const [ask, askQty] = top.asks[0] ?? [0, 0];
  const vwap = day.volumeBase > 0 ? day.quoteVolume / day.volumeBase : day.last;
  return {
    a: [price(ask), String(Math.max(1, Math.round(askQty))), fixed8(askQty)],
    b: [price(bid), String(Math.max(1, Math.round(bidQty))), fixed8(bidQty)],
    c: [price(day.last), fixed8(bidQty / 50)],
    v: [fixed8(day.volumeBase * todayShare), fixed8(day.volumeBase)],
    p: [price(vwap), price(vwap)],
    t: [Math.round(day.trades * todayShare), day.trades],
    l: [price(day.low), price(day.low)],
    h: [price(day.high), price(day.high)],
    o: price(market.priceAt(symbol, midnight)),
  };
}

/** `/0/public/Ticker?pair=XBTUSD,ETHUSD`: one unknown pair fails the whole call. */
const ticker: SimHandler = (query, context) => {
  const pairs = (query.get('pair') ?? '').split(',').filter(Boolean);
  if (pairs.length === 0) return krakenError('EGeneral:Invalid arguments');
  const symbols = pairs.map((pair) => pairSymbol(pair, context));
  if (symbols.some((symbol) => symbol === null)) return krakenError('EQuery:Unknown asset pair');
  return result(
    Object.fromEntries(
      (symbols as string[]).map((symbol) => [resultKey(symbol), tickerEntry(context.market, symbol)]),
    ),
  );
};

/** `/0/public/OHLC?pair=XBTUSD&interval=60[&since=s]`: bars after `since` (the last 720 at most), forming one last. */
const ohlc: SimHandler = (query, context) => {
  const symbol = pairSymbol(query.get('pair') ?? '', context);
  if (symbol === null) return krakenError('EQuery:Unknown asset pair');
  if (query.get('interval') !== '60') return krakenError('EGeneral:Invalid arguments:interval');
  const since = query.get('since');
  if (since !== null && !/^\d+$/.test(since)) return krakenError('EGeneral:Invalid arguments:since');
  const { market } = context;
  const decimals = market.params(symbol).priceDecimals;
  const price = (value: number): string => value.toFixed(decimals);
  const oldest = market.currentHour - OHLC_ROWS + 1;
  const first = since === null ? oldest : Math.max(oldest, Math.floor(Number(since) / 3600) + 1);
  const rows = [];
  for (let hour = first; hour <= market.currentHour; hour++) {
    const bar = market.candle(symbol, hour);
    rows.push([
      hour * 3600,
      price(bar.open),
      price(bar.high),
      price(bar.low),
      price(bar.close),
      price(bar.quoteVolume / (bar.volumeBase || 1)),
      fixed8(bar.volumeBase),
      bar.trades,
    ]);
  }
  // `last`: the id to pass as `since` for the bars committed after these (the last closed bar's time).
  return result({ [resultKey(symbol)]: rows, last: (market.currentHour - 1) * 3600 });
};

export const KRAKEN_ROUTES: Readonly<Record<string, SimHandler>> = {
  '/0/public/Ticker': ticker,
  '/0/public/OHLC': ohlc,
};
