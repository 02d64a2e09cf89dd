// The venue registry: each venue described once (its adapter module's descriptor), and every table about venues
// derived from the descriptors, so that they cannot disagree.
import { describe, expect, it } from 'vitest';
import { DEFAULT_LIVE_ORDER, SOURCE_CATALOG } from '../generator/sources/adapters/plan.ts';
import { SECTION_NAMES } from '../generator/sources/adapters/source.ts';
import { classifyHttpError, isRateLimitedAnswer } from '../generator/sources/adapters/venue-errors.ts';
import { resolveConfig } from '../generator/sources/config.ts';
import { createSimulatedTransport } from '../generator/sources/simulator/transport.ts';
import { VENUE_BASE_URLS, VENUE_IDS, VENUES, venueErrorsForHost } from '../generator/sources/venues.ts';

describe('venue descriptors', () => {
  it('derive the default fallback order from each venue rank', () => {
    expect(DEFAULT_LIVE_ORDER).toEqual({
      candles: ['binance-spot', 'coinbase', 'kraken'],
      ticker: ['binance-spot', 'coinbase', 'kraken', 'coingecko'],
      book: ['binance-spot', 'coinbase'],
      funding: ['binance-usdm', 'bybit', 'okx', 'hyperliquid'],
      openInterest: ['binance-usdm', 'bybit', 'okx', 'hyperliquid'],
      liquidations: ['okx'],
    });
  });

  it('name their sources by their own id, one canonical host each', () => {
    for (const venue of VENUES)
      for (const section of SECTION_NAMES) {
        const served = venue.serves[section];
        if (served) expect([served.source.venue, section]).toEqual([venue.id, section]);
      }
    const catalogued = SECTION_NAMES.flatMap((section) => Object.keys(SOURCE_CATALOG[section]));
    expect(new Set(catalogued)).toEqual(new Set(VENUE_IDS)); // every venue serves something
    const hosts = VENUES.map((venue) => new URL(venue.baseUrl).host);
    expect(new Set(hosts).size).toBe(VENUES.length);
  });

  it('give the configuration its base URLs and per-host rates', () => {
    const config = resolveConfig({});
    expect(config.venues.kraken).toMatchObject({ baseUrl: VENUE_BASE_URLS.kraken, requestsPerSecond: 1 });
    expect(config.venues.coingecko.requestsPerSecond).toBe(0.4);
    expect(config.venues.bybit.requestsPerSecond).toBe(8); // no rate of its own: the http default
  });

  it('read each venue own error envelope and rate-limit codes', () => {
    const bybit = venueErrorsForHost('api.bybit.com');
    expect(isRateLimitedAnswer(bybit, 403, '{"retCode":10006,"retMsg":"Too many visits!"}')).toBe(true);
    expect(classifyHttpError(bybit, 403, '<html>block access from your country</html>').kind).toBe(
      'unavailable',
    );
    const okx = venueErrorsForHost('www.okx.com');
    expect(isRateLimitedAnswer(okx, 200, '{"code":"50011","msg":"Too Many Requests","data":[]}')).toBe(true);
    expect(classifyHttpError(okx, 400, '{"code":"51001","msg":"Instrument ID does not exist"}')).toEqual({
      kind: 'error',
      code: '51001',
      message: 'Instrument ID does not exist',
    });
    // Kraken's envelope is its error array; a Bybit-style body means nothing to it.
    const kraken = venueErrorsForHost('api.kraken.com');
    expect(classifyHttpError(kraken, 400, '{"error":["EQuery:Unknown asset pair"]}').code).toBe(
      'EQuery:Unknown asset pair',
    );
    expect(classifyHttpError(kraken, 400, '{"retCode":10001,"retMsg":"x"}').code).toBeNull();
    // A host no venue uses: any venue's envelope is read.
    expect(classifyHttpError(venueErrorsForHost('example.org'), 429, '{"code":-1003,"msg":"slow"}')).toEqual({
      kind: 'rate-limited',
      code: '-1003',
      message: 'slow',
    });
  });

  it('are all spoken by the simulator, POST where the descriptor says so', async () => {
    const transport = createSimulatedTransport({ seed: 1, asOf: Date.UTC(2026, 2, 10, 14) });
    for (const venue of VENUES) {
      const served = Object.values(venue.serves)[0]!;
      const answer = await served.source.fetch(['BTC'], {
        transport,
        asOf: Date.UTC(2026, 2, 10, 14),
        candleLimit: 24,
        shared: new Map(),
      });
      expect([venue.id, answer.has('BTC')]).toEqual([venue.id, true]);
    }
    const hyperliquid = VENUES.find((venue) => venue.method === 'POST')!;
    const get = await transport.fetch({ url: `${hyperliquid.baseUrl}/info` });
    expect(get.status).toBe(404);
  });
});
