// What a venue's error answer means: the venue's own code and message (kept for the source issue), and whether it
// is a rate limit (wait and retry, the venue stays in the run) or a refusal of this host (the venue is dropped for
// the run). Each venue documents its own envelope; they are read here in one place so the transport (which retries)
// and the adapters (which report) agree.

export type VenueErrorKind = 'rate-limited' | 'unavailable' | 'error';

export interface VenueErrorInfo {
  kind: VenueErrorKind;
  /** The venue's error code as sent ("10006", "-1121", "EQuery:Unknown asset pair"); null when it sent none. */
  code: string | null;
  /** The venue's message, or the start of the body when it is not a known envelope. */
  message: string;
}

/**
 * Codes that mean "too many requests" whatever the HTTP status: Bybit 10006 (too many visits) and 10018 (IP rate
 * limit, sent with HTTP 403), OKX 50011 (rate limit, HTTP 429 or in a 200 envelope), Binance -1003 (too many
 * requests), CoinGecko 429 in its status object, Kraken's "EGeneral:Too many requests" and "EAPI:Rate limit".
 */
const RATE_LIMIT_CODES: ReadonlySet<string> = new Set(['10006', '10018', '50011', '-1003', '429']);
const RATE_LIMIT_TEXT = /too many (requests|visits)|rate limit|too frequent/i;

/** 451 (restricted location), 418 (Binance IP ban) and a 403 that is not a rate limit (Bybit, CloudFront). */
const REFUSAL_STATUSES: ReadonlySet<number> = new Set([403, 418, 451]);

const DETAIL_CHARS = 200;

/** The code and message of the envelopes the venues document (null when the body is none of them). */
export function envelopeError(body: unknown): { code: string | null; message: string } | null {
  if (body === null || typeof body !== 'object') return null;
  const o = body as Record<string, unknown>;
  // Bybit {retCode, retMsg}
  if (typeof o.retCode === 'number' && o.retCode !== 0)
    return { code: String(o.retCode), message: String(o.retMsg ?? '') };
  // OKX {code: "50011", msg} and Binance {code: -1121, msg}
  if ((typeof o.code === 'string' && o.code !== '0') || typeof o.code === 'number')
    return { code: String(o.code), message: String(o.msg ?? '') };
  // Kraken {error: ["EQuery:Unknown asset pair"]}
  if (Array.isArray(o.error) && o.error.length > 0)
    return { code: String(o.error[0]), message: o.error.map(String).join('; ') };
  // CoinGecko {status: {error_code, error_message}} or {error: "..."}
  const status = o.status as Record<string, unknown> | undefined;
  if (status && typeof status === 'object' && status.error_code !== undefined)
    return { code: String(status.error_code), message: String(status.error_message ?? '') };
  if (typeof o.error === 'string') return { code: null, message: o.error };
  // Coinbase {message: "NotFound"}
  if (typeof o.message === 'string') return { code: null, message: o.message };
  return null;
}

const parseBody = (body: string): unknown => {
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return null;
  }
};

const isRateLimit = (code: string | null, message: string): boolean =>
  (code !== null && RATE_LIMIT_CODES.has(code)) ||
  RATE_LIMIT_TEXT.test(message) ||
  RATE_LIMIT_TEXT.test(code ?? '');

/** The meaning of an error envelope inside a 200 answer (Bybit, OKX, Kraken send their errors this way). */
export function classifyEnvelope(code: string | null, message: string): VenueErrorKind {
  return isRateLimit(code, message) ? 'rate-limited' : 'error';
}

/** The meaning of an HTTP error answer. A rate limit is never taken for a refusal, whatever its status. */
export function classifyHttpError(status: number, body: string): VenueErrorInfo {
  const envelope = envelopeError(parseBody(body));
  const code = envelope?.code ?? null;
  const message = envelope?.message ?? body.trim().slice(0, DETAIL_CHARS);
  if (status === 429 || isRateLimit(code, message)) return { kind: 'rate-limited', code, message };
  if (REFUSAL_STATUSES.has(status)) return { kind: 'unavailable', code, message };
  return { kind: 'error', code, message };
}

/**
 * Whether an answer (any status) asks the caller to slow down: used by the transport to wait and retry. Only short
 * bodies are read (an error envelope is small; a 200 with data is not a rate limit).
 */
export function isRateLimitedAnswer(status: number, body: string): boolean {
  if (status === 429) return true;
  if (body.length > 2_000) return false;
  const envelope = envelopeError(parseBody(body));
  return envelope !== null && isRateLimit(envelope.code, envelope.message);
}
