// The live transport on its own: retries, Retry-After, seeded backoff, the per-host budget and origin routing.
import { afterEach, describe, expect, it } from 'vitest';
import { HostBudget } from '../generator/sources/http/host-budget.ts';
import { createLiveTransport, routeUrl } from '../generator/sources/http/live-transport.ts';
import type { LiveTransportOptions } from '../generator/sources/http/live-transport.ts';
import { backoffDelay, parseRetryAfter, seededRandom } from '../generator/sources/http/retry-policy.ts';
import { startReplayServer } from '../generator/sources/replay-server.ts';
import type { ReplayServer, ServedAnswer } from '../generator/sources/replay-server.ts';
import { freePort } from './free-port.ts';

const POLICY = { retries: 3, backoffMs: 100, maxBackoffMs: 1_000, maxRetryAfterMs: 10_000 };
const NOW = Date.UTC(2026, 0, 1);
const URL_BTC = 'https://api.binance.com/api/v3/depth?symbol=BTCUSDT&limit=100';

/** A transport over scripted answers, whose waits are recorded instead of slept. */
function scripted(answers: Array<ServedAnswer | Error>, options: Partial<LiveTransportOptions> = {}) {
  const waits: number[] = [];
  const urls: string[] = [];
  const transport = createLiveTransport({
    retry: POLICY,
    timeoutMs: 1_000,
    limitsFor: () => ({ concurrency: 4, requestsPerSecond: 0 }),
    random: seededRandom(7),
    now: () => NOW,
    sleep: async (ms) => void waits.push(ms),
    fetch: async (input) => {
      urls.push(String(input));
      const next = answers.shift() ?? { body: '{}' };
      if (next instanceof Error) throw next;
      return new Response(next.body, { status: next.status ?? 200, headers: next.headers });
    },
    ...options,
  });
  return { transport, waits, urls };
}

describe('retries', () => {
  it('waits what Retry-After asks on 429 (seconds) and 503 (HTTP date), then succeeds', async () => {
    const later = new Date(NOW + 4_000).toUTCString();
    const { transport, waits } = scripted([
      { status: 429, headers: { 'retry-after': '7' }, body: '' },
      { status: 503, headers: { 'retry-after': later }, body: '' },
      { body: '{"ok":true}' },
    ]);
    const response = await transport.fetch({ url: URL_BTC });
    expect(response).toMatchObject({ status: 200, body: '{"ok":true}' });
    expect(waits).toEqual([7_000, 4_000]);
  });

  it('backs off exponentially with seeded jitter when no Retry-After is given, then returns the last answer', async () => {
    const failing = () => [500, 502, 504, 500].map((status) => ({ status, body: 'no' }));
    const a = scripted(failing());
    const b = scripted(failing());
    expect((await a.transport.fetch({ url: URL_BTC })).status).toBe(500);
    await b.transport.fetch({ url: URL_BTC });
    expect(a.waits).toHaveLength(3);
    expect(a.waits).toEqual(b.waits); // same seed, same waits
    a.waits.forEach((wait, attempt) => {
      const step = Math.min(POLICY.maxBackoffMs, POLICY.backoffMs * 2 ** attempt);
      expect(wait).toBeGreaterThanOrEqual(step / 2);
      expect(wait).toBeLessThanOrEqual(step);
    });
    const other = [0, 1, 2].map((i) => backoffDelay(i, POLICY, seededRandom(8)));
    expect(other).not.toEqual(a.waits);
  });

  it('gives up at once when Retry-After exceeds the ceiling, and never retries a 4xx answer', async () => {
    const long = scripted([{ status: 429, headers: { 'retry-after': '600' }, body: '' }]);
    expect((await long.transport.fetch({ url: URL_BTC })).status).toBe(429);
    expect(long.waits).toEqual([]);
    const refused = scripted([{ status: 451, body: 'restricted' }]);
    expect((await refused.transport.fetch({ url: URL_BTC })).status).toBe(451);
    expect(refused.urls).toHaveLength(1);
  });

  it('retries network errors and reports the last one', async () => {
    const reset = Object.assign(new TypeError('fetch failed'), {
      cause: { code: 'ECONNRESET', message: 'read ECONNRESET' },
    });
    const { transport, urls } = scripted([reset, reset, reset, reset]);
    await expect(transport.fetch({ url: URL_BTC })).rejects.toThrow('network error: read ECONNRESET');
    expect(urls).toHaveLength(4);
  });

  it('reads Retry-After in both forms', () => {
    expect(parseRetryAfter('2', NOW)).toBe(2_000);
    expect(parseRetryAfter(new Date(NOW + 1_500).toUTCString(), NOW)).toBe(1_000); // HTTP dates have whole seconds
    expect(parseRetryAfter('soon', NOW)).toBeNull();
    expect(parseRetryAfter(undefined, NOW)).toBeNull();
  });
});

