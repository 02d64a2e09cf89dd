// Counter-based randomness: every draw is a pure function of its coordinates (stream key, index, sub-index), never of
// how many draws came before. That is what lets two runs with different as-of times see one continuous market.

const TWO_POW_32 = 2 ** 32;
const TWO_POW_53 = 2 ** 53;

/** Murmur3's 32-bit finaliser: a cheap bijective mix with full avalanche. */
function fmix32(input: number): number {
  let h = input | 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Folds any safe integer (a seed, an hour index, a ms timestamp) into 32 bits, keeping its high part. */
function fold(n: number): number {
  return (n ^ Math.floor(n / TWO_POW_32)) >>> 0;
}

function hashString(text: string): number {
  let h = 0x811c9dc5; // FNV-1a
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return fmix32(h);
}

/** A key naming one independent stream of draws, e.g. streamKey(seed, 'shock', 'BTC'). */
export function streamKey(seed: number, ...labels: string[]): number {
  let key = fmix32(fold(seed) ^ 0x9e3779b9);
  for (const label of labels) key = fmix32(key ^ hashString(label));
  return key;
}

/** Uniform in the open interval (0, 1), with 53 random bits. */
export function uniform(key: number, index: number, sub = 0): number {
  const a = fmix32(key ^ fmix32(fold(index) + Math.imul(sub + 1, 0x9e3779b9)));
  const b = fmix32(a ^ 0x68e31da4);
  return ((a >>> 5) * 67108864 + (b >>> 6) + 0.5) / TWO_POW_53;
}

/** Standard normal (Box-Muller over two uniforms). */
export function normal(key: number, index: number, sub = 0): number {
  const u1 = uniform(key, index, 2 * sub);
  const u2 = uniform(key, index, 2 * sub + 1);
  return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
}

const T4_LIMIT = 10;

/**
 * Student-t with 4 degrees of freedom, scaled to unit variance and clipped at +-10: fat tails from one uniform,
 * through the closed-form quantile of t(4).
 */
export function studentT4(key: number, index: number, sub = 0): number {
  const p = uniform(key, index, sub);
  const alpha = 4 * p * (1 - p);
  const rootAlpha = Math.sqrt(alpha);
  const q = Math.cos(Math.acos(rootAlpha) / 3) / rootAlpha;
  const t = Math.sign(p - 0.5) * 2 * Math.sqrt(Math.max(0, q - 1));
  return Math.max(-T4_LIMIT, Math.min(T4_LIMIT, t / Math.SQRT2));
}

/** Smooth noise over continuous time: normals at integer knots joined by smoothstep (persistent, yet stationary). */
export function valueNoise(key: number, x: number): number {
  const knot = Math.floor(x);
  const f = x - knot;
  const s = f * f * (3 - 2 * f);
  return (1 - s) * normal(key, knot) + s * normal(key, knot + 1);
}

/** A Poisson count by inversion of one uniform (fine for the small intensities used here). */
export function poisson(lambda: number, u: number): number {
  let k = 0;
  let p = Math.exp(-lambda);
  let cumulative = p;
  while (u > cumulative && k < 1000) {
    k += 1;
    p *= lambda / k;
    cumulative += p;
  }
  return k;
}

/** valueNoise(key, (start + i) / period) for i < count, drawing each knot once (identical values, far fewer draws). */
export function valueNoiseSeries(key: number, start: number, count: number, period: number): Float64Array {
  const firstKnot = Math.floor(start / period);
  const lastKnot = Math.floor((start + count - 1) / period) + 1;
  const knots = new Float64Array(lastKnot - firstKnot + 1);
  for (let k = 0; k < knots.length; k++) knots[k] = normal(key, firstKnot + k);
  const series = new Float64Array(count);
  for (let i = 0; i < count; i++) {
    const x = (start + i) / period;
    const knot = Math.floor(x);
    const f = x - knot;
    const s = f * f * (3 - 2 * f);
    series[i] = (1 - s) * (knots[knot - firstKnot] ?? 0) + s * (knots[knot + 1 - firstKnot] ?? 0);
  }
  return series;
}
