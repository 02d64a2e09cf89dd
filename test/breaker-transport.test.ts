// The live transport's per-run breaker for slow hosts, against a real loopback server: two timeouts in a row skip a
// host for the rest of the run (no retry of the call that closed it, later calls fail at once naming the skip), an
// answer in between resets the count, and other hosts are still called.
import { afterEach, describe, expect, it } from 'vitest';
import { createLiveTransport } from '../generator/sources/http/live-transport.ts';
import { seededRandom } from '../generator/sources/http/retry-policy.ts';
import { startReplayServer } from '../generator/sources/replay-server.ts';
import type { ReplayServer } from '../generator/sources/replay-server.ts';

const TIMEOUT_MS = 1_000;
const SKIPPED = `binance-spot skipped for this run after 2 timeouts in a row (${TIMEOUT_MS} ms each)`;
const BINANCE = 'https://api.binance.com/api/v3';

let server: ReplayServer | undefined;
afterEach(() => server?.close());

/** `/slow` answers long after the timeout; anything else at once. */
async function venue(): Promise<ReplayServer> {
  server = await startReplayServer(({ path }) =>
    path.includes('slow') ? { body: '{}', delayMs: 5_000 } : { body: '{"ok":true}' },
  );
  return server;
}

/** Binance spot and Coinbase routed to the loopback server; backoffs short and real. */
function transportTo(venues: ReplayServer, retries: number) {
  return createLiveTransport({
    retry: { retries, backoffMs: 5, maxBackoffMs: 20, maxRetryAfterMs: 1_000 },
    timeoutMs: TIMEOUT_MS,
    limitsFor: () => ({ concurrency: 4, requestsPerSecond: 0 }),
    random: seededRandom(3),
    routes: {
      'https://api.binance.com': `${venues.origin}/binance-spot`,
      'https://api.exchange.coinbase.com': `${venues.origin}/coinbase`,
    },
  });
}

const requestsTo = (venues: ReplayServer, venueId: string, fragment: string) =>
  venues.requests.filter((r) => r.venue === venueId && r.path.includes(fragment));
const failure = (promise: Promise<unknown>): Promise<string> =>
  promise.then(
    () => 'answered',
    (error: unknown) => (error instanceof Error ? error.message : String(error)),
  );

describe('a host that times out', () => {
  it('is not retried once its second timeout in a row skips it; later calls fail at once; other hosts answer', async () => {
    const venues = await venue();
    const transport = transportTo(venues, 2);

    expect((await transport.fetch({ url: `${BINANCE}/fast` })).status).toBe(200);
    // First attempt times out, the retry times out: the host is skipped and the third attempt is not made.
    expect(await failure(transport.fetch({ url: `${BINANCE}/slow` }))).toBe(
      `timed out after ${TIMEOUT_MS} ms; not retried: ${SKIPPED}`,
    );
    expect(requestsTo(venues, 'binance-spot', 'slow')).toHaveLength(2);

    // A call that would answer at once is not made either: its section falls back to the next venue.
    expect(await failure(transport.fetch({ url: `${BINANCE}/fast` }))).toBe(`not called: ${SKIPPED}`);
    expect(requestsTo(venues, 'binance-spot', 'fast')).toHaveLength(1);

    const coinbase = await transport.fetch({
      url: 'https://api.exchange.coinbase.com/products/BTC-USD/book',
    });
    expect(coinbase.status).toBe(200);
  });

  it('counts only timeouts in a row: an answer in between resets the count', async () => {
    const venues = await venue();
    const transport = transportTo(venues, 0);
    const slow = () => failure(transport.fetch({ url: `${BINANCE}/slow` }));
    const fast = () => failure(transport.fetch({ url: `${BINANCE}/fast` }));

    expect(await slow()).toBe(`timed out after ${TIMEOUT_MS} ms`);
    expect(await fast()).toBe('answered'); // resets
    expect(await slow()).toBe(`timed out after ${TIMEOUT_MS} ms`);
    expect(await fast()).toBe('answered'); // one timeout in a row: still called
    expect(await slow()).toBe(`timed out after ${TIMEOUT_MS} ms`);
    expect(await slow()).toBe(`timed out after ${TIMEOUT_MS} ms`); // the second in a row skips the host
    expect(await fast()).toBe(`not called: ${SKIPPED}`);
    expect(await slow()).toBe(`not called: ${SKIPPED}`);
    expect(requestsTo(venues, 'binance-spot', 'slow')).toHaveLength(4);
    expect(requestsTo(venues, 'binance-spot', 'fast')).toHaveLength(2);
  });

  it('calls side by side: four in flight time out, the ones queued behind them are never sent', async () => {
    const venues = await venue();
    const transport = transportTo(venues, 2);
    const symbols = ['BTC', 'ETH', 'XRP', 'SOL', 'ALGO', 'XLM', 'HBAR', 'DOGE', 'ADA', 'DOT', 'LTC', 'BCH'];
    const messages = await Promise.all(
      symbols.map((s) => failure(transport.fetch({ url: `${BINANCE}/slow?symbol=${s}USDT` }))),
    );
    // 4 in flight, and one more in the slot the first timeout freed; before, 12 calls x 3 attempts reached it.
    expect(requestsTo(venues, 'binance-spot', 'slow').length).toBeLessThanOrEqual(5);
    expect(messages.every((m) => m.includes(SKIPPED) || m === `timed out after ${TIMEOUT_MS} ms`)).toBe(true);
    expect(messages.filter((m) => m === `not called: ${SKIPPED}`).length).toBeGreaterThanOrEqual(7);
  });
});
