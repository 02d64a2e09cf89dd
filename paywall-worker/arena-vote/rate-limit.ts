// Fixed-window request counters per key (address or IP), kept in memory. Bounded in size: the oldest keys go
// first when too many are tracked. Per instance: a Workers isolate or a Node process limits what it sees.
export interface RateLimit {
  max: number;
  windowMs: number;
}

export const createRateLimiter = (limit: RateLimit, maxKeys = 10_000) => {
  const windows = new Map<string, { start: number; count: number }>();
  /** Counts one request; returns the seconds to wait when over the limit, else 0. */
  return (key: string, now: number): number => {
    let w = windows.get(key);
    if (!w || now - w.start >= limit.windowMs) {
      windows.delete(key);
      if (windows.size >= maxKeys) windows.delete(windows.keys().next().value!);
      w = { start: now, count: 0 };
      windows.set(key, w);
    }
    w.count += 1;
    return w.count > limit.max ? Math.ceil((w.start + limit.windowMs - now) / 1000) : 0;
  };
};
