// x402's `payment-identifier` extension: the 402 declares it, and a buyer may send an id with its payment (the
// buyer page and `emi buy` do). The paywall needs it for one thing: a confirmed Algorand payment is public on chain, its signature
// included, so anyone can rebuild the very bytes a buyer sent; the id never reaches the chain, so a settled payment
// is delivered again only to a presentation that carries the id it was first sent with.
//
// Written out rather than imported from @x402/extensions, whose package brings viem and SIWE to a server install for
// two small functions; test/paywall-payment-identifier.test.ts checks both against the official client's helpers.

export const PAYMENT_IDENTIFIER = 'payment-identifier';

/**
 * The extension's declaration in PaymentRequired.extensions (optional: payments without an id are accepted). Its
 * schema leaves out the `$schema` line of the official declaration (2020-12, x402's dialect for every extension):
 * clients echo the declaration, and those 56 bytes keep a publisher's longest path, name and id under 4 KB.
 */
export const PAYMENT_IDENTIFIER_DECLARATION = {
  info: { required: false },
  schema: {
    type: 'object',
    properties: {
      required: { type: 'boolean' },
      id: { type: 'string', minLength: 16, maxLength: 128, pattern: '^[a-zA-Z0-9_-]+$' },
    },
    required: ['required'],
  },
} as const;

const VALID_ID = /^[a-zA-Z0-9_-]{16,128}$/;

/** The id a payment was sent with: null when it carries none, an error message when it carries a malformed one. */
export function paymentIdOf(
  extensions: Record<string, unknown> | undefined,
): { id: string | null } | { error: string } {
  const extension = extensions?.[PAYMENT_IDENTIFIER];
  if (extension === undefined) return { id: null };
  const info = (extension as { info?: { id?: unknown } } | null)?.info;
  if (info?.id === undefined) return { id: null };
  return typeof info.id === 'string' && VALID_ID.test(info.id)
    ? { id: info.id }
    : { error: 'the payment-identifier id must be 16 to 128 letters, digits, "-" or "_"' };
}

/** A fresh id: 128 random bits (getRandomValues, which browsers also give pages served over plain http). */
export const newPaymentId = (): string =>
  `pay_${Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('')}`;

/**
 * A buyer's side, for the official client (which copies the 402's extensions into the payment): gives the payment a
 * fresh id when the 402 declared the extension. The extensions are replaced, not changed in place: payments made
 * at once from one 402 must not share an id. Keep the payment header to collect the file again with the same id.
 */
export function addPaymentId(paymentRequired: { extensions?: Record<string, unknown> }): void {
  const declared = paymentRequired.extensions?.[PAYMENT_IDENTIFIER] as { info?: object } | undefined;
  if (!declared?.info) return;
  paymentRequired.extensions = {
    ...paymentRequired.extensions,
    [PAYMENT_IDENTIFIER]: { ...declared, info: { ...declared.info, id: newPaymentId() } },
  };
}
