// Fault tests: the live transport against a loopback server that answers from the simulator, with one fault per
// endpoint. Each fault costs exactly its section (null + an issue naming the cause); the rest of the run, and the
// published bodies, stay valid. When every venue fails, the snapshot has no price and the pipeline keeps the last
// good files.
import { afterEach, describe, expect, it } from 'vitest';
import { FREE_RESOURCES } from '../schemas/resources.ts';
import { TRACKED_ASSETS } from '../schemas/common.ts';
import { buildFreeSnapshots } from '../generator/engines/index.ts';
import type { MarketSnapshot } from '../generator/market/types.ts';
import { hasAnyPrice } from '../generator/pipeline.ts';
import { collectFor } from '../generator/market-source.ts';
import { SIMULATOR_ORDER } from '../generator/sources/adapters/plan.ts';
import type { SourcesConfigInput } from '../generator/sources/config.ts';
import { startReplayServer, transportHandler } from '../generator/sources/replay-server.ts';
import type { ReplayServer, ServedAnswer, ServedRequest } from '../generator/sources/replay-server.ts';
import { createSimulatedTransport } from '../generator/sources/simulator/transport.ts';
import { fixture, testConfig } from './live-helpers.ts';

const AS_OF = Date.UTC(2026, 4, 2, 9, 41, 5);
type Rule = [fragment: string, answer: (request: ServedRequest) => ServedAnswer | null];

let server: ReplayServer | undefined;
afterEach(() => server?.close());

/** The simulator over HTTP; the first rule whose fragment is in "/venue/path" (decoded) and that answers wins. */
async function simulatedVenues(rules: Rule[] = []): Promise<ReplayServer> {
  const simulator = transportHandler(createSimulatedTransport({ seed: 4, asOf: AS_OF }));
  server = await startReplayServer((request) => {
    const path = decodeURIComponent(`/${request.venue}${request.path}`);
    for (const [fragment, answer] of rules) {
      const reply = path.includes(fragment) ? answer(request) : null;
      if (reply) return reply;
    }
    return simulator(request);
  });
  return server;
}

const liveRun = (venues: ReplayServer, config: SourcesConfigInput = {}) =>
  collectFor('live', {
    seed: 0,
    asOf: AS_OF,
    symbols: TRACKED_ASSETS,
    env: {},
    config: testConfig(venues, { order: SIMULATOR_ORDER, estimateLiquidations: false, ...config }),
  });

/**
 * CoinGecko's documented answer, its update times moved so that the newest is `asOf` (its 2024 times are too old to
 * pass as the run's current prices).
 */
function coingeckoAt(asOf: number): string {
  const coins = JSON.parse(fixture('coingecko/simple-price.json')) as Record<
    string,
    { last_updated_at: number }
  >;
  const shift = asOf / 1000 - Math.max(...Object.values(coins).map((coin) => coin.last_updated_at));
  for (const coin of Object.values(coins)) coin.last_updated_at += shift;
  return JSON.stringify(coins);
}

const asset = (snapshot: MarketSnapshot, symbol: string) => snapshot.assets.find((a) => a.symbol === symbol)!;
const issue = (snapshot: MarketSnapshot, symbol: string | null, section: string) =>
  snapshot.issues.find((i) => i.symbol === symbol && i.section === section);
const calls = (venues: ReplayServer, fragment: string) =>
  venues.requests.filter((r) => decodeURIComponent(r.path).includes(fragment));

/** Every free body the engines build from the snapshot passes its published schema. */
function expectPublishable(snapshot: MarketSnapshot) {
  const clock = { asOf: AS_OF, generatedAt: AS_OF, nextUpdateDue: AS_OF + 60_000 };
  const free = buildFreeSnapshots(snapshot, clock);
  const bodies: Record<string, unknown> = { ...free, reasoning: free.reasoning.BTC };
  for (const resource of FREE_RESOURCES.filter((r) => r.id in bodies)) {
    expect(resource.schema.safeParse(bodies[resource.id]).success, resource.id).toBe(true);
  }
  return free;
}

