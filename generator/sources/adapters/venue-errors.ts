// What a venue's error answer means: the venue's own code and message (kept for the source issue), and whether it
// is a rate limit (wait and retry, the venue stays in the run) or a refusal of this host (the venue is dropped for
// the run). Each venue documents its own envelope and rate-limit codes in its descriptor (`VenueErrors`); the
// meaning of statuses and codes is decided here, in one place, so the transport (which retries) and the adapters
// (which report) agree.

export type VenueErrorKind = 'rate-limited' | 'unavailable' | 'error';

export interface ErrorEnvelope {
  /** The venue's error code as sent ("10006", "-1121", "EQuery:Unknown asset pair"); null when it sent none. */
  code: string | null;
  message: string;
}

/** How one venue says "error" (part of its descriptor). */
export interface VenueErrors {
  /** The code and message of the venue's documented error envelope; null when the body is not one. */
  envelope(body: Readonly<Record<string, unknown>>): ErrorEnvelope | null;
  /** The venue's codes for "too many requests", whatever the HTTP status they come with. */
  rateLimitCodes: readonly string[];
}

export interface VenueErrorInfo extends ErrorEnvelope {
  kind: VenueErrorKind;
}

/** Any venue's wording of a rate limit ("Too many visits", Kraken's "EAPI:Rate limit exceeded", ...). */
const RATE_LIMIT_TEXT = /too many (requests|visits)|rate limit|too frequent/i;

/**
 * Refusals whatever the body says: 451 (restricted location) and 418 (Binance's IP ban, 2 minutes to 3 days, sent
 * with the same -1003 as its plain rate limit). Retrying a ban only lengthens it.
 */
const BAN_STATUSES: ReadonlySet<number> = new Set([418, 451]);

const DETAIL_CHARS = 200;

/** Reads the envelope of any of these venues, the first that recognises the body (for a host of unknown venue). */
export function anyVenueErrors(venues: readonly VenueErrors[]): VenueErrors {
  return {
    envelope: (body) => {
      for (const errors of venues) {
        const envelope = errors.envelope(body);
        if (envelope) return envelope;
      }
      return null;
    },
    rateLimitCodes: [...new Set(venues.flatMap((errors) => errors.rateLimitCodes))],
  };
}

/** The code and message of the venue's envelope in a parsed body (null when the body is none). */
export function envelopeError(errors: VenueErrors, body: unknown): ErrorEnvelope | null {
  if (body === null || typeof body !== 'object') return null;
  return errors.envelope(body as Record<string, unknown>);
}

const parseBody = (body: string): unknown => {
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return null;
  }
};

const isRateLimit = (errors: VenueErrors, code: string | null, message: string): boolean =>
  (code !== null && errors.rateLimitCodes.includes(code)) ||
  RATE_LIMIT_TEXT.test(message) ||
  RATE_LIMIT_TEXT.test(code ?? '');

/** The meaning of an error envelope inside a 200 answer (Bybit, OKX, Kraken send their errors this way). */
export function classifyEnvelope(errors: VenueErrors, code: string | null, message: string): VenueErrorKind {
  return isRateLimit(errors, code, message) ? 'rate-limited' : 'error';
}

/** The meaning of an HTTP error answer. A rate limit is never taken for a refusal, whatever its status. */
export function classifyHttpError(errors: VenueErrors, status: number, body: string): VenueErrorInfo {
  const envelope = envelopeError(errors, parseBody(body));
  const code = envelope?.code ?? null;
  const message = envelope?.message ?? body.trim().slice(0, DETAIL_CHARS);
  if (BAN_STATUSES.has(status)) return { kind: 'unavailable', code, message };
  // A 403 is a rate limit only with the venue's code (Bybit 10006/10018 in its envelope). Without it, it is a
  // country block or Bybit's IP limit ("403, access too frequent"), which its docs say lasts 10 minutes at least.
  if (status === 403) {
    const limited = code !== null && errors.rateLimitCodes.includes(code);
    return { kind: limited ? 'rate-limited' : 'unavailable', code, message };
  }
  if (status === 429 || isRateLimit(errors, code, message)) return { kind: 'rate-limited', code, message };
  return { kind: 'error', code, message };
}

/**
 * Whether an answer (any status) asks the caller to slow down: used by the transport to wait and retry. Only short
 * bodies are read (an error envelope is small; a 200 with data is not a rate limit).
 */
export function isRateLimitedAnswer(errors: VenueErrors, status: number, body: string): boolean {
  if (status === 429) return true;
  if (body.length > 2_000) return false;
  // An error status means what the adapters will report for it (a ban is never retried).
  if (status < 200 || status > 299) return classifyHttpError(errors, status, body).kind === 'rate-limited';
  const envelope = envelopeError(errors, parseBody(body));
  return envelope !== null && isRateLimit(errors, envelope.code, envelope.message);
}
