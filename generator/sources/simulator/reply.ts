// What a simulated venue endpoint receives and returns, plus the small helpers every venue encoder shares.
import type { SimulatedMarket } from './market-model.ts';

export interface SimContext {
  market: SimulatedMarket;
  /** Symbols the simulated venues list; anything else is an unknown instrument. */
  universe: ReadonlySet<string>;
  /** Whether venues leave out the assets of listings.ts (the default simulated run) or list every one. */
  gaps: boolean;
}

export interface SimReply {
  status: number;
  body: unknown; // serialised with JSON.stringify
}

/**
 * `body` is the parsed JSON of a POST (Hyperliquid), undefined for GET; `path` the URL path, for routes that carry
 * their instrument in it (Coinbase's `/products/BTC-USD/stats`, routed as `/products/*`).
 */
export type SimHandler = (
  query: URLSearchParams,
  context: SimContext,
  body?: unknown,
  path?: string,
) => SimReply;

export const ok = (body: unknown): SimReply => ({ status: 200, body });

/** Binance's error style: an HTTP 4xx with `{code, msg}`. */
export const binanceError = (code: number, msg: string): SimReply => ({ status: 400, body: { code, msg } });

export const binanceMissing = (name: string): SimReply =>
  binanceError(-1102, `Mandatory parameter '${name}' was not sent, was empty/null, or malformed.`);

export const binanceInvalidSymbol = (): SimReply => binanceError(-1121, 'Invalid symbol.');

/** The tracked symbol behind a Binance USDT market name (BTCUSDT -> BTC), or null when the venue has no such market. */
export function binanceBase(instrument: string, universe: ReadonlySet<string>): string | null {
  if (!instrument.endsWith('USDT')) return null;
  const base = instrument.slice(0, -4);
  return universe.has(base) ? base : null;
}

/** The tracked symbol behind `?symbol=`, or the error reply Binance would send. */
export function binanceSymbolParam(query: URLSearchParams, universe: ReadonlySet<string>): string | SimReply {
  const instrument = query.get('symbol');
  if (instrument === null || instrument === '') return binanceMissing('symbol');
  return binanceBase(instrument, universe) ?? binanceInvalidSymbol();
}

/** An integer query parameter, clamped to the venue's bounds; null when present but not an integer. */
export function intParam(query: URLSearchParams, name: string, fallback: number, max: number): number | null {
  const raw = query.get(name);
  if (raw === null) return fallback;
  if (!/^\d+$/.test(raw)) return null;
  return Math.min(max, Math.max(1, Number(raw)));
}

/** Binance prints every decimal with 8 places. */
export const fixed8 = (value: number): string => value.toFixed(8);