describe('a live run degrades one section per fault', () => {
  it('timeout, 500, truncated JSON, missing field, number as string: each costs its own section only', async () => {
    const venues = await simulatedVenues([
      ['/api/v3/depth?symbol=BTCUSDT', () => ({ body: '{}', delayMs: 2_500 })],
      ['openInterestHist?symbol=SOLUSDT', () => ({ status: 500, body: 'upstream exploded' })],
      ['/api/v3/klines?symbol=XRPUSDT', () => ({ body: '[[1499040000000,"0.01634790",', status: 200 })],
      [
        '/api/v3/depth?symbol=ETHUSDT',
        () => ({ body: fixture('binance-spot/depth.json'), cutAfterBytes: 30 }),
      ],
      [
        '/fapi/v1/premiumIndex?symbol=XLMUSDT',
        () => ({
          body: '{"symbol":"XLMUSDT","markPrice":"0.1","indexPrice":"0.1","nextFundingTime":1,"time":1}',
        }),
      ],
      [
        '/api/v3/klines?symbol=HBARUSDT',
        () => ({ body: '[["1499040000000","1","2","0.5","1.5","10",1499043599999,"15",3,"5","7","0"]]' }),
      ],
    ]);
    // The timeout is generous enough that only the deliberately slow answer hits it on a loaded 2-core machine.
    const snapshot = await liveRun(venues, { http: { timeoutMs: 1_000, retries: 1 } });

    expect(snapshot.mode).toBe('live');
    expect(asset(snapshot, 'BTC').book).toBeNull();
    expect(issue(snapshot, 'BTC', 'book')?.message).toBe('timed out after 1000 ms');
    expect(asset(snapshot, 'SOL').openInterest).toBeNull();
    expect(issue(snapshot, 'SOL', 'openInterest')?.message).toBe('HTTP 500: upstream exploded');
    expect(calls(venues, 'openInterestHist?symbol=SOLUSDT')).toHaveLength(2); // one retry, then the issue
    expect(asset(snapshot, 'XRP').candles).toBeNull();
    expect(issue(snapshot, 'XRP', 'candles')?.message).toBe('response is not valid JSON');
    expect(asset(snapshot, 'ETH').book).toBeNull();
    expect(issue(snapshot, 'ETH', 'book')?.message).toMatch(/^network error: terminated/);
    expect(asset(snapshot, 'XLM').funding).toBeNull();
    expect(issue(snapshot, 'XLM', 'funding')?.message).toMatch(
      /unexpected response shape[\s\S]*lastFundingRate/,
    );
    expect(asset(snapshot, 'HBAR').candles).toBeNull();
    expect(issue(snapshot, 'HBAR', 'candles')?.message).toMatch(/unexpected response shape/);
    expect(snapshot.issues).toHaveLength(6);

    // Everything else arrived, with live provenance.
    expect(asset(snapshot, 'BTC').candles?.value).toHaveLength(500);
    expect(asset(snapshot, 'SOL').funding?.provenance).toMatchObject({ venue: 'binance-usdm', mode: 'live' });
    expect(snapshot.assets.every((a) => a.ticker !== null && a.liquidations !== null)).toBe(true);

    const free = expectPublishable(snapshot);
    expect(free.mainBrain.brain.status).toBe('degraded');
    expect(free.liquidityLite.limitations).toContain('No order book for BTC and ETH this run.');
    expect(free.reasoning.BTC?.reasoning.limitations.join(' ')).toContain('timed out after 1000 ms');
    expect(free.derivatives.limitations).toContain('No open interest for SOL this run.');
    expect(free.reasoning.SOL?.reasoning.limitations.join(' ')).toContain('HTTP 500: upstream exploded');
    expect(free.mainBrain.coins.BTC?.price_source).toBe('binance-spot');
    expect(hasAnyPrice(snapshot)).toBe(true);
  });

  it('honours Retry-After on 429 and gets the data on the retry; a lasting 429 becomes the issue', async () => {
    let first = true;
    const venues = await simulatedVenues([
      [
        '/fapi/v1/premiumIndex?symbol=ETHUSDT',
        () => {
          if (!first) return null;
          first = false;
          return {
            status: 429,
            headers: { 'retry-after': '1' },
            body: '{"code":-1003,"msg":"Too many requests"}',
          };
        },
      ],
      [
        '/fapi/v1/premiumIndex?symbol=BTCUSDT',
        () => ({ status: 429, headers: { 'retry-after': '0' }, body: '' }),
      ],
    ]);
    const snapshot = await liveRun(venues, { http: { retries: 2 } });

    const eth = calls(venues, '/fapi/v1/premiumIndex?symbol=ETHUSDT');
    expect(eth).toHaveLength(2);
    expect(eth[1]!.at - eth[0]!.at).toBeGreaterThanOrEqual(990); // waited the second the venue asked for
    expect(asset(snapshot, 'ETH').funding).not.toBeNull();
    expect(issue(snapshot, 'ETH', 'funding')).toBeUndefined();

    expect(calls(venues, '/fapi/v1/premiumIndex?symbol=BTCUSDT')).toHaveLength(3);
    expect(asset(snapshot, 'BTC').funding).toBeNull();
    expect(issue(snapshot, 'BTC', 'funding')?.message).toBe('HTTP 429 (rate limited)');
  });

  it('does not wait longer than the configured ceiling for Retry-After', async () => {
    const venues = await simulatedVenues([
      [
        '/fapi/v1/premiumIndex?symbol=ETHUSDT',
        () => ({ status: 503, headers: { 'retry-after': '3600' }, body: 'maintenance' }),
      ],
    ]);
    const started = performance.now();
    const snapshot = await liveRun(venues, { http: { retries: 3, maxRetryAfterMs: 2_000 } });
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(calls(venues, '/fapi/v1/premiumIndex?symbol=ETHUSDT')).toHaveLength(1);
    expect(issue(snapshot, 'ETH', 'funding')?.message).toBe('HTTP 503: maintenance');
  });
});

