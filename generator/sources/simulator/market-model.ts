// The simulated market: hourly prices, volumes, funding, open interest, liquidations and books for any symbol.
// Every value at an hour is a pure function of (seed, symbol, hour), never of the as-of time that asks for it, so runs
// at different times see one continuous market where their windows overlap.
import { assetParams, MARKET_FACTOR_VOL } from './params.ts';
import type { AssetParams } from './params.ts';
import { normal, poisson, streamKey, studentT4, uniform, valueNoise, valueNoiseSeries } from './random.ts';

export const HOUR_MS = 3_600_000;

// Returns enter the price as integers of this size, so the sum is exact whichever window computes it.
const LOG_QUANTUM = 1e-9;
// The last FLAT_HOURS of returns count fully in the log price and the TAPER_HOURS before them fade out linearly:
// prices wander like a random walk over weeks yet stay near their level over months, and any hour needs only a
// bounded history.
const FLAT_HOURS = 720;
const TAPER_HOURS = 720;
const MEMORY_HOURS = FLAT_HOURS + TAPER_HOURS;
// Large shocks of the last hours raise volatility (clustering).
const SHOCK_MEMORY_HOURS = 12;
// Every hour a caller asks about may look back this far (momentum for funding, trend for open interest).
const LOOKBACK_HOURS = 168;
// A path always covers at least this much history, so that one run computes each symbol once or twice.
const MIN_HISTORY_HOURS = 1_100;
const REGIME_BLOCK_HOURS = 120;
const REGIME_ERA_BLOCKS = 4;

export type Regime = 'bull' | 'range' | 'risk-off';

const REGIME_EFFECTS: Readonly<Record<Regime, { drift: number; vol: number }>> = {
  bull: { drift: 0.00025, vol: 0.9 },
  range: { drift: 0, vol: 0.7 },
  'risk-off': { drift: -0.0004, vol: 1.5 },
};

const pickRegime = (u: number): Regime => (u < 0.35 ? 'bull' : u < 0.75 ? 'range' : 'risk-off');

/** Regime of an hour: 5-day blocks that mostly follow their 20-day era (persistence without a chain). */
export function regimeAt(seed: number, hour: number): Regime {
  const key = streamKey(seed, 'regime');
  const block = Math.floor(hour / REGIME_BLOCK_HOURS);
  const era = Math.floor(block / REGIME_ERA_BLOCKS);
  return uniform(key, block, 0) < 0.6 ? pickRegime(uniform(key, era, 1)) : pickRegime(uniform(key, block, 2));
}

export interface SimCandle {
  openTime: number;
  open: number;
  high: number;
  low: number;
  close: number;
  quoteVolume: number;
  volumeBase: number;
  takerBuyBase: number;
  trades: number;
}

export interface SimLiquidation {
  time: number;
  /** The liquidated position: a long is closed by a sell order, a short by a buy order. */
  position: 'long' | 'short';
  price: number;
  usd: number;
}

export interface SimBook {
  bids: Array<[number, number]>;
  asks: Array<[number, number]>;
}

const SYMBOL_STREAMS = [
  'bridge',
  'bar',
  'funding',
  'open-interest',
  'book',
  'liquidation',
  'shock',
  'vol',
  'level',
] as const;
type SymbolStream = (typeof SYMBOL_STREAMS)[number];

/** What is computed once per symbol: its parameters, its random streams and (lazily) its path. */
interface SymbolState {
  params: AssetParams;
  keys: Record<SymbolStream, number>;
  path: Path | null;
  /** Forced closes per hour, computed once: several venues and pages ask for the same hours. */
  liquidations: Map<number, SimLiquidation[]>;
}

/** Hour-indexed arrays covering [from, to]; `logPrice` holds boundaries from..to+1. */
interface Path {
  from: number;
  logPrice: Float64Array;
  ret: Float64Array; // log return of each hour
  vol: Float64Array; // total volatility of each hour
}

