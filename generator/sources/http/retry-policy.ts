// When a failed venue call is worth another try, and how long to wait first: exponential backoff with jitter from a
// seedable source, or the venue's own Retry-After when it gives one.
import { streamKey, uniform } from '../simulator/random.ts';

export interface RetryPolicy {
  /** Further attempts after the first. */
  retries: number;
  /** First backoff (ms); doubled per attempt. */
  backoffMs: number;
  maxBackoffMs: number;
  /** A Retry-After longer than this is not waited for: the call fails at once (the run has a schedule to keep). */
  maxRetryAfterMs: number;
}

/** Rate limited (429) or a server-side failure (5xx): the same request may well succeed later. */
export const isRetryableStatus = (status: number): boolean =>
  status === 429 || (status >= 500 && status <= 599);

/** Retry-After in seconds or as an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now: number): number | null {
  if (value === undefined || value.trim() === '') return null;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

/** "Equal jitter": half the exponential step fixed, half random, so retries of many calls spread out. */
export function backoffDelay(attempt: number, policy: RetryPolicy, random: () => number): number {
  const step = Math.min(policy.maxBackoffMs, policy.backoffMs * 2 ** attempt);
  return Math.round(step / 2 + (random() * step) / 2);
}

/** A deterministic stream of uniforms in [0, 1) for a seed (tests and replays get the same waits). */
export function seededRandom(seed: number): () => number {
  const key = streamKey(seed, 'http-jitter');
  let index = 0;
  return () => uniform(key, index++);
}