describe('routing and budget', () => {
  let server: ReplayServer | undefined;
  afterEach(() => server?.close());

  it('routes a canonical origin to a configured base, keeping path and query', () => {
    const routes = { 'https://api.binance.com': 'http://127.0.0.1:9/binance-spot/' };
    expect(routeUrl(URL_BTC, routes)).toBe(
      'http://127.0.0.1:9/binance-spot/api/v3/depth?symbol=BTCUSDT&limit=100',
    );
    expect(routeUrl('https://www.okx.com/x', routes)).toBe('https://www.okx.com/x');
  });

  it('keeps at most N calls in flight per host and spaces their starts', async () => {
    let inFlight = 0;
    let peak = 0;
    server = await startReplayServer(async () => {
      peak = Math.max(peak, ++inFlight);
      await new Promise((resolve) => setTimeout(resolve, 40));
      inFlight--;
      return { body: '{}' };
    });
    const starts: number[] = [];
    const transport = createLiveTransport({
      retry: { ...POLICY, retries: 0 },
      timeoutMs: 2_000,
      limitsFor: () => ({ concurrency: 2, requestsPerSecond: 50 }),
      random: seededRandom(1),
      routes: { 'https://api.binance.com': server.origin },
      fetch: (input, init) => {
        starts.push(performance.now());
        return fetch(input, init);
      },
    });
    await Promise.all(Array.from({ length: 6 }, () => transport.fetch({ url: URL_BTC })));
    expect(peak).toBe(2);
    expect(server.requests).toHaveLength(6);
    // 50 per second: the budget spaces the starts of its tasks 20 ms apart (in whole ms). Seen from the fetch each
    // task then makes, one gap may shrink by what a busy machine delays between a task's start and its fetch (a CI
    // run saw 16.8 ms), but never to a burst, and the six starts span at least five spacings.
    for (let i = 1; i < starts.length; i++) expect(starts[i]! - starts[i - 1]!).toBeGreaterThanOrEqual(10);
    expect(starts.at(-1)! - starts[0]!).toBeGreaterThanOrEqual(5 * 20 - 5);
  });

  it('gives each host its own budget', async () => {
    const started: string[] = [];
    const budget = new HostBudget(() => ({ concurrency: 1, requestsPerSecond: 0 }));
    let release!: () => void;
    const blocked = budget.run('a', () => new Promise<void>((resolve) => (release = resolve)));
    await budget.run('b', async () => void started.push('b'));
    expect(started).toEqual(['b']); // host b did not wait for host a
    release();
    await blocked;
  });
});

describe('a host that cannot be reached', () => {
  /** A transport over the real global fetch, counting the calls that reach the network; waits recorded, not slept. */
  function counted(routes: Record<string, string>) {
    const attempts: string[] = [];
    const transport = createLiveTransport({
      retry: { retries: 2, backoffMs: 100, maxBackoffMs: 1_000, maxRetryAfterMs: 10_000 },
      timeoutMs: 2_000,
      limitsFor: () => ({ concurrency: 4, requestsPerSecond: 0 }),
      random: seededRandom(7),
      sleep: async () => undefined,
      routes,
      fetch: (input, init) => {
        attempts.push(new URL(String(input)).host);
        return fetch(input, init);
      },
    });
    return { transport, attempts };
  }

  let listening: ReplayServer | undefined;
  afterEach(() => listening?.close());

  it('is skipped for the rest of the run once as many attempts in a row as one call makes were refused; other hosts are still called', async () => {
    const refusing = `http://127.0.0.1:${await freePort()}`; // nothing listens: connection refused
    listening = await startReplayServer(async () => ({ body: '{}' }));
    const { transport, attempts } = counted({
      'https://api.binance.com': refusing,
      'https://api.exchange.coinbase.com': listening.origin,
    });
    const binance = (symbol: string) =>
      transport.fetch({ url: `https://api.binance.com/api/v3/depth?symbol=${symbol}&limit=100` });
    // One call alone still gets its retries: a refusal may be a restart.
    await expect(binance('BTCUSDT')).rejects.toThrow(/network error: .*ECONNREFUSED/);
    expect(attempts).toHaveLength(3);
    expect(String(await binance('ETHUSDT').catch((error: unknown) => error))).toMatch(
      /ECONNREFUSED.*not called again this run/,
    );
    expect(attempts).toHaveLength(3); // it did not reach the network
    expect((await transport.fetch({ url: 'https://api.exchange.coinbase.com/time' })).status).toBe(200);
  });

  it('counts refusals across calls running side by side: eight calls reach the network at most retries + concurrency times', async () => {
    const refusing = `http://127.0.0.1:${await freePort()}`;
    const { transport, attempts } = counted({ 'https://api.binance.com': refusing });
    const symbols = ['BTC', 'ETH', 'XRP', 'SOL', 'ALGO', 'XLM', 'HBAR', 'DOGE'];
    const results = await Promise.allSettled(
      symbols.map((s) => transport.fetch({ url: `https://api.binance.com/api/v3/depth?symbol=${s}USDT` })),
    );
    expect(results.every((result) => result.status === 'rejected')).toBe(true);
    // The third refusal in a row closes the host; until then each refusal frees a slot for the next call, and the
    // four in flight (the host's concurrency) finish their attempt: at most 2 + 4 (8 calls x 3 attempts before).
    expect(attempts.length).toBeGreaterThanOrEqual(3);
    expect(attempts.length).toBeLessThanOrEqual(6);
  });

  it('is not skipped after a reset or a timeout: the next call may get through', async () => {
    const reset = Object.assign(new TypeError('fetch failed'), {
      cause: { code: 'ECONNRESET', message: 'read ECONNRESET' },
    });
    const { transport, urls } = scripted([reset, reset, reset, reset, { body: '{"ok":true}' }]);
    await expect(transport.fetch({ url: URL_BTC })).rejects.toThrow('read ECONNRESET');
    expect((await transport.fetch({ url: URL_BTC })).body).toBe('{"ok":true}');
    expect(urls).toHaveLength(5);
  });
});