/** Paths of recent runs, newest last: enough for every tracked symbol, bounded for large universes. */
const KEPT_PATHS = 64;
const recentPaths = new Map<string, Path>();

export class SimulatedMarket {
  /** Index of the hour containing the as-of time (possibly just begun). */
  readonly currentHour: number;
  private readonly symbols = new Map<string, SymbolState>();
  private factor: { first: number; ret: Float64Array; vol: Float64Array } | null = null;

  constructor(
    readonly seed: number,
    readonly asOf: number,
  ) {
    this.currentHour = Math.floor(asOf / HOUR_MS);
  }

  params(symbol: string): AssetParams {
    return this.state(symbol).params;
  }

  /** Price at any time up to the as-of time; inside an hour a seeded bridge joins the two hourly boundaries. */
  priceAt(symbol: string, time: number): number {
    const hour = Math.floor(time / HOUR_MS);
    const path = this.path(symbol, hour);
    const i = hour - path.from;
    const f = (time - hour * HOUR_MS) / HOUR_MS;
    const start = path.logPrice[i] ?? NaN;
    if (f === 0) return Math.exp(start);
    const end = path.logPrice[i + 1] ?? NaN;
    const wiggle = normal(this.key(symbol, 'bridge'), Math.floor(time / 60_000));
    const bridge = 0.5 * (path.vol[i] ?? 0) * Math.sqrt(f * (1 - f)) * wiggle;
    return Math.exp(start + f * (end - start) + bridge);
  }

  /** The bar of one hour; the current hour's bar is partial, cut at the as-of time. */
  candle(symbol: string, hour: number): SimCandle {
    const path = this.path(symbol, hour);
    const p = this.params(symbol);
    const i = hour - path.from;
    const share = hour < this.currentHour ? 1 : (this.asOf - hour * HOUR_MS) / HOUR_MS;
    const open = Math.exp(path.logPrice[i] ?? NaN);
    const close = share === 1 ? Math.exp(path.logPrice[i + 1] ?? NaN) : this.priceAt(symbol, this.asOf);
    const vol = path.vol[i] ?? 0;
    const ret = path.ret[i] ?? 0;
    const key = this.key(symbol, 'bar');
    const reach = 0.5 * vol * Math.sqrt(share);
    const high = Math.max(open, close) * Math.exp(reach * Math.abs(normal(key, hour, 0)));
    const low = Math.min(open, close) * Math.exp(-reach * Math.abs(normal(key, hour, 1)));
    // Turnover grows with volatility and with the size of the move (volume-volatility relation).
    const typicalVol = Math.sqrt((p.beta * MARKET_FACTOR_VOL) ** 2 + p.idioVol ** 2);
    const surprise = Math.abs(ret) / vol;
    const activity =
      (0.5 + (0.5 * vol) / typicalVol) * (0.6 + 0.5 * surprise) * Math.exp(0.25 * normal(key, hour, 2));
    const quoteVolume = (p.quoteVolume24h / 24) * activity * share;
    const volumeBase = quoteVolume / ((open + high + low + close) / 4);
    return {
      openTime: hour * HOUR_MS,
      open,
      high,
      low,
      close,
      quoteVolume,
      volumeBase,
      takerBuyBase: volumeBase * (0.5 + 0.2 * Math.tanh(ret / vol)),
      trades: Math.round(quoteVolume / 500),
    };
  }

  /** Funding per 8 h at an hour boundary: a base rate, pushed up after rallies (and down after sell-offs). */
  funding8h(symbol: string, hour: number): number {
    const momentum = (hours: number): number =>
      this.logPrice(symbol, hour) - this.logPrice(symbol, hour - hours);
    const noise = 0.00008 * valueNoise(this.key(symbol, 'funding'), hour / 12);
    const rate = 0.0001 + 0.012 * momentum(24) + 0.006 * momentum(72) + noise;
    return Math.max(-0.0075, Math.min(0.0075, rate));
  }

  /** Basis of the perpetual's mark over the index: follows funding. */
  basis(symbol: string, hour: number): number {
    return 0.6 * (this.funding8h(symbol, hour) - 0.0001);
  }

