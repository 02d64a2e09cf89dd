// The live Transport: global fetch with a timeout per attempt, retries that honour Retry-After on 429 and 5xx,
// a per-host concurrency and rate budget, and a per-run breaker that skips a host found unreachable or timing out
// (host-breaker.ts). Venue origins can be routed elsewhere (a mirror, a local server).
import type { Transport, TransportRequest, TransportResponse } from '../transport.ts';
import { HostBreaker, TIMEOUTS_TO_SKIP_HOST, TimedOut } from './host-breaker.ts';
import { HostBudget, sleep as realSleep } from './host-budget.ts';
import type { HostLimits, Sleep } from './host-budget.ts';
import { backoffDelay, isRetryableStatus, parseRetryAfter } from './retry-policy.ts';
import type { RetryPolicy } from './retry-policy.ts';
import { isRateLimitedAnswer } from '../adapters/venue-errors.ts';
import { venueErrorsForHost } from '../venues.ts';

export interface LiveTransportOptions {
  retry: RetryPolicy;
  /** Per attempt, body included. */
  timeoutMs: number;
  /** Limits of a canonical host (e.g. "api.binance.com"). */
  limitsFor: (host: string) => HostLimits;
  /** Canonical origin -> base URL actually called; a base may carry a path prefix. */
  routes?: Readonly<Record<string, string>>;
  /** Uniforms in [0, 1) for the backoff jitter; seed it to make waits reproducible. */
  random: () => number;
  /** Timeouts in a row after which a host is skipped for the rest of the run (default 2). */
  timeoutsToSkipHost?: number;
  userAgent?: string;
  fetch?: typeof globalThis.fetch;
  sleep?: Sleep;
  now?: () => number;
}

/** Headers worth keeping (and recording): never cookies or anything that identifies the caller. */
const KEPT_HEADERS = ['content-type', 'retry-after', 'date', 'age'];

/** undici hides the useful part in `cause`: "connect ECONNREFUSED ...", "terminated (other side closed)". */
const describe = (error: unknown): string => {
  const message = error instanceof Error ? error.message : String(error);
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const detail = cause?.message ?? cause?.code;
  if (!detail) return message;
  return message === 'fetch failed' ? detail : `${message} (${detail})`;
};

export function routeUrl(url: string, routes: Readonly<Record<string, string>> = {}): string {
  const parsed = new URL(url);
  const base = routes[parsed.origin];
  return base === undefined ? url : `${base.replace(/\/+$/, '')}${parsed.pathname}${parsed.search}`;
}

export function createLiveTransport(options: LiveTransportOptions): Transport {
  const fetchImpl = options.fetch ?? globalThis.fetch;
  const wait = options.sleep ?? realSleep;
  const now = options.now ?? Date.now;
  const budget = new HostBudget(options.limitsFor, now, wait);
  const { retry } = options;
  // The transport lives for one run, and so do the hosts it skips.
  const breaker = new HostBreaker({
    unreachableToSkip: retry.retries + 1,
    timeoutsToSkip: options.timeoutsToSkipHost ?? TIMEOUTS_TO_SKIP_HOST,
    timeoutMs: options.timeoutMs,
  });

  /** One attempt: the venue's answer, or the error that kept it from answering (thrown only when the run aborts). */
  async function attempt(
    request: TransportRequest,
    signal?: AbortSignal,
  ): Promise<TransportResponse | Error> {
    const timeout = AbortSignal.timeout(options.timeoutMs);
    const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
    try {
      const response = await fetchImpl(routeUrl(request.url, options.routes), {
        method: request.method ?? 'GET',
        body: request.body,
        headers: {
          accept: 'application/json',
          ...(options.userAgent ? { 'user-agent': options.userAgent } : {}),
          ...(request.body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        signal: combined,
      });
      const body = await response.text();
      const headers: Record<string, string> = {};
      for (const name of KEPT_HEADERS) {
        const value = response.headers.get(name);
        if (value !== null) headers[name] = value;
      }
      return { status: response.status, headers, body };
    } catch (error) {
      if (signal?.aborted) throw error;
      if (timeout.aborted) return new TimedOut(`timed out after ${options.timeoutMs} ms`, { cause: error });
      return new Error(`network error: ${describe(error)}`, { cause: error });
    }
  }

  return {
    mode: 'live',
    async fetch(request, signal) {
      const host = new URL(request.url).host;
      let previous: TransportResponse | Error | undefined;
      for (let tries = 0; ; tries++) {
        // Noted before the host's slot is freed, and checked when a call's turn comes, so that calls queued behind
        // the host's budget see every skip before them (a skipped call takes no slot).
        const outcome = await budget.run(
          host,
          async () => breaker.noted(host, await attempt(request, signal)),
          signal,
          () => breaker.check(host, previous),
        );
        // Bybit's IP rate limit comes as a 403 and OKX's 50011 may come in a 200 envelope: both are waited out.
        const failed =
          outcome instanceof Error ||
          isRetryableStatus(outcome.status) ||
          isRateLimitedAnswer(venueErrorsForHost(host), outcome.status, outcome.body);
        // The venue may ask for a longer pause than a run can give: then this call fails now.
        const asked =
          outcome instanceof Error ? null : parseRetryAfter(outcome.headers['retry-after'], now());
        if (!failed || tries >= retry.retries || (asked !== null && asked > retry.maxRetryAfterMs)) {
          if (outcome instanceof Error) throw outcome;
          return outcome;
        }
        // A skipped host is not retried: the call fails now and its section falls back.
        if (breaker.isSkipped(host)) {
          if (outcome instanceof Error) throw breaker.notRetried(host, outcome);
          return outcome;
        }
        previous = outcome;
        await wait(asked ?? backoffDelay(tries, retry, options.random), signal);
      }
    },
  };
}
