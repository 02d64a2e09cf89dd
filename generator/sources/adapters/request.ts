// One venue call: transport -> status check -> JSON -> zod. Every failure becomes a SourceError with a short reason,
// read with the venue's own error envelope (its descriptor's `errors`).
import * as z from 'zod';
import type { Transport, TransportRequest } from '../transport.ts';
import type { FetchContext } from './source.ts';
import { classifyEnvelope, classifyHttpError, envelopeError } from './venue-errors.ts';
import type { VenueErrorKind, VenueErrors } from './venue-errors.ts';

export class SourceError extends Error {
  override readonly name = 'SourceError';
  /** The HTTP status when the venue answered with an error status. */
  readonly status: number | null;
  /** 'unavailable' drops the venue for the run (451, Bybit's country block); 'rate-limited' never does. */
  readonly kind: VenueErrorKind;
  /** The venue's own error code, when it sent one. */
  readonly code: string | null;

  constructor(
    message: string,
    status: number | null = null,
    kind: VenueErrorKind = 'error',
    code: string | null = null,
  ) {
    super(message);
    this.status = status;
    this.kind = kind;
    this.code = code;
  }
}

/** An error inside a venue's envelope (HTTP 200 with a non-zero code): its code and message kept. */
export function envelopeFailure(
  venueName: string,
  errors: VenueErrors,
  code: string | null,
  message: string,
): SourceError {
  const kind = classifyEnvelope(errors, code, message);
  const what = kind === 'rate-limited' ? 'rate limit' : 'error';
  return new SourceError(
    `${venueName} ${what}${code === null ? '' : ` ${code}`}: ${message}`,
    null,
    kind,
    code,
  );
}

/** One venue's name (for messages) and error envelope. */
export interface VenueApi {
  name: string;
  errors: VenueErrors;
}

export type RequestLike = string | TransportRequest;

const asRequest = (request: RequestLike): TransportRequest =>
  typeof request === 'string' ? { url: request } : request;

export async function fetchJson(
  { name, errors }: VenueApi,
  transport: Transport,
  request: RequestLike,
  signal?: AbortSignal,
): Promise<unknown> {
  const response = await transport.fetch(asRequest(request), signal);
  if (response.status < 200 || response.status > 299) {
    const { kind, code, message } = classifyHttpError(errors, response.status, response.body);
    const label = kind === 'rate-limited' ? ' (rate limited)' : '';
    const detail = code === null ? message : `${code} ${message}`;
    throw new SourceError(
      `HTTP ${response.status}${label}${detail ? `: ${detail}` : ''}`,
      response.status,
      kind,
      code,
    );
  }
  let json: unknown = response.json;
  if (json === undefined) {
    try {
      json = JSON.parse(response.body) as unknown;
    } catch {
      throw new SourceError('response is not valid JSON');
    }
  }
  // An error envelope over 2xx (OKX, Bybit, Kraken) is the venue's own failure, even when it lacks the fields of
  // an answer (OKX's `{"msg":"Too Many Requests","code":"50011"}` has no `data`): its code and kind are kept.
  const envelope = envelopeError(errors, json);
  if (envelope) throw envelopeFailure(name, errors, envelope.code, envelope.message);
  return json;
}

/** What parses a venue's answer: a zod schema, or one compiled on first use (`compiledOnFirstUse`). */
export interface ResponseSchema<T> {
  safeParse(raw: unknown): z.ZodSafeParseResult<T>;
}

/**
 * For answers of hundreds of rows (candles, histories, books): parsed by zod's compiled parser (`z.compile`), about
 * four times faster than its interpreted one on such rows. Generated on first use, because generating it costs more
 * than parsing a small answer once. An answer the compiled parser rejects is parsed again by zod's runtime parser,
 * so the reported problems read the same.
 */
export function compiledOnFirstUse<T>(schema: z.ZodType<T>): ResponseSchema<T> {
  let compiled: z.ZodType<T> | undefined;
  return { safeParse: (raw) => (compiled ??= z.compile(schema)).safeParse(raw) };
}

export function parseRaw<T>(schema: ResponseSchema<T>, raw: unknown): T {
  const result = schema.safeParse(raw);
  if (!result.success) throw new SourceError(`unexpected response shape: ${z.prettifyError(result.error)}`);
  return result.data;
}