  /** Open interest (USD) at an hour boundary: builds with the weekly trend and with large recent moves. */
  openInterestUsd(symbol: string, hour: number): number {
    const week = this.logPrice(symbol, hour) - this.logPrice(symbol, hour - 168);
    const day = this.logPrice(symbol, hour) - this.logPrice(symbol, hour - 24);
    const noise = valueNoise(this.key(symbol, 'open-interest'), hour / 48);
    return this.params(symbol).openInterestUsd * Math.exp(0.8 * week + 2.5 * Math.abs(day) + 0.2 * noise);
  }

  /** Forced closes between two times (inclusive), oldest first; rare, and more frequent after large moves. */
  liquidations(symbol: string, fromTime: number, toTime: number): SimLiquidation[] {
    const events: SimLiquidation[] = [];
    const last = Math.min(Math.floor(toTime / HOUR_MS), this.currentHour);
    for (let hour = Math.floor(fromTime / HOUR_MS); hour <= last; hour++) {
      for (const event of this.liquidationsInHour(symbol, hour)) {
        if (event.time >= fromTime && event.time <= toTime && event.time <= this.asOf) events.push(event);
      }
    }
    return events;
  }

  /** The order book at the as-of time: `levels` price levels each side of the mid, best first. */
  book(symbol: string, levels: number): SimBook {
    const p = this.params(symbol);
    const tick = 10 ** -p.priceDecimals;
    const mid = this.priceAt(symbol, this.asOf);
    const key = this.key(symbol, 'book');
    const halfSpread = (mid * p.spreadBps * Math.exp(0.3 * normal(key, this.asOf, 0))) / 20_000;
    const bestBid = Math.floor((mid - halfSpread) / tick) * tick;
    const bestAsk = Math.max(bestBid + tick, Math.ceil((mid + halfSpread) / tick) * tick);
    const step = Math.max(1, Math.round((mid * 0.0001) / tick)) * tick;
    const side = (best: number, direction: 1 | -1, sub: number): Array<[number, number]> =>
      Array.from({ length: levels }, (_, k) => {
        const price = best + direction * k * step;
        const usd = p.levelUsd * (0.5 + 0.05 * k) * Math.exp(0.5 * normal(key, this.asOf, sub + k));
        const level: [number, number] = [roundTo(price, p.priceDecimals), usd / price];
        return level;
      }).filter(([price]) => price > 0);
    return { bids: side(bestBid, -1, 1), asks: side(bestAsk, 1, 10_001) };
  }

  private liquidationsInHour(symbol: string, hour: number): SimLiquidation[] {
    const known = this.state(symbol).liquidations;
    let events = known.get(hour);
    if (!events) {
      events = this.drawLiquidations(symbol, hour);
      known.set(hour, events);
    }
    return events;
  }

  private drawLiquidations(symbol: string, hour: number): SimLiquidation[] {
    const path = this.path(symbol, hour);
    const i = hour - path.from;
    const surprise = (path.ret[i] ?? 0) / (path.vol[i] ?? 1);
    const openInterest = this.openInterestUsd(symbol, hour);
    const crowding = openInterest / this.params(symbol).openInterestUsd;
    const key = this.key(symbol, 'liquidation');
    const count = poisson(0.12 * crowding * (1 + surprise * surprise), uniform(key, hour, 0));
    // Falling prices mostly liquidate longs, rising prices shorts.
    const longShare = 0.5 + 0.4 * Math.tanh(-0.8 * surprise);
    return Array.from({ length: count }, (_, n): SimLiquidation => {
      const time = hour * HOUR_MS + Math.floor(uniform(key, hour, 1 + 3 * n) * HOUR_MS);
      const position = uniform(key, hour, 2 + 3 * n) < longShare ? 'long' : 'short';
      const size = Math.min(uniform(key, hour, 3 + 3 * n) ** (-1 / 1.5), 1_000); // Pareto tail
      const price = this.priceAt(symbol, Math.min(time, this.asOf)) * (position === 'long' ? 0.997 : 1.003);
      return { time, position, price, usd: openInterest * 2e-6 * size };
    }).sort((a, b) => a.time - b.time);
  }