describe('a venue that refuses the run (451, 403)', () => {
  it('is called once, skipped afterwards, named once, and its sections fall back', async () => {
    const venues = await simulatedVenues([
      [
        '/binance-spot/',
        () => ({ status: 451, body: '{"code":0,"msg":"Service unavailable from a restricted location"}' }),
      ],
      ['/coingecko/api/v3/simple/price', () => ({ body: coingeckoAt(AS_OF) })],
    ]);
    const snapshot = await liveRun(venues, {
      concurrency: 1,
      order: { ...SIMULATOR_ORDER, ticker: ['binance-spot', 'coingecko'] },
    });

    expect(venues.requests.filter((r) => r.venue === 'binance-spot')).toHaveLength(1);
    const refusal = snapshot.issues.filter((i) => i.section === 'all');
    expect(refusal).toEqual([
      {
        venue: 'binance-spot',
        symbol: null,
        section: 'all',
        message: expect.stringMatching(/^venue unavailable for this run \(HTTP 451, restricted location\)/),
      },
    ]);
    // CoinGecko knows BTC, ETH and HBAR in this fixture: their price falls back, with its provenance.
    expect(asset(snapshot, 'BTC').ticker?.provenance).toMatchObject({
      venue: 'coingecko',
      asOf: AS_OF,
    });
    expect(asset(snapshot, 'XRP').ticker).toBeNull();
    expect(issue(snapshot, 'XRP', 'ticker')?.message).toMatch(
      /^not called: the venue refused this run earlier/,
    );
    expect(snapshot.assets.every((a) => a.candles === null && a.book === null)).toBe(true);
    expect(snapshot.assets.every((a) => a.funding !== null)).toBe(true); // binance-usdm is another venue

    const free = expectPublishable(snapshot);
    expect(free.mainBrain.coins.BTC?.price_source).toBe('coingecko');
    expect(free.mainBrain.brain.limitations.join(' ')).toContain('venue unavailable for this run (HTTP 451');
    expect(free.reasoning.BTC?.reasoning.limitations.join(' ')).toContain('venue unavailable for this run');
  });

  it('treats 403 the same way', async () => {
    const venues = await simulatedVenues([['/fapi/', () => ({ status: 403, body: 'Forbidden' })]]);
    const snapshot = await liveRun(venues);
    expect(snapshot.issues.filter((i) => i.section === 'all').map((i) => i.venue)).toEqual(['binance-usdm']);
    expect(snapshot.assets.every((a) => a.funding === null && a.openInterest === null)).toBe(true);
    expect(snapshot.assets.every((a) => a.ticker !== null)).toBe(true);
  });
});

describe('when every venue fails', () => {
  it('the snapshot has no price at all, so the pipeline publishes nothing', async () => {
    const venues = await simulatedVenues([['/', () => ({ status: 500, body: 'down' })]]);
    const snapshot = await liveRun(venues, { http: { retries: 0 } });
    expect(snapshot.assets).toHaveLength(TRACKED_ASSETS.length);
    expect(snapshot.assets.every((a) => a.ticker === null && a.candles === null)).toBe(true);
    expect(snapshot.issues).toHaveLength(6 * TRACKED_ASSETS.length); // every section of every asset, named
    expect(hasAnyPrice(snapshot)).toBe(false);
  });
});
