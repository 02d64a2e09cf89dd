// One venue call: transport -> status check -> JSON -> zod. Every failure becomes a SourceError with a short reason.
import { z } from 'zod';
import type { Transport, TransportRequest } from '../transport.ts';

export class SourceError extends Error {
  override readonly name = 'SourceError';
  /** The HTTP status when the venue answered with an error status (403 and 451 mark a venue unavailable). */
  readonly status: number | null;

  constructor(message: string, status: number | null = null) {
    super(message);
    this.status = status;
  }
}

const DETAIL_CHARS = 200;

export type RequestLike = string | TransportRequest;

const asRequest = (request: RequestLike): TransportRequest =>
  typeof request === 'string' ? { url: request } : request;

export async function fetchJson(
  transport: Transport,
  request: RequestLike,
  signal?: AbortSignal,
): Promise<unknown> {
  const response = await transport.fetch(asRequest(request), signal);
  if (response.status < 200 || response.status > 299) {
    const detail = response.body.trim().slice(0, DETAIL_CHARS);
    throw new SourceError(`HTTP ${response.status}${detail ? `: ${detail}` : ''}`, response.status);
  }
  try {
    return JSON.parse(response.body) as unknown;
  } catch {
    throw new SourceError('response is not valid JSON');
  }
}

export function parseRaw<T>(schema: z.ZodType<T>, raw: unknown): T {
  const result = schema.safeParse(raw);
  if (!result.success) throw new SourceError(`unexpected response shape: ${z.prettifyError(result.error)}`);
  return result.data;
}

export async function fetchParsed<T>(
  transport: Transport,
  request: RequestLike,
  schema: z.ZodType<T>,
  signal?: AbortSignal,
): Promise<T> {
  return parseRaw(schema, await fetchJson(transport, request, signal));
}

/** Cache of raw answers that several sections read (one Bybit ticker call serves funding and open interest). */
export type SharedResponses = Map<string, Promise<unknown>>;

/** Like fetchParsed, but one call per run and request, shared by every section that asks for it. */
export async function fetchShared<T>(
  shared: SharedResponses | undefined,
  transport: Transport,
  request: RequestLike,
  schema: z.ZodType<T>,
  signal?: AbortSignal,
): Promise<T> {
  if (!shared) return fetchParsed(transport, request, schema, signal);
  const { url, method = 'GET', body = '' } = asRequest(request);
  const key = `${method} ${url} ${body}`;
  let pending = shared.get(key);
  if (!pending) {
    pending = fetchJson(transport, request, signal);
    shared.set(key, pending);
  }
  return parseRaw(schema, await pending);
}

/** A decimal number sent as a string (Binance, OKX, Bybit, Coinbase, Kraken, Hyperliquid). */
export const DecimalString = z
  .string()
  .regex(/^-?\d+(\.\d+)?([eE][-+]?\d+)?$/, 'a decimal number as a string');

/** Milliseconds since the epoch, sent as a number or as a string of digits. */
export const MsTime = z.union([z.number().int().nonnegative(), z.string().regex(/^\d+$/)]);

/** Venues send "0" (or "0.00000000") for a price they do not have, e.g. an empty side of the book. */
export const positiveOrNull = (value: string): number | null => (Number(value) > 0 ? Number(value) : null);
