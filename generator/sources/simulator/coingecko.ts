// The simulated market in CoinGecko's JSON: `simple/price` keyed by coin id, numbers as JSON numbers, the 24 h change
// in percent, `last_updated_at` in seconds (its aggregate is refreshed about once a minute). An id CoinGecko does not
// know is left out of the answer, not reported as an error.
import { COINGECKO_IDS } from '../adapters/coingecko.ts';
import { DAY_MS, dayWindow } from './day-window.ts';
import { ok } from './reply.ts';
import type { SimHandler, SimReply } from './reply.ts';

const SYMBOL_OF_ID: ReadonlyMap<string, string> = new Map(
  Object.entries(COINGECKO_IDS).map(([symbol, id]) => [id, symbol]),
);

const badRequest = (error: string): SimReply => ({ status: 400, body: { error } });

/** Significant digits of CoinGecko's prices (it answers 76975 for bitcoin, 0.2234 for a small coin). */
const significant = (value: number, digits: number): number => Number(value.toPrecision(digits));

/** `/api/v3/simple/price?ids=bitcoin,..&vs_currencies=usd&include_24hr_change&include_24hr_vol&include_last_updated_at`. */
const simplePrice: SimHandler = (query, { market, universe }) => {
  const ids = (query.get('ids') ?? '').split(',').filter(Boolean);
  if (ids.length === 0) return badRequest('Missing parameter ids');
  if (query.get('vs_currencies') !== 'usd') return badRequest('Missing parameter vs_currencies');
  const updated = Math.floor(market.asOf / 60_000) * 60; // seconds, the start of the minute
  const answer: Record<string, Record<string, number>> = {};
  for (const id of ids) {
    const symbol = SYMBOL_OF_ID.get(id);
    if (symbol === undefined || !universe.has(symbol)) continue; // unknown id: left out
    const day = dayWindow(market, symbol);
    const price = market.priceAt(symbol, updated * 1000);
    const coin: Record<string, number> = { usd: significant(price, 8) };
    if (query.get('include_24hr_vol') === 'true') coin.usd_24h_vol = significant(day.quoteVolume, 12);
    if (query.get('include_24hr_change') === 'true')
      coin.usd_24h_change = (price / market.priceAt(symbol, updated * 1000 - DAY_MS) - 1) * 100;
    if (query.get('include_last_updated_at') === 'true') coin.last_updated_at = updated;
    answer[id] = coin;
  }
  return ok(answer);
};

export const COINGECKO_ROUTES: Readonly<Record<string, SimHandler>> = { '/api/v3/simple/price': simplePrice };
