// A slow venue must not cost the run: the audit routed every venue to a loopback server and made Binance spot answer
// after 15 s. With the default settings each of its ~15 calls took 3 attempts of 10 s at 4 in flight, the run hit its
// 120 s deadline before Coinbase was asked, and every asset lost its order book. Now a host that times out twice in
// a row is skipped for the rest of the run: calls queued for it fail at once, and their sections fall back.
// Real live transport, real loopback servers; the proof is in the requests the slow host got, not in wall time.
import { createServer } from 'node:net';
import type { AddressInfo, Server, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { TRACKED_ASSETS } from '../schemas/common.ts';
import { buildFreeSnapshots } from '../generator/engines/index.ts';
import type { MarketSnapshot } from '../generator/market/types.ts';
import { collectFor } from '../generator/market-source.ts';
import { SIMULATOR_ORDER } from '../generator/sources/adapters/plan.ts';
import type { SourcesConfigInput } from '../generator/sources/config.ts';
import { startReplayServer, transportHandler } from '../generator/sources/replay-server.ts';
import type { ReplayServer, ServedAnswer, ServedRequest } from '../generator/sources/replay-server.ts';
import { createSimulatedTransport } from '../generator/sources/simulator/transport.ts';
import { testConfig } from './live-helpers.ts';

const AS_OF = Date.UTC(2026, 4, 2, 9, 41, 5);
const TIMEOUT_MS = 1_000;
/** Binance spot first, Coinbase as its fallback, for every kind of data Binance spot serves. */
const ORDER = {
  ...SIMULATOR_ORDER,
  candles: ['binance-spot', 'coinbase'],
  ticker: ['binance-spot', 'coinbase'],
  book: ['binance-spot', 'coinbase'],
} as const;
/**
 * The most requests a host with 4 calls in flight gets before its second timeout closes it: the 4, and one started in
 * the slot the first timeout freed. Before the fix every call made its 3 attempts (~15 calls, ~45 requests).
 */
const MOST_REQUESTS_OF_SKIPPED_HOST = 4 + 1;
const SKIPPED = `binance-spot skipped for this run after 2 timeouts in a row (${TIMEOUT_MS} ms each)`;

let venues: ReplayServer | undefined;
let silent: Server | undefined;
const held: Socket[] = [];
afterEach(async () => {
  await venues?.close();
  for (const socket of held.splice(0)) socket.destroy();
  await new Promise((resolve) => (silent ? silent.close(resolve) : resolve(undefined)));
  venues = silent = undefined;
});

/** The simulator over HTTP, each venue in its documented format; `answer` may override a request's answer. */
async function simulatedVenues(
  answer: (request: ServedRequest) => ServedAnswer | null,
): Promise<ReplayServer> {
  const simulator = transportHandler(createSimulatedTransport({ seed: 4, asOf: AS_OF }));
  venues = await startReplayServer((request) => answer(request) ?? simulator(request));
  return venues;
}

/**
 * A server that accepts connections, reads requests and never answers; returns its origin and the request lines it
 * got (counted by request, not by connection: the HTTP client may open spare connections it never uses).
 */
async function silentServer(): Promise<{ origin: string; requests: string[] }> {
  const requests: string[] = [];
  silent = createServer((socket) => {
    held.push(socket);
    socket.on('data', (chunk) => {
      const line = String(chunk).split('\r\n')[0] ?? '';
      if (/^(GET|POST) /.test(line)) requests.push(line);
    });
  });
  await new Promise<void>((resolve) => silent!.listen(0, '127.0.0.1', resolve));
  const { port } = silent.address() as AddressInfo;
  return { origin: `http://127.0.0.1:${port}`, requests };
}

/** A live run at the default retries (2) and host concurrency (4), with the short timeout of the tests. */
const liveRun = (server: ReplayServer, extra: SourcesConfigInput = {}) =>
  collectFor('live', {
    seed: 0,
    asOf: AS_OF,
    symbols: TRACKED_ASSETS,
    env: {},
    config: testConfig(server, {
      order: ORDER,
      candleLimit: 48,
      estimateLiquidations: false,
      ...extra,
      http: { timeoutMs: TIMEOUT_MS, retries: 2, ...extra.http },
    }),
  });

const asset = (snapshot: MarketSnapshot, symbol: string) => snapshot.assets.find((a) => a.symbol === symbol)!;
const issuesOf = (snapshot: MarketSnapshot, symbol: string, section: string) =>
  snapshot.issues.filter((i) => i.symbol === symbol && i.section === section);

describe('a venue that answers after the timeout', () => {
  it('is skipped after two timeouts in a row; its sections come from the fallback and the issue names the skip', async () => {
    const server = await simulatedVenues((request) => {
      if (request.venue === 'binance-spot') return { body: '{}', delayMs: 5_000 };
      // Coinbase has no HBAR book this run, so HBAR's book ends missing and its issues are published.
      if (request.path.startsWith('/products/HBAR-USD/book'))
        return { status: 404, body: '{"message":"NotFound"}' };
      return null;
    });
    const snapshot = await liveRun(server);

    const slow = server.requests.filter((r) => r.venue === 'binance-spot');
    expect(slow.length).toBeGreaterThanOrEqual(2);
    expect(slow.length).toBeLessThanOrEqual(MOST_REQUESTS_OF_SKIPPED_HOST);

    // Every asset's candles, ticker and book (but HBAR's book) came from the healthy fallback.
    for (const { symbol } of snapshot.assets) {
      const a = asset(snapshot, symbol);
      expect(a.candles?.provenance.venue, symbol).toBe('coinbase');
      expect(a.ticker?.provenance.venue, symbol).toBe('coinbase');
      if (symbol !== 'HBAR') expect(a.book?.provenance.venue, symbol).toBe('coinbase');
    }
    expect(asset(snapshot, 'HBAR').book).toBeNull();
    // HBAR's book was queued behind the timed-out calls: not called, and the issue says why.
    expect(issuesOf(snapshot, 'HBAR', 'book')).toEqual([
      { venue: 'binance-spot', symbol: 'HBAR', section: 'book', message: `not called: ${SKIPPED}` },
      { venue: 'coinbase', symbol: 'HBAR', section: 'book', message: expect.stringMatching(/^HTTP 404/) },
    ]);

    // Published: the fallback's data, and the skip in HBAR's limitations.
    const clock = { asOf: AS_OF, generatedAt: AS_OF, nextUpdateDue: AS_OF + 60_000 };
    const free = buildFreeSnapshots(snapshot, clock);
    expect(free.mainBrain.coins.BTC?.price_source).toBe('coinbase');
    expect(free.liquidityLite.limitations).toContain('No order book for HBAR this run.');
    expect(free.reasoning.HBAR?.reasoning.limitations.join(' ')).toContain(SKIPPED);
  }, 60_000);
});

describe('a venue that accepts connections and never answers', () => {
  it('gets at most a few requests; every asset falls back to the healthy venue', async () => {
    const server = await simulatedVenues(() => null);
    const hole = await silentServer();
    const snapshot = await liveRun(server, {
      venues: { 'binance-spot': { baseUrl: `${hole.origin}/binance-spot` } },
    });

    expect(hole.requests.length).toBeGreaterThanOrEqual(2);
    expect(hole.requests.length, hole.requests.join('\n')).toBeLessThanOrEqual(MOST_REQUESTS_OF_SKIPPED_HOST);
    for (const a of snapshot.assets) {
      expect(a.candles?.provenance.venue, a.symbol).toBe('coinbase');
      expect(a.ticker?.provenance.venue, a.symbol).toBe('coinbase');
      expect(a.book?.provenance.venue, a.symbol).toBe('coinbase');
      expect(a.funding?.provenance.venue, a.symbol).toBe('binance-usdm'); // another host, still called
    }
    // Every section came from the fallback, so no section names the skip: the run names it once, as a refusal is.
    expect(snapshot.issues.filter((i) => i.section === 'all')).toEqual([
      {
        venue: 'binance-spot',
        symbol: null,
        section: 'all',
        message: expect.stringMatching(
          /^binance-spot skipped for this run after 2 timeouts in a row \(\d+ ms each\); its later calls were not made/,
        ),
      },
    ]);
  }, 60_000);
});