  private logPrice(symbol: string, hour: number): number {
    const path = this.path(symbol, hour);
    return path.logPrice[hour - path.from] ?? NaN;
  }

  private state(symbol: string): SymbolState {
    let state = this.symbols.get(symbol);
    if (!state) {
      const keys = Object.fromEntries(
        SYMBOL_STREAMS.map((name) => [name, streamKey(this.seed, name, symbol)]),
      );
      state = {
        params: assetParams(symbol),
        keys: keys as Record<SymbolStream, number>,
        path: null,
        liquidations: new Map(),
      };
      this.symbols.set(symbol, state);
    }
    return state;
  }

  private key(symbol: string, stream: SymbolStream): number {
    return this.state(symbol).keys[stream];
  }

  /** The symbol's path, computed once for a window reaching back to `hour - LOOKBACK_HOURS`. */
  private path(symbol: string, hour: number): Path {
    const state = this.state(symbol);
    if (state.path && state.path.from <= hour - LOOKBACK_HOURS) return state.path;
    const from = Math.min(hour, this.currentHour - MIN_HISTORY_HOURS) - LOOKBACK_HOURS;
    // A path depends on the seed, the symbol, its window and the current hour alone, so the runs of one hour share
    // it (a long-running process runs every minute).
    const key = `${this.seed}:${symbol}:${from}:${this.currentHour}`;
    state.path = recentPaths.get(key) ?? this.computePath(state, from);
    recentPaths.delete(key);
    recentPaths.set(key, state.path);
    const oldest = recentPaths.keys().next().value;
    if (recentPaths.size > KEPT_PATHS && oldest !== undefined) recentPaths.delete(oldest);
    return state.path;
  }

  private computePath({ params: p, keys }: SymbolState, from: number): Path {
    const to = this.currentHour;
    const first = from - MEMORY_HOURS; // the oldest hour whose return still counts at `from`
    const factor = this.marketFactor(first);
    const shocks = this.shocks(keys.shock, first, to);
    const count = to - first + 1;
    const clustered = clusteringSeries(shocks, count);
    const volNoise = valueNoiseSeries(keys.vol, first, count, 24);
    const quanta = new Float64Array(count); // integers, exact in a double
    const vol = new Float64Array(count);
    for (let i = 0; i < count; i++) {
      const hour = first + i;
      const idioVol = p.idioVol * Math.exp(0.3 * (volNoise[i] ?? 0) - 0.045) * (clustered[i] ?? 1);
      const f = hour - factor.first;
      const marketRet = factor.ret[f] ?? 0;
      const marketVol = factor.vol[f] ?? 0;
      const shock = shocks[i + SHOCK_MEMORY_HOURS] ?? 0;
      quanta[i] = Math.round((p.beta * marketRet + idioVol * shock) / LOG_QUANTUM);
      vol[i] = Math.sqrt((p.beta * marketVol) ** 2 + idioVol ** 2);
    }
    const q = (hour: number): number => quanta[hour - first] ?? 0;
    // weighted(h) = sum of weight(lag) * quanta(h - 1 - lag); weight = TAPER for the flat part, then TAPER-1 ... 1.
    let weighted = 0;
    for (let lag = 0; lag < MEMORY_HOURS; lag++) {
      weighted += (lag < FLAT_HOURS ? TAPER_HOURS : MEMORY_HOURS - lag) * q(from - 1 - lag);
    }
    let fading = 0; // sum of the quanta whose weight drops by one at the next hour
    for (let lag = FLAT_HOURS + 1; lag <= MEMORY_HOURS; lag++) fading += q(from - lag);
    const level = Math.log(p.price) + 0.2 * normal(keys.level, 0);
    const logPrice = new Float64Array(to - from + 2);
    for (let hour = from; hour <= to + 1; hour++) {
      logPrice[hour - from] = level + (weighted * LOG_QUANTUM) / TAPER_HOURS;
      weighted += TAPER_HOURS * q(hour) - fading;
      fading += q(hour - FLAT_HOURS) - q(hour - MEMORY_HOURS);
    }
    const ret = new Float64Array(to - from + 1);
    for (let i = 0; i < ret.length; i++) ret[i] = (logPrice[i + 1] ?? 0) - (logPrice[i] ?? 0);
    return { from, logPrice, ret, vol: vol.slice(from - first) };
  }

