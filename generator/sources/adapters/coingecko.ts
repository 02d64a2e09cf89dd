// CoinGecko: one `simple/price` call for every tracked coin. An aggregate across exchanges (USD), without a book;
// the keyless API shares a small per-IP limit and asks for attribution, so it comes last in the default order.
import * as z from 'zod';
import type { Sourced, Ticker24h } from '../../market/types.ts';
import type { VenueDescriptor } from '../venue-descriptor.ts';
import { parseEntries, venueCalls } from './request.ts';
import { refusedBecause, tickerProblem } from './price-checks.ts';
import { sourced, withReasons } from './source.ts';
import type { SectionSource } from './source.ts';
import type { VenueErrors } from './venue-errors.ts';

const VENUE = 'coingecko';
const BASE_URL = 'https://api.coingecko.com';

/** CoinGecko's coin ids; a symbol without one is not served by CoinGecko. */
export const COINGECKO_IDS: Readonly<Record<string, string>> = {
  BTC: 'bitcoin',
  ETH: 'ethereum',
  XRP: 'ripple',
  SOL: 'solana',
  ALGO: 'algorand',
  XLM: 'stellar',
  HBAR: 'hedera-hashgraph',
};

/** `{status: {error_code: 429, error_message}}` (its rate limit), or `{error: "..."}`. */
const ERRORS: VenueErrors = {
  envelope: (body) => {
    const status = body.status as Record<string, unknown> | undefined;
    if (status && typeof status === 'object' && status.error_code !== undefined)
      return { code: String(status.error_code), message: String(status.error_message ?? '') };
    return typeof body.error === 'string' ? { code: null, message: body.error } : null;
  },
  rateLimitCodes: ['429'],
};
const calls = venueCalls('CoinGecko', ERRORS);

// ---- raw shapes -------------------------------------------------------------------------------------------------

/**
 * `{id: {usd, usd_24h_vol, usd_24h_change (percent), last_updated_at (s)}}`, numbers as JSON numbers. A coin with
 * no recent trades answers `{}` or nulls; an unknown id is left out. The volume may be missing (then 0 is not
 * assumed: the entry fails); the price and the change are required, the price positive (price-checks.ts).
 */
export const CoinGeckoCoin = z.object({
  usd: z.number(),
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
    volumeScope: 'all-exchanges', // every exchange's trades of the coin, not one market's
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
    const raw = await calls.parsed(context, url, CoinGeckoSimplePrice);
    const { good, bad } = parseEntries(
      CoinGeckoCoin,
      known.flatMap((symbol) => {
        const coin = raw[COINGECKO_IDS[symbol] ?? ''];
        return coin === undefined ? [] : [[symbol, coin] as const];
      }),
    );
    for (const [symbol, coin] of good) {
      const ticker = normaliseCoin(coin);
      const problem = tickerProblem(ticker);
      const origin = { venue: VENUE, instrument: COINGECKO_IDS[symbol] ?? symbol };
      if (problem === null) values.set(symbol, sourced(ticker, VENUE, coin.last_updated_at * 1000, context));
      else bad.set(symbol, refusedBecause(origin, 'ticker', problem));
    }
    for (const symbol of known)
      if (!good.has(symbol) && !bad.has(symbol))
        bad.set(symbol, `${COINGECKO_IDS[symbol]} is not in the answer`);
    return withReasons(values, bad);
  },
};

export const COINGECKO: VenueDescriptor<'coingecko'> = {
  id: VENUE,
  name: 'CoinGecko',
  baseUrl: BASE_URL,
  method: 'GET',
  // The keyless API shares a small per-IP limit: the tightest budget.
  requestsPerSecond: 0.4,
  errors: ERRORS,
  instrument: (symbol) => COINGECKO_IDS[symbol] ?? null,
  // An aggregate without a book, asking for attribution: last.
  serves: { ticker: { source: coingeckoTicker, rank: 4 } },
};
