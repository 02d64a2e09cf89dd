// The simulated market in OKX v5's JSON: filled liquidation orders, funding (predicted and realised), open interest
// in contracts, coins and USD, and the instruments list with each swap's contract value. Errors come in the
// envelope over HTTP 200 (51001 for an instrument OKX does not list).
import { okxContractValue } from '../adapters/okx.ts';
import { HOUR_MS, roundTo } from './market-model.ts';
import type { SimulatedMarket } from './market-model.ts';
import { OKX_UNLISTED } from './listings.ts';
import { ok } from './reply.ts';
import type { SimContext, SimHandler, SimReply } from './reply.ts';

/** OKX answers with its envelope and a non-zero code (and an empty data array) when a request is wrong. */
const okxError = (code: string, msg: string): SimReply => ({ status: 200, body: { code, msg, data: [] } });

/** How far back the simulated venue keeps liquidation orders. */
const RETENTION_MS = 7 * 24 * HOUR_MS;
const MAX_LIMIT = 100;

/** `/api/v5/public/liquidation-orders?instType=SWAP&uly=BTC-USDT&state=filled[&limit=N][&after=ts]`, newest first. */
const liquidationOrders: SimHandler = (query, { market, universe }) => {
  if (query.get('instType') !== 'SWAP') return okxError('51000', 'Parameter instType error');
  const underlying = query.get('uly') ?? query.get('instFamily') ?? '';
  const base = underlying.endsWith('-USDT') ? underlying.slice(0, -'-USDT'.length) : '';
  if (!universe.has(base)) return okxError('51000', 'Parameter uly error');
  if (query.get('state') !== 'filled') return okxError('51000', 'Parameter state error');
  const limit = Math.min(MAX_LIMIT, Number(query.get('limit') ?? MAX_LIMIT));
  const after = query.get('after'); // pagination: records earlier than this ts
  if (!Number.isInteger(limit) || limit < 1 || (after !== null && !/^\d+$/.test(after))) {
    return okxError('51000', 'Parameter limit or after error');
  }
  const until = after === null ? market.asOf : Math.min(market.asOf, Number(after) - 1);
  const contractValue = okxContractValue(base);
  const decimals = market.params(base).priceDecimals;
  const details = market
    .liquidations(base, market.asOf - RETENTION_MS, until)
    .reverse()
    .slice(0, limit)
    .map((event) => ({
      bkLoss: '0',
      bkPx: String(roundTo(event.price, decimals)),
      ccy: '',
      posSide: event.position,
      side: event.position === 'long' ? 'sell' : 'buy',
      sz: String(Math.max(1, Math.round(event.usd / (contractValue * event.price)))),
      ts: String(event.time),
    }));
  return ok({
    code: '0',
    msg: '',
    data: [
      {
        details,
        instFamily: underlying,
        instId: `${underlying}-SWAP`,
        instType: 'SWAP',
        totalLoss: '0',
        uly: underlying,
      },
    ],
  });
};

const listed = (symbol: string, { universe, gaps }: SimContext): boolean =>
  universe.has(symbol) && !(gaps && OKX_UNLISTED.has(symbol));

/** BTC-USDT-SWAP -> BTC when OKX (simulated) lists the swap. */
function swapParam(query: URLSearchParams, context: SimContext): string | SimReply {
  const instId = query.get('instId') ?? '';
  const base = instId.endsWith('-USDT-SWAP') ? instId.slice(0, -'-USDT-SWAP'.length) : '';
  return listed(base, context) ? base : okxError('51001', "Instrument ID doesn't exist.");
}

const envelope = (data: unknown[]): SimReply => ok({ code: '0', msg: '', data });

const perInterval = (market: SimulatedMarket, symbol: string, hour: number): number =>
  (market.funding8h(symbol, hour) * market.params(symbol).fundingIntervalHours) / 8;

