// Contract tests per venue, on answers this project wrote after the venues' documented shapes and the oddities seen
// in real answers (test/fixtures/venues/oddities.ts): the documented success shape, a batch with one bad entry (the
// others survive), the error envelopes (code and message kept), a rate limit (never a refusal), a delisted or
// halted instrument (unavailable, never zero).
import { describe, expect, it } from 'vitest';
import { binanceSpotTicker } from '../generator/sources/adapters/binance-spot.ts';
import { binanceUsdmFunding } from '../generator/sources/adapters/binance-usdm.ts';
import { bybitFunding, bybitOpenInterest } from '../generator/sources/adapters/bybit.ts';
import { coinbaseBook, coinbaseTicker } from '../generator/sources/adapters/coinbase.ts';
import { coingeckoTicker } from '../generator/sources/adapters/coingecko.ts';
import { hyperliquidFunding, hyperliquidOpenInterest } from '../generator/sources/adapters/hyperliquid.ts';
import { krakenTicker } from '../generator/sources/adapters/kraken.ts';
import { okxFunding, okxLiquidations } from '../generator/sources/adapters/okx.ts';
import { SourceError } from '../generator/sources/adapters/request.ts';
import type { FetchContext, SectionName, SectionSource } from '../generator/sources/adapters/source.ts';
import type { Transport, TransportResponse } from '../generator/sources/transport.ts';
import { VenueGate } from '../generator/sources/venue-gate.ts';
import * as F from './fixtures/venues/oddities.ts';

type Answer = { status?: number; body: unknown };
/** Answers by URL fragment (first match wins); anything else is a 404. */
function transportOf(
  routes: Array<[fragment: string, answer: Answer | ((url: string) => Answer)]>,
): Transport & {
  urls: string[];
} {
  const urls: string[] = [];
  return {
    mode: 'replay',
    urls,
    async fetch({ url, body }): Promise<TransportResponse> {
      urls.push(url);
      const key = body ? `${url} ${body}` : url;
      const route = routes.find(([fragment]) => key.includes(fragment));
      if (!route) return { status: 404, headers: {}, body: '' };
      const answer = typeof route[1] === 'function' ? route[1](url) : route[1];
      const text = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body);
      return { status: answer.status ?? 200, headers: {}, body: text };
    },
  };
}

const ctx = (transport: Transport, asOf = 1779990000000): FetchContext => ({
  transport,
  asOf,
  candleLimit: 24,
  shared: new Map(),
});

/** The error a source throws for one symbol. */
async function failure<S extends SectionName>(
  source: SectionSource<S>,
  symbol: string,
  context: FetchContext,
): Promise<SourceError> {
  const error: unknown = await source.fetch([symbol], context).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SourceError);
  return error as SourceError;
}

const gateSays = (venue: string, error: SourceError): boolean => new VenueGate().observe(venue, error);