  /** The common factor's returns and volatility from `first` to the current hour (shared by all symbols). */
  private marketFactor(first: number): { first: number; ret: Float64Array; vol: Float64Array } {
    if (this.factor && this.factor.first <= first) return this.factor;
    const to = this.currentHour;
    const shocks = this.shocks(streamKey(this.seed, 'market-shock'), first, to);
    const count = to - first + 1;
    const clustered = clusteringSeries(shocks, count);
    const slow = valueNoiseSeries(streamKey(this.seed, 'market-vol-slow'), first, count, 24);
    const fast = valueNoiseSeries(streamKey(this.seed, 'market-vol-fast'), first, count, 6);
    const ret = new Float64Array(count);
    const vol = new Float64Array(count);
    for (let i = 0; i < count; i++) {
      const hour = first + i;
      const regime = REGIME_EFFECTS[regimeAt(this.seed, hour)];
      const level = Math.exp(0.3 * (slow[i] ?? 0) + 0.15 * (fast[i] ?? 0) - 0.056);
      const hourVol = MARKET_FACTOR_VOL * regime.vol * level * (clustered[i] ?? 1);
      vol[i] = hourVol;
      ret[i] = regime.drift + hourVol * (shocks[i + SHOCK_MEMORY_HOURS] ?? 0);
    }
    this.factor = { first, ret, vol };
    return this.factor;
  }

  /** Fat-tailed unit shocks for hours first-SHOCK_MEMORY_HOURS .. to (the lead-in feeds volatility clustering). */
  private shocks(key: number, first: number, to: number): Float64Array {
    const start = first - SHOCK_MEMORY_HOURS;
    const shocks = new Float64Array(to - start + 1);
    for (let i = 0; i < shocks.length; i++) shocks[i] = studentT4(key, start + i);
    return shocks;
  }
}

/** Weights of the shocks 1..SHOCK_MEMORY_HOURS hours back: 1, 0.8, 0.8^2 ..., multiplied out in that order. */
const CLUSTER_WEIGHTS = new Float64Array(SHOCK_MEMORY_HOURS);
for (let lag = 0, weight = 1; lag < SHOCK_MEMORY_HOURS; lag++, weight *= 0.8) CLUSTER_WEIGHTS[lag] = weight;

/**
 * Volatility multipliers of hour indexes 0..count-1 from the shocks of the SHOCK_MEMORY_HOURS before each
 * (shocks[i + SHOCK_MEMORY_HOURS] is hour i's own shock): only shocks beyond one sigma count, decaying with age.
 * Each shock's excess is computed once rather than once per hour that remembers it (a quarter of a large run's path).
 */
function clusteringSeries(shocks: Float64Array, count: number): Float64Array {
  const beyond = shocks.map((shock) => Math.max(0, Math.abs(shock) - 1));
  const multipliers = new Float64Array(count);
  for (let i = 0; i < count; i++) {
    let excess = 0;
    for (let lag = 1; lag <= SHOCK_MEMORY_HOURS; lag++) {
      excess += (CLUSTER_WEIGHTS[lag - 1] ?? 0) * (beyond[i + SHOCK_MEMORY_HOURS - lag] ?? 0);
    }
    multipliers[i] = 1 + 0.15 * excess;
  }
  return multipliers;
}

export function roundTo(value: number, decimals: number): number {
  const scale = 10 ** decimals;
  return Math.round(value * scale) / scale;
}