/** `/api/v5/public/funding-rate?instId=X`: the running period's predicted rate; fundingTime is its settlement. */
const fundingRate: SimHandler = (query, context) => {
  const base = swapParam(query, context);
  if (typeof base !== 'string') return base;
  const { market } = context;
  const intervalMs = market.params(base).fundingIntervalHours * HOUR_MS;
  const settles = (Math.floor(market.asOf / intervalMs) + 1) * intervalMs;
  return envelope([
    {
      instType: 'SWAP',
      instId: `${base}-USDT-SWAP`,
      fundingRate: perInterval(market, base, market.currentHour).toFixed(10),
      fundingTime: String(settles),
      nextFundingTime: String(settles + intervalMs),
      ts: String(market.asOf),
    },
  ]);
};

/**
 * `/api/v5/public/funding-rate-history?instId=X&limit=N`, newest first: `realizedRate` is what settled,
 * `fundingRate` the prediction before it (a little off, as on OKX), so reading the wrong field shows.
 */
const fundingRateHistory: SimHandler = (query, context) => {
  const base = swapParam(query, context);
  if (typeof base !== 'string') return base;
  const { market } = context;
  const limit = Math.min(100, Number(query.get('limit') ?? 100));
  const intervalMs = market.params(base).fundingIntervalHours * HOUR_MS;
  const latest = Math.floor(market.asOf / intervalMs) * intervalMs;
  const data = Array.from({ length: limit }, (_, i) => latest - i * intervalMs).map((time) => {
    const settled = perInterval(market, base, time / HOUR_MS - 1);
    return {
      instType: 'SWAP',
      instId: `${base}-USDT-SWAP`,
      fundingRate: (settled * 1.1 + 0.00001).toFixed(10),
      realizedRate: settled.toFixed(10),
      method: 'current_period',
      fundingTime: String(time),
    };
  });
  return envelope(data);
};

/** `/api/v5/public/open-interest?instType=SWAP&instId=X`: oi in contracts, oiCcy in coins, oiUsd in USD. */
const openInterest: SimHandler = (query, context) => {
  if (query.get('instType') !== 'SWAP') return okxError('51000', 'Parameter instType error');
  const base = swapParam(query, context);
  if (typeof base !== 'string') return base;
  const { market } = context;
  const usd = market.openInterestUsd(base, market.currentHour);
  const coins = usd / market.priceAt(base, market.asOf);
  return envelope([
    {
      instType: 'SWAP',
      instId: `${base}-USDT-SWAP`,
      oi: (coins / okxContractValue(base)).toFixed(2),
      oiCcy: coins.toFixed(4),
      oiUsd: usd.toFixed(2),
      ts: String(market.asOf),
    },
  ]);
};

/** `/api/v5/public/instruments?instType=SWAP`: every swap with its contract value; one suspended swap among them. */
const instruments: SimHandler = (query, context) => {
  if (query.get('instType') !== 'SWAP') return okxError('51000', 'Parameter instType error');
  // Every swap is listed (liquidations need its ctVal); the gaps are in funding and open interest only.
  const swaps = [...context.universe]
    .map((symbol) => ({ symbol, state: 'live' }))
    .concat([{ symbol: 'LUNA', state: 'suspend' }]);
  return envelope(
    swaps.map(({ symbol, state }) => ({
      instType: 'SWAP',
      instId: `${symbol}-USDT-SWAP`,
      uly: `${symbol}-USDT`,
      instFamily: `${symbol}-USDT`,
      ctVal: String(okxContractValue(symbol)),
      ctValCcy: symbol,
      ctType: 'linear',
      lotSz: '0.01',
      state,
    })),
  );
};

export const OKX_ROUTES: Readonly<Record<string, SimHandler>> = {
  '/api/v5/public/liquidation-orders': liquidationOrders,
  '/api/v5/public/funding-rate': fundingRate,
  '/api/v5/public/funding-rate-history': fundingRateHistory,
  '/api/v5/public/open-interest': openInterest,
  '/api/v5/public/instruments': instruments,
};