describe('Bybit', () => {
  const routes = (): Array<[string, Answer]> => [
    ['/v5/market/tickers', { body: F.bybitTickers }],
    ['/v5/market/open-interest', { body: F.bybitOpenInterest }],
    ['/v5/market/funding/history', { body: F.bybitFundingHistory }],
  ];

  it('survives dated futures with empty fields: one-sided open interest, stated 4 h interval per 8 h', async () => {
    const context = ctx(transportOf(routes()));
    const funding = (await bybitFunding.fetch(['BTC'], context)).get('BTC')!.value;
    expect(funding).toMatchObject({ intervalHours: 4, markPrice: 100000, indexPrice: 100010 });
    expect(funding.rate8h).toBeCloseTo(0.0002, 12); // 0.0001 per 4 h
    expect(funding.history8h).toEqual([0.0002, 0.0004]); // settled, oldest first, per 8 h
    const oi = (await bybitOpenInterest.fetch(['BTC'], context)).get('BTC')!.value;
    expect(oi.valueUsd).toBe(1_000_000_000); // half of the two-sided 2 000 000 000
    expect(oi.history).toEqual([
      { time: 1779984000000, valueUsd: 9500 * 100000 },
      { time: 1779987600000, valueUsd: 10000 * 100000 },
    ]);
  });

  it('one bad entry costs its asset only; a halted contract is unavailable, not zero; a missing one is named', async () => {
    const context = ctx(transportOf(routes()));
    expect((await bybitFunding.fetch(['SOL'], context)).get('SOL')?.value.rate8h).toBeCloseTo(-0.0001, 12);
    expect((await failure(bybitFunding, 'ETH', context)).message).toMatch(/ETHUSDT: unexpected entry shape/);
    expect((await failure(bybitFunding, 'HBAR', context)).message).toMatch(/no funding rate .*not available/);
    expect((await failure(bybitOpenInterest, 'HBAR', context)).message).toMatch(
      /halted or delisted.*not available/,
    );
    expect((await failure(bybitOpenInterest, 'XLM', context)).message).toMatch(/no linear contract XLMUSDT/);
  });

  it('keeps the retCode and message of an envelope error', async () => {
    const context = ctx(transportOf([['/v5/market/tickers', { body: F.bybitParamsError }]]));
    const error = await failure(bybitFunding, 'BTC', context);
    expect(error.message).toBe('Bybit error 10001: params error: symbol invalid');
    expect([error.code, error.kind]).toEqual(['10001', 'error']);
  });

  it('a 403 with retCode 10006 is a rate limit, not a country block; the CDN country block marks it unavailable', async () => {
    const limited = await failure(
      bybitFunding,
      'BTC',
      ctx(transportOf([['/v5/market/tickers', { status: 403, body: F.bybitRateLimit403 }]])),
    );
    expect(limited.kind).toBe('rate-limited');
    expect(limited.message).toMatch(/^HTTP 403 \(rate limited\): 10006 Too many visits/);
    expect(gateSays('bybit', limited)).toBe(false);
    const blocked = await failure(
      bybitFunding,
      'BTC',
      ctx(transportOf([['/v5/market/tickers', { status: 403, body: F.bybitCountryBlock403 }]])),
    );
    expect(blocked.kind).toBe('unavailable');
    expect(blocked.message).toMatch(/block access from your country/);
    expect(gateSays('bybit', blocked)).toBe(true);
  });
});

describe('OKX', () => {
  it('publishes settled history from realizedRate, the current rate per its own 8 h period', async () => {
    const transport = transportOf([
      ['/funding-rate-history', { body: F.okxFundingHistory }],
      ['/funding-rate?', { body: F.okxFundingRate }],
    ]);
    const funding = (await okxFunding.fetch(['BTC'], ctx(transport))).get('BTC')!.value;
    expect(funding.history8h).toEqual([-0.00002, 0.00015]);
    expect(funding).toMatchObject({ rate8h: 0.0001, intervalHours: 8 });
  });

  it('reads contract values from the instruments list; a suspended swap is unavailable', async () => {
    const asOf = 1779990000000;
    const transport = transportOf([
      ['/instruments', { body: F.okxInstruments }],
      ['/liquidation-orders', { body: F.okxLiquidations(asOf - 1000) }],
    ]);
    const xrp = (await okxLiquidations.fetch(['XRP'], ctx(transport, asOf))).get('XRP')!.value;
    expect(xrp).toEqual({ longUsd24h: 0, shortUsd24h: 3 * 100 * 0.5, events: 1 });
    expect((await failure(okxLiquidations, 'HBAR', ctx(transport, asOf))).message).toMatch(
      /HBAR-USDT-SWAP is suspend: not available/,
    );
  });

  it('keeps 51001 and its message; 50011 is a rate limit whether over 429 or in a 200 envelope', async () => {
    const missing = await failure(
      okxFunding,
      'XLM',
      ctx(transportOf([['/funding-rate', { body: F.okxNoInstrument }]])),
    );
    expect(missing.message).toBe("OKX error 51001: Instrument ID doesn't exist.");
    const over429 = await failure(
      okxFunding,
      'BTC',
      ctx(transportOf([['/funding-rate', { status: 429, body: F.okxRateLimit }]])),
    );
    expect([over429.kind, over429.code]).toEqual(['rate-limited', '50011']);
    const in200 = await failure(
      okxFunding,
      'BTC',
      ctx(transportOf([['/funding-rate', { body: F.okxRateLimit }]])),
    );
    expect(in200.kind).toBe('rate-limited');
    expect(in200.message).toBe('OKX rate limit 50011: Too Many Requests');
    expect(gateSays('okx', in200)).toBe(false);
  });
});

