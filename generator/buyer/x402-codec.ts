// Base64 JSON as the x402 v2 HTTP headers carry it (standard alphabet, padded, UTF-8 JSON). Strict on input.
// Uses only atob/btoa/TextEncoder so the same code runs in the browser and in Node tests.

/** Headers larger than this are refused rather than decoded. */
export const MAX_HEADER_CHARS = 64 * 1024;
const STRICT_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export function encodeBase64Json(value: unknown): string {
  const bytes = new TextEncoder().encode(JSON.stringify(value));
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** The decoded JSON value, or null when the text is not strict base64 of UTF-8 JSON. */
export function decodeBase64Json(text: string): unknown {
  if (text.length === 0 || text.length > MAX_HEADER_CHARS || !STRICT_BASE64.test(text)) return null;
  try {
    const bytes = Uint8Array.from(atob(text), (char) => char.charCodeAt(0));
    return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes)) as unknown;
  } catch {
    return null;
  }
}

export type ChallengeSource = 'header' | 'body';
export type ReadChallenge = { source: ChallengeSource; paymentRequired: unknown } | { error: string };

/**
 * The `PaymentRequired` object of a 402: from the PAYMENT-REQUIRED header, or from the JSON body when the header is
 * absent or unreadable (v1-style servers put it only in the body). Either way it still goes through the checker.
 */
export function readChallenge(header: string | null, bodyText: string): ReadChallenge {
  if (header) {
    const decoded = decodeBase64Json(header.trim());
    if (decoded !== null) return { source: 'header', paymentRequired: decoded };
  }
  try {
    const body = JSON.parse(bodyText) as unknown;
    if (typeof body === 'object' && body !== null && 'accepts' in body)
      return { source: 'body', paymentRequired: body };
  } catch {
    // not JSON: fall through to the error below
  }
  return {
    error: header
      ? 'The PAYMENT-REQUIRED header could not be read and the body holds no payment requirements.'
      : 'The server asked for payment but sent no readable payment requirements.',
  };
}
