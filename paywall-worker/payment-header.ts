// Strict decoding of the PAYMENT-SIGNATURE request header: a size cap, canonical padded base64 (standard
// alphabet), UTF-8 that must decode without replacement characters, JSON, then the x402 v2 exact-on-Algorand
// payload shape. Anything else is refused before it reaches the x402 packages or the facilitator.
import * as z from 'zod';
import type { PaymentPayload } from '@x402/core/types';

/** Large enough for a 16-transaction group plus the echoed discovery extension; far below Node's 16 KiB limit. */
export const MAX_PAYMENT_HEADER_CHARS = 12 * 1024;

const STRICT_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/** One msgpack-encoded signed transaction is at most a few kilobytes. */
const Base64Transaction = z.string().min(8).max(4096).regex(STRICT_BASE64, 'base64');

/**
 * A name in one of the payload's open objects (`extra`, `extensions`). Not one of Object.prototype's (`toString`,
 * `constructor`, `__proto__`...): the x402 packages look such names up in plain objects of their own, and one that
 * finds an inherited function there throws (an `extensions` named `toString` was a 500 instead of a refusal).
 */
const OwnName = z.string().refine((name) => !(name in Object.prototype), 'a built-in property name');

const Accepted = z.object({
  scheme: z.string().max(32),
  network: z.string().max(128),
  amount: z.string().max(40),
  asset: z.string().max(64),
  payTo: z.string().max(128),
  maxTimeoutSeconds: z.number().int(),
  extra: z.record(OwnName, z.unknown()),
});

const PaymentPayloadShape = z.object({
  x402Version: z.literal(2),
  accepted: Accepted,
  payload: z.strictObject({
    paymentGroup: z.array(Base64Transaction).min(1).max(16),
    paymentIndex: z.number().int().min(0).max(15),
  }),
  resource: z.looseObject({ url: z.string() }).optional(),
  extensions: z.record(OwnName, z.unknown()).optional(),
});

/**
 * The x402 v2 error codes for a header that cannot be read as a payment (the spec's list): what exactly is wrong is
 * in the message.
 */
export type DecodeFailure = 'invalid_payload' | 'invalid_x402_version';

export type DecodedPayment =
  | { ok: true; payload: PaymentPayload; paymentTransaction: string }
  | { ok: false; error: DecodeFailure; message: string };

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Bytes of a base64 string (throws on characters outside the alphabet; callers check the strict form first). */
export function base64ToBytes(base64: string): Uint8Array {
  const binary = atob(base64);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i); // a loop: Uint8Array.from's mapper is slow
  return bytes;
}

export function decodePaymentHeader(header: string): DecodedPayment {
  if (header.length > MAX_PAYMENT_HEADER_CHARS) {
    return {
      ok: false,
      error: 'invalid_payload',
      message: `PAYMENT-SIGNATURE exceeds ${MAX_PAYMENT_HEADER_CHARS} characters`,
    };
  }
  if (!STRICT_BASE64.test(header)) {
    return {
      ok: false,
      error: 'invalid_payload',
      message: 'PAYMENT-SIGNATURE is not padded standard base64',
    };
  }
  let json: unknown;
  try {
    json = JSON.parse(utf8.decode(base64ToBytes(header)));
  } catch {
    return {
      ok: false,
      error: 'invalid_payload',
      message: 'PAYMENT-SIGNATURE does not decode to UTF-8 JSON',
    };
  }
  const version = (json as { x402Version?: unknown } | null)?.x402Version;
  if (typeof json === 'object' && json !== null && version !== 2 && version !== undefined) {
    return {
      ok: false,
      error: 'invalid_x402_version',
      message: `PAYMENT-SIGNATURE is an x402 version ${JSON.stringify(version)} payment; this paywall takes version 2`,
    };
  }
  const parsed = PaymentPayloadShape.safeParse(json);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    const where = first?.path.join('.') || 'payload';
    return {
      ok: false,
      error: 'invalid_payload',
      message: `PAYMENT-SIGNATURE is not an x402 v2 payment (${where}: ${first?.message})`,
    };
  }
  const { payload } = parsed.data;
  const paymentTransaction = payload.paymentGroup[payload.paymentIndex];
  if (paymentTransaction === undefined) {
    return {
      ok: false,
      error: 'invalid_payload',
      message: 'paymentIndex points outside paymentGroup',
    };
  }
  return { ok: true, payload: parsed.data as PaymentPayload, paymentTransaction };
}