describe('Hyperliquid', () => {
  const transport = () =>
    transportOf([
      ['metaAndAssetCtxs', { body: F.hyperliquidMetaAndAssetCtxs }],
      [
        'fundingHistory',
        { body: [{ coin: 'BTC', fundingRate: '0.00001', premium: '0.0', time: 1779987600000 }] },
      ],
    ]);

  it('documented shape with null fields: hourly funding per 8 h, open interest in coins at the mark', async () => {
    const context = ctx(transport());
    const funding = (await hyperliquidFunding.fetch(['BTC'], context)).get('BTC')!.value;
    expect(funding.rate8h).toBeCloseTo(0.0001, 12);
    expect(funding).toMatchObject({ intervalHours: 1, markPrice: 100010, indexPrice: 100000 });
    expect(funding.history8h[0]).toBeCloseTo(0.00008, 12);
    const oi = (await hyperliquidOpenInterest.fetch(['BTC'], context)).get('BTC')!.value;
    expect(oi.valueUsd).toBeCloseTo(10000.5 * 100010, 4);
  });

  it('a delisted coin is not available (never zero); a bad context costs its coin only', async () => {
    const context = ctx(transport());
    expect((await failure(hyperliquidOpenInterest, 'XLM', context)).message).toBe(
      'XLM is delisted: not available',
    );
    expect((await failure(hyperliquidFunding, 'SOL', context)).message).toMatch(/unexpected entry shape/);
    expect((await hyperliquidOpenInterest.fetch(['BTC'], context)).has('BTC')).toBe(true);
  });

  it('a 429 is a rate limit; a 422 keeps its plain-text reason', async () => {
    const limited = await failure(
      hyperliquidFunding,
      'BTC',
      ctx(transportOf([['/info', { status: 429, body: '' }]])),
    );
    expect(limited.kind).toBe('rate-limited');
    const bad = await failure(
      hyperliquidFunding,
      'BTC',
      ctx(transportOf([['/info', { status: 422, body: 'Failed to deserialize the JSON body' }]])),
    );
    expect([bad.kind, bad.message]).toEqual(['error', 'HTTP 422: Failed to deserialize the JSON body']);
  });
});

describe('Kraken', () => {
  const dayAgoS = (Math.floor(1779990000000 / 3_600_000) * 3_600_000 - 86_400_000) / 1000;

  it('an odd pair costs its asset only, with the reason', async () => {
    const transport = transportOf([
      ['/Ticker', { body: F.krakenTicker }],
      ['/OHLC', { body: F.krakenOhlc(dayAgoS) }],
    ]);
    const answer = await krakenTicker.fetch(['BTC', 'SOL'], ctx(transport));
    expect(answer.get('BTC')?.value.last).toBe(100005);
    expect(answer.get('BTC')?.value.change24h).toBeCloseTo(100005 / 98000 - 1, 12);
    expect(answer.has('SOL')).toBe(false);
    expect(answer.reasons?.get('SOL')).toMatch(/unexpected entry shape/);
  });

  it('an unknown (delisted) pair fails the call: it is split, and only that pair fails', async () => {
    const transport = transportOf([
      ['pair=XBTUSD,ALGOUSD', { body: F.krakenUnknownPair }],
      ['pair=ALGOUSD', { body: F.krakenUnknownPair }],
      ['/Ticker', { body: F.krakenTicker }],
      ['/OHLC', { body: F.krakenOhlc(dayAgoS) }],
    ]);
    const answer = await krakenTicker.fetch(['BTC', 'ALGO'], ctx(transport));
    expect(answer.has('BTC')).toBe(true);
    expect(answer.reasons?.get('ALGO')).toBe(
      'Kraken error EQuery:Unknown asset pair: EQuery:Unknown asset pair',
    );
  });

  it('its rate limit in the envelope is a rate limit', async () => {
    const error = await failure(
      krakenTicker,
      'BTC',
      ctx(transportOf([['/Ticker', { body: F.krakenRateLimit }]])),
    );
    expect([error.kind, error.code]).toEqual(['rate-limited', 'EGeneral:Too many requests']);
  });
});

