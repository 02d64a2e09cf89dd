// Small numeric helpers shared by the engines. All return null (never NaN) when the input cannot support a value.

export const clamp = (x: number, low: number, high: number): number => Math.min(high, Math.max(low, x));

/** Squash an unbounded reading into [-1, 1]; `scale` is the value that maps to about 0.76. */
export const squash = (x: number, scale: number): number => Math.tanh(x / scale);

export const finiteOrNull = (x: number | null | undefined): number | null =>
  x !== null && x !== undefined && Number.isFinite(x) ? x : null;

/** Round for publication: stable bytes and no false precision. */
export const round = (x: number, decimals: number): number => {
  const f = 10 ** decimals;
  const r = Math.round(x * f) / f;
  return Object.is(r, -0) ? 0 : r;
};

export const roundOrNull = (x: number | null, decimals: number): number | null => {
  const v = finiteOrNull(x);
  return v === null ? null : round(v, decimals);
};

/** Round to significant digits (prices span from 0.05 to 100 000). */
export const roundSignificant = (x: number, digits: number): number => Number(x.toPrecision(digits));

export const mean = (xs: readonly number[]): number | null =>
  xs.length === 0 ? null : xs.reduce((a, b) => a + b, 0) / xs.length;

export const stdev = (xs: readonly number[]): number | null => {
  const m = mean(xs);
  if (m === null || xs.length < 2) return null;
  return Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / (xs.length - 1));
};

export const median = (xs: readonly number[]): number | null => {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

/** Median absolute deviation: a spread measure that a few outliers cannot drag. */
export const mad = (xs: readonly number[]): number | null => {
  const m = median(xs);
  return m === null ? null : median(xs.map((x) => Math.abs(x - m)));
};

/** Percentile rank (0-100) of `value` within `sample`, counting ties as half. */
export const percentileRank = (sample: readonly number[], value: number): number | null => {
  if (sample.length === 0) return null;
  let below = 0;
  let equal = 0;
  for (const x of sample) {
    if (x < value) below++;
    else if (x === value) equal++;
  }
  return (100 * (below + equal / 2)) / sample.length;
};

export const logReturns = (closes: readonly number[]): number[] => {
  const out: number[] = [];
  for (let i = 1; i < closes.length; i++) out.push(Math.log(closes[i]! / closes[i - 1]!));
  return out;
};

/** Exponential moving average seeded with the simple average of the first `period` values. */
export const emaSeries = (values: readonly number[], period: number): number[] => {
  if (values.length < period) return [];
  const k = 2 / (period + 1);
  let e = values.slice(0, period).reduce((a, b) => a + b, 0) / period;
  const out = [e];
  for (let i = period; i < values.length; i++) {
    e = values[i]! * k + e * (1 - k);
    out.push(e);
  }
  return out;
};

export const last = <T>(xs: readonly T[]): T | undefined => xs[xs.length - 1];

export const correlation = (a: readonly number[], b: readonly number[]): number | null => {
  const n = Math.min(a.length, b.length);
  if (n < 3) return null;
  const xa = a.slice(a.length - n);
  const xb = b.slice(b.length - n);
  const ma = mean(xa)!;
  const mb = mean(xb)!;
  let cov = 0;
  let va = 0;
  let vb = 0;
  for (let i = 0; i < n; i++) {
    const da = xa[i]! - ma;
    const db = xb[i]! - mb;
    cov += da * db;
    va += da * da;
    vb += db * db;
  }
  return va === 0 || vb === 0 ? null : clamp(cov / Math.sqrt(va * vb), -1, 1);
};
