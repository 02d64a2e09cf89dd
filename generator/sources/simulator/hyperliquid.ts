// The simulated market in Hyperliquid's JSON: POST /info with {"type": "metaAndAssetCtxs"} (every coin, a delisted one
// kept in the universe with zeros) and {"type": "fundingHistory"} (hourly rates). Numbers as strings, as sent.
import { HOUR_MS } from './market-model.ts';
import type { SimulatedMarket } from './market-model.ts';
import { HYPERLIQUID_DELISTED_COIN } from './listings.ts';
import { ok } from './reply.ts';
import type { SimContext, SimHandler, SimReply } from './reply.ts';

/** fundingHistory answers at most 500 rows. */
const MAX_ROWS = 500;

/** Hyperliquid answers a malformed request with HTTP 422 and a plain-text reason. */
const unprocessable = (reason: string): SimReply => ({ status: 422, body: reason });

const hourlyRate = (market: SimulatedMarket, symbol: string, hour: number): number =>
  market.funding8h(symbol, hour) / 8;

function assetCtx(market: SimulatedMarket, symbol: string): Record<string, unknown> {
  const mark = market.priceAt(symbol, market.asOf) * (1 + market.basis(symbol, market.currentHour));
  const oracle = market.priceAt(symbol, market.asOf);
  return {
    funding: hourlyRate(market, symbol, market.currentHour).toFixed(10),
    openInterest: (market.openInterestUsd(symbol, market.currentHour) / mark).toFixed(4), // one side, coins
    prevDayPx: market.priceAt(symbol, market.asOf - 24 * HOUR_MS).toPrecision(6),
    dayNtlVlm: '1000000.0',
    premium: ((mark - oracle) / oracle).toFixed(8),
    oraclePx: oracle.toPrecision(6),
    markPx: mark.toPrecision(6),
    midPx: null, // documented as possibly null
    impactPxs: null,
  };
}

const DELISTED_CTX = {
  funding: '0.0',
  openInterest: '0.0',
  prevDayPx: '0.0',
  dayNtlVlm: '0.0',
  premium: null,
  oraclePx: '0.0',
  markPx: '0.0',
  midPx: null,
  impactPxs: null,
};

function metaAndAssetCtxs({ market, universe }: SimContext): SimReply {
  const coins = [...universe];
  return ok([
    {
      universe: [
        ...coins.map((name) => ({ szDecimals: 2, name, maxLeverage: 20, isDelisted: null })),
        { szDecimals: 2, name: HYPERLIQUID_DELISTED_COIN, maxLeverage: 3, isDelisted: true },
      ],
    },
    [...coins.map((symbol) => assetCtx(market, symbol)), DELISTED_CTX],
  ]);
}

function fundingHistory(body: Record<string, unknown>, { market, universe }: SimContext): SimReply {
  const coin = typeof body.coin === 'string' ? body.coin : '';
  if (typeof body.startTime !== 'number') return unprocessable('Failed to deserialize the JSON body');
  if (!universe.has(coin)) return ok([]); // an unknown coin has no history
  const first = Math.ceil(body.startTime / HOUR_MS);
  const rows = [];
  for (let hour = first; hour <= market.currentHour && rows.length < MAX_ROWS; hour++) {
    rows.push({
      coin,
      fundingRate: hourlyRate(market, coin, hour - 1).toFixed(10),
      premium: '0.0',
      time: hour * HOUR_MS,
    });
  }
  return ok(rows);
}

/** `POST /info`: the request type is in the JSON body. */
const info: SimHandler = (_query, context, body) => {
  const request = (body ?? {}) as Record<string, unknown>;
  if (request.type === 'metaAndAssetCtxs') return metaAndAssetCtxs(context);
  if (request.type === 'fundingHistory') return fundingHistory(request, context);
  return unprocessable('Failed to deserialize the JSON body');
};

export const HYPERLIQUID_ROUTES: Readonly<Record<string, SimHandler>> = { '/info': info };
