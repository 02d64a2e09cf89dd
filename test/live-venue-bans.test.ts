// Error answers that must be reported as what they are: a ban that outlasts the run (Binance's 418, Bybit's 403
// "access too frequent") drops the venue after one call instead of being retried into a longer ban; an error
// envelope over HTTP 200 keeps its code and kind even without the data it would wrap; a ticker whose 24 h change
// could not be read says why.
import { afterEach, describe, expect, it } from 'vitest';
import { buildPlan, DEFAULT_LIVE_ORDER } from '../generator/sources/adapters/plan.ts';
import type { SourceOrder } from '../generator/sources/adapters/plan.ts';
import { krakenTicker } from '../generator/sources/adapters/kraken.ts';
import { okxOpenInterest } from '../generator/sources/adapters/okx.ts';
import { SourceError } from '../generator/sources/adapters/request.ts';
import type { FetchContext } from '../generator/sources/adapters/source.ts';
import { classifyHttpError, isRateLimitedAnswer } from '../generator/sources/adapters/venue-errors.ts';
import { collectMarket } from '../generator/sources/collect.ts';
import { startReplayServer } from '../generator/sources/replay-server.ts';
import type { ReplayServer } from '../generator/sources/replay-server.ts';
import type { Transport, TransportResponse } from '../generator/sources/transport.ts';
import { venueErrorsForHost } from '../generator/sources/venues.ts';
import * as F from './fixtures/venues/bans-and-envelopes.ts';
import { bybitRateLimit403 } from './fixtures/venues/oddities.ts';
import { liveTransportTo } from './live-helpers.ts';

const AS_OF = Date.UTC(2026, 5, 1, 12, 30);
let server: ReplayServer | undefined;
afterEach(async () => server?.close());

const NONE: SourceOrder = {
  candles: [],
  ticker: [],
  book: [],
  funding: [],
  openInterest: [],
  liquidations: [],
};
const only = (order: Partial<SourceOrder>) => buildPlan({ ...DEFAULT_LIVE_ORDER, ...NONE, ...order });

describe('bans that outlast a run', () => {
  it('reads them as refusals, not as rate limits to retry', () => {
    const binance = venueErrorsForHost('api.binance.com');
    expect(classifyHttpError(binance, 418, F.binanceIpBan418.body)).toMatchObject({
      kind: 'unavailable',
      code: '-1003',
    });
    expect(isRateLimitedAnswer(binance, 418, F.binanceIpBan418.body)).toBe(false);
    // The same code over 429 is a rate limit, waited out.
    expect(classifyHttpError(binance, 429, F.binanceIpBan418.body).kind).toBe('rate-limited');

    const bybit = venueErrorsForHost('api.bybit.com');
    expect(classifyHttpError(bybit, 403, F.bybitIpBan403.body).kind).toBe('unavailable');
    expect(isRateLimitedAnswer(bybit, 403, F.bybitIpBan403.body)).toBe(false);
    // A 403 carrying Bybit's rate-limit code in its envelope is still waited out.
    expect(isRateLimitedAnswer(bybit, 403, JSON.stringify(bybitRateLimit403))).toBe(true);
  });

  it("Binance's 418: called once, the venue dropped for the run, never retried", async () => {
    server = await startReplayServer(({ venue }) =>
      venue === 'binance-spot' ? F.binanceIpBan418 : { status: 404, body: '' },
    );
    const snapshot = await collectMarket({
      transport: liveTransportTo(server, { http: { retries: 2 } }),
      symbols: ['BTC', 'ETH'],
      asOf: AS_OF,
      seed: null,
      concurrency: 1,
      plan: only({ ticker: ['binance-spot'], candles: ['binance-spot'], book: ['binance-spot'] }),
    });
    expect(server.requests).toHaveLength(1);
    expect(snapshot.issues.filter((i) => i.section === 'all')).toEqual([
      expect.objectContaining({ venue: 'binance-spot', message: expect.stringContaining('HTTP 418') }),
    ]);
    expect(snapshot.assets.every((a) => a.ticker === null && a.candles === null && a.book === null)).toBe(
      true,
    );
  });

  it("Bybit's 403 'access too frequent': called once, the venue dropped for the run", async () => {
    server = await startReplayServer(() => F.bybitIpBan403);
    const snapshot = await collectMarket({
      transport: liveTransportTo(server, { http: { retries: 2 } }),
      symbols: ['BTC', 'SOL'],
      asOf: AS_OF,
      seed: null,
      concurrency: 1,
      plan: only({ funding: ['bybit'], openInterest: ['bybit'] }),
    });
    expect(server.requests).toHaveLength(1);
    expect(snapshot.issues.filter((i) => i.section === 'all')).toEqual([
      expect.objectContaining({ venue: 'bybit', message: expect.stringContaining('HTTP 403') }),
    ]);
  });
});

/** Answers by URL fragment, the first that matches; anything else is a 404. */
function answering(routes: Array<[fragment: string, body: unknown]>): Transport {
  return {
    mode: 'replay',
    async fetch({ url }): Promise<TransportResponse> {
      const route = routes.find(([fragment]) => url.includes(fragment));
      return route
        ? { status: 200, headers: {}, body: JSON.stringify(route[1]) }
        : { status: 404, headers: {}, body: '' };
    },
  };
}
const context = (transport: Transport): FetchContext => ({
  transport,
  asOf: AS_OF,
  candleLimit: 24,
  shared: new Map(),
});

describe('errors inside a 200 answer', () => {
  it("OKX's 50011 without a data array is its rate limit, with its code, not a shape error", async () => {
    const transport = answering([['/open-interest', F.okxRateLimitWithoutData]]);
    const error = await okxOpenInterest.fetch(['BTC'], context(transport)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SourceError);
    expect(error).toMatchObject({
      kind: 'rate-limited',
      code: '50011',
      message: 'OKX rate limit 50011: Too Many Requests',
    });
  });

  it("Kraken: a ticker whose 24 h open could not be read keeps the OHLC call's reason", async () => {
    const transport = answering([
      ['/0/public/Ticker', F.krakenTickerXbt],
      ['/0/public/OHLC', F.krakenRateLimit],
    ]);
    const answer = await krakenTicker.fetch(['BTC'], context(transport));
    expect(answer.has('BTC')).toBe(false);
    expect(answer.reasons?.get('BTC')).toContain('Kraken rate limit EAPI:Rate limit exceeded');
  });
});
