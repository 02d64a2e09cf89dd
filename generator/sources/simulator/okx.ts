// The simulated market in OKX v5's JSON: filled liquidation orders of the USDT swaps.
import { okxContractValue } from '../venues.ts';
import { HOUR_MS, roundTo } from './market-model.ts';
import { ok } from './reply.ts';
import type { SimHandler, SimReply } from './reply.ts';

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

export const OKX_ROUTES: Readonly<Record<string, SimHandler>> = {
  '/api/v5/public/liquidation-orders': liquidationOrders,
};