describe('CoinGecko', () => {
  it('a coin without data or with a null change costs its asset only; the others keep their values', async () => {
    const transport = transportOf([['/simple/price', { body: F.coingeckoSimplePrice }]]);
    const answer = await coingeckoTicker.fetch(['BTC', 'XRP', 'ETH', 'SOL'], ctx(transport));
    expect(answer.get('BTC')?.value).toEqual({
      last: 100000,
      change24h: 0.015,
      quoteVolume24h: 3e10,
      volumeScope: 'all-exchanges', // every exchange's trades, not one venue's
      bid: null,
      ask: null,
    });
    expect([...answer.keys()]).toEqual(['BTC']);
    expect(answer.reasons?.get('XRP')).toMatch(/unexpected entry shape/);
    expect(answer.reasons?.get('ETH')).toMatch(/usd_24h_change/);
    expect(answer.reasons?.get('SOL')).toBe('solana is not in the answer'); // delisted or renamed id
  });

  it('its 429 status object is a rate limit with its message', async () => {
    const error = await failure(
      coingeckoTicker,
      'BTC',
      ctx(transportOf([['/simple/price', { status: 429, body: F.coingeckoRateLimit }]])),
    );
    expect(error.kind).toBe('rate-limited');
    expect(error.message).toMatch(/429 You've exceeded the Rate Limit/);
  });
});

describe('Binance', () => {
  it('an odd row costs its asset only; an unknown (delisted) symbol is split out with -1121 kept', async () => {
    const rows = (url: string): Answer => {
      const wanted = JSON.parse(
        decodeURIComponent(new URL(url).searchParams.get('symbols') ?? '[]'),
      ) as string[];
      if (wanted.includes('LUNAUSDT')) return { status: 400, body: F.binanceInvalidSymbol };
      return { body: wanted.map((s) => F.binanceTickerRow(s, s === 'ETHUSDT' ? null : '100')) };
    };
    const transport = transportOf([['/api/v3/ticker/24hr', rows]]);
    const answer = await binanceSpotTicker.fetch(['BTC', 'ETH', 'LUNA', 'SOL'], ctx(transport));
    expect([...answer.keys()].sort()).toEqual(['BTC', 'SOL']);
    expect(answer.get('BTC')?.value).toMatchObject({ last: 100, change24h: 0.01 });
    expect(answer.reasons?.get('ETH')).toMatch(/unexpected entry shape/);
    expect(answer.reasons?.get('LUNA')).toBe('HTTP 400: -1121 Invalid symbol.');
  });

  it('-1003 over 429 is a rate limit; 451 marks the venue unavailable for the run', async () => {
    const limited = await failure(
      binanceUsdmFunding,
      'BTC',
      ctx(transportOf([['/fapi/', { status: 429, body: F.binanceRateLimit }]])),
    );
    expect([limited.kind, limited.code]).toEqual(['rate-limited', '-1003']);
    const restricted = await failure(
      binanceUsdmFunding,
      'BTC',
      ctx(transportOf([['/fapi/', { status: 451, body: F.binanceRestricted }]])),
    );
    expect(restricted.kind).toBe('unavailable');
    expect(gateSays('binance-usdm', restricted)).toBe(true);
  });
});

describe('Coinbase', () => {
  it('keeps its {message} on 404 (unknown or delisted product) and reads 429 as a rate limit', async () => {
    const missing = await failure(
      coinbaseTicker,
      'LUNA',
      ctx(transportOf([['/products/', { status: 404, body: F.coinbaseNotFound }]])),
    );
    expect([missing.kind, missing.message]).toEqual(['error', 'HTTP 404: NotFound']);
    const limited = await failure(
      coinbaseTicker,
      'BTC',
      ctx(transportOf([['/products/', { status: 429, body: F.coinbaseRateLimit }]])),
    );
    expect(limited.kind).toBe('rate-limited');
  });

  it('a product in auction mode has no book: unavailable with its status, never an empty book', async () => {
    const auction = await failure(
      coinbaseBook,
      'ETH',
      ctx(transportOf([['/products/ETH-USD/book', { body: F.coinbaseAuctionBook }]])),
    );
    expect(auction.message).toBe('ETH-USD is in auction mode (CAN_OPEN): no order book');
    expect(gateSays('coinbase', auction)).toBe(false); // one product, not the venue
  });
});
