// Fixed-window request counters per key (address or IP), kept in memory. Bounded in size: the oldest keys go
// first when too many are tracked. Per instance: a Workers isolate or a Node process limits what it sees.
export interface RateLimit {
  max: number;
  windowMs: number;
}

export const createRateLimiter = (limit: RateLimit, maxKeys = 10_000) => {
  const windows = new Map<string, { start: number; count: number }>();
  const secondsLeft = (w: { start: number }, now: number) =>
    Math.ceil((w.start + limit.windowMs - now) / 1000);
  /** Counts one request; returns the seconds to wait when over the limit, else 0. */
  const count = (key: string, now: number): number => {
    let w = windows.get(key);
    if (!w || now - w.start >= limit.windowMs) {
      windows.delete(key);
      if (windows.size >= maxKeys) windows.delete(windows.keys().next().value!);
      w = { start: now, count: 0 };
      windows.set(key, w);
    }
    w.count += 1;
    return w.count > limit.max ? secondsLeft(w, now) : 0;
  };
  /** Without counting: the seconds to wait when one more request would be over the limit, else 0. */
  const waiting = (key: string, now: number): number => {
    const w = windows.get(key);
    if (!w || now - w.start >= limit.windowMs || w.count < limit.max) return 0;
    return secondsLeft(w, now);
  };
  return Object.assign(count, { waiting });
};