export async function fetchParsed<T>(
  venue: VenueApi,
  transport: Transport,
  request: RequestLike,
  schema: ResponseSchema<T>,
  signal?: AbortSignal,
): Promise<T> {
  return parseRaw(schema, await fetchJson(venue, transport, request, signal));
}

/** Cache of raw answers that several sections read (one Bybit ticker call serves funding and open interest). */
export type SharedResponses = Map<string, Promise<unknown>>;

/** Like fetchParsed, but one call per run and request, shared by every section that asks for it. */
export async function fetchShared<T>(
  venue: VenueApi,
  shared: SharedResponses | undefined,
  transport: Transport,
  request: RequestLike,
  schema: ResponseSchema<T>,
  signal?: AbortSignal,
): Promise<T> {
  if (!shared) return fetchParsed(venue, transport, request, schema, signal);
  const { url, method = 'GET', body = '' } = asRequest(request);
  const key = `${method} ${url} ${body}`;
  let pending = shared.get(key);
  if (!pending) {
    pending = fetchJson(venue, transport, request, signal);
    shared.set(key, pending);
  }
  return parseRaw(schema, await pending);
}

/** The calls of one venue, its error envelope bound in (each adapter makes one from its descriptor's facts). */
export interface VenueCalls {
  /** One call, parsed with `schema`. */
  parsed<T>(context: FetchContext, request: RequestLike, schema: ResponseSchema<T>): Promise<T>;
  /** One call per run and request, shared by every section that asks for it. */
  shared<T>(context: FetchContext, request: RequestLike, schema: ResponseSchema<T>): Promise<T>;
  /** The failure for an error inside the venue's 200 envelope. */
  envelopeFailure(code: string, message: string): SourceError;
}

export function venueCalls(venueName: string, errors: VenueErrors): VenueCalls {
  const venue: VenueApi = { name: venueName, errors };
  return {
    parsed: (context, request, schema) =>
      fetchParsed(venue, context.transport, request, schema, context.signal),
    shared: (context, request, schema) =>
      fetchShared(venue, context.shared, context.transport, request, schema, context.signal),
    envelopeFailure: (code, message) => envelopeFailure(venueName, errors, code, message),
  };
}

/** A decimal number sent as a string (Binance, OKX, Bybit, Coinbase, Kraken, Hyperliquid). */
export const DecimalString = z
  .string()
  .regex(/^-?\d+(\.\d+)?([eE][-+]?\d+)?$/, 'a decimal number as a string');

/** A decimal sent as a string or as a JSON number (venues change between the two without notice). */
export const Decimal = z.union([DecimalString, z.number().finite().transform(String)]);

/**
 * A field the venue documents as possibly empty: Bybit sends `fundingRate: ""` for dated futures, Hyperliquid
 * `null` for a missing premium. Read as null, never as zero.
 */
export const OptionalDecimal = z
  .union([Decimal, z.literal(''), z.null()])
  .optional()
  .transform((value) => (value === '' || value === null || value === undefined ? null : value));

/** Milliseconds since the epoch, sent as a number or as a string of digits. */
export const MsTime = z.union([z.number().int().nonnegative(), z.string().regex(/^\d+$/)]);

/**
 * Parses the entries of a batch answer one by one: a bad entry costs its own key only. Returns the good entries and,
 * per bad key, the reason (the collector turns it into a source issue for that asset only).
 */
export function parseEntries<T>(
  schema: z.ZodType<T>,
  entries: Iterable<readonly [string, unknown]>,
): { good: Map<string, T>; bad: Map<string, string> } {
  const good = new Map<string, T>();
  const bad = new Map<string, string>();
  for (const [key, raw] of entries) {
    const result = schema.safeParse(raw);
    if (result.success) good.set(key, result.data);
    else bad.set(key, `unexpected entry shape: ${z.prettifyError(result.error).replace(/\s+/g, ' ')}`);
  }
  return { good, bad };
}

/** Venues send "0" (or "0.00000000") for a price they do not have, e.g. an empty side of the book. */
export const positiveOrNull = (value: string): number | null => (Number(value) > 0 ? Number(value) : null);
