// CoinGecko: one `simple/price` call for every tracked coin. An aggregate across exchanges (USD), without a book;
// the keyless API shares a small per-IP limit and asks for attribution, so it comes last in the default order.
import { z } from 'zod';
import type { Sourced, Ticker24h } from '../../market/types.ts';
import { COINGECKO_IDS, VENUE_BASE_URLS } from '../venues.ts';
import { fetchParsed, parseEntries } from './request.ts';
import { sourced, withReasons } from './source.ts';
import type { SectionSource } from './source.ts';

const VENUE = 'coingecko';
const BASE_URL = VENUE_BASE_URLS[VENUE];

// ---- raw shapes -------------------------------------------------------------------------------------------------

/**
 * `{id: {usd, usd_24h_vol, usd_24h_change (percent), last_updated_at (s)}}`, numbers as JSON numbers. A coin with
 * no recent trades answers `{}` or nulls; an unknown id is left out. The volume may be missing (then 0 is not
 * assumed: the entry fails); the price and the change are required.
 */
export const CoinGeckoCoin = z.object({
  usd: z.number().positive(),
  usd_24h_vol: z.number().nonnegative(),
  usd_24h_change: z.number(),
  last_updated_at: z.number().int().positive(),
});
export type CoinGeckoCoin = z.infer<typeof CoinGeckoCoin>;
/** Coins are parsed one by one: one odd coin costs its own asset only. */
export const CoinGeckoSimplePrice = z.record(z.string(), z.unknown());

// ---- normalisers --------------------------------------------------------------------------------------------------

export function normaliseCoin(raw: CoinGeckoCoin): Ticker24h {
  return {
    last: raw.usd,
    change24h: raw.usd_24h_change / 100,
    quoteVolume24h: raw.usd_24h_vol,
    bid: null,
    ask: null,
  };
}

// ---- sources ------------------------------------------------------------------------------------------------------

export const coingeckoTicker: SectionSource<'ticker'> = {
  venue: VENUE,
  batchSize: 50,
  async fetch(symbols, context) {
    const known = symbols.filter((symbol) => COINGECKO_IDS[symbol] !== undefined);
    const values = new Map<string, Sourced<Ticker24h>>();
    if (known.length === 0) return values;
    const ids = known.map((symbol) => COINGECKO_IDS[symbol]).join(',');
    const url =
      `${BASE_URL}/api/v3/simple/price?ids=${ids}&vs_currencies=usd` +
      '&include_24hr_change=true&include_24hr_vol=true&include_last_updated_at=true';
    const raw = await fetchParsed(context.transport, url, CoinGeckoSimplePrice, context.signal);
    const { good, bad } = parseEntries(
      CoinGeckoCoin,
      known.flatMap((symbol) => {
        const coin = raw[COINGECKO_IDS[symbol] ?? ''];
        return coin === undefined ? [] : [[symbol, coin] as const];
      }),
    );
    for (const [symbol, coin] of good)
      values.set(symbol, sourced(normaliseCoin(coin), VENUE, coin.last_updated_at * 1000, context));
    for (const symbol of known)
      if (!good.has(symbol) && !bad.has(symbol))
        bad.set(symbol, `${COINGECKO_IDS[symbol]} is not in the answer`);
    return withReasons(values, bad);
  },
};
