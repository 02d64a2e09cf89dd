// Whether a PAYMENT-SIGNATURE can buy this offer, checked before the book or the facilitator is asked: an unchanged
// copy of one of the offered requirements, naming this path (if it names one), echoing the offered extensions, with
// a well-formed payment id and the exact scheme's group shape. Pure: the resource server is only asked to match and
// compare (no I/O), so a refused payment costs nothing and leaves no trace.
import type { x402ResourceServer } from '@x402/core/server';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { normalizeNetwork } from '../network.ts';
import type { Offer } from '../offers.ts';
import { decodePaymentHeader } from '../payment-header.ts';
import { presentationOf } from '../payment-book.ts';
import { paymentIdOf } from '../../schemas/paid/payment-identifier.ts';
import { checkPaymentGroup, signedPaymentOf } from './group-policy.ts';
import type { GroupCheck, GroupPolicy } from './group-policy.ts';

/** A payment that may buy the offer, or why it cannot (an x402 code where it has one, and words for the buyer). */
export type PaymentCheck =
  | {
      ok: true;
      payload: PaymentPayload;
      requirements: PaymentRequirements;
      /** The payment identifier it was sent with (x402's payment-identifier extension), or null. */
      paymentId: string | null;
      group: Extract<GroupCheck, { ok: true }>;
      /** What the book compares when the payment comes back (presentationOf). */
      presentation: string;
    }
  | { ok: false; error: string; message: string };

/** The signed group and the index of its payment, as the exact AVM scheme's payload carries them. */
const paymentGroupOf = (payload: PaymentPayload): { paymentGroup: string[]; paymentIndex: number } =>
  payload.payload as { paymentGroup: string[]; paymentIndex: number };

/**
 * Why `accepted` matches no offer, in x402's codes where it has one: a scheme or a network this path does not
 * offer; otherwise the offer was not copied unchanged (another amount, payee, fee payer or path).
 */
function mismatchCode(payload: PaymentPayload, offered: readonly PaymentRequirements[]): string {
  const { scheme, network } = payload.accepted;
  if (!offered.some((offer) => offer.scheme === scheme)) return 'invalid_scheme';
  const same = normalizeNetwork(network);
  if (!offered.some((offer) => normalizeNetwork(offer.network) === same)) return 'invalid_network';
  return 'payment_does_not_match';
}

/** The path a payment names in `resource.url`, if it names one. */
function namedPath(payload: PaymentPayload): string | null {
  const url = payload.resource?.url;
  if (!url) return null;
  try {
    return new URL(url).pathname;
  } catch {
    return url;
  }
}

const refused = (error: string, message: string): PaymentCheck => ({ ok: false, error, message });

/** Checks a payment against the offer of the path it was sent to, in the order the refusals are worded. */
export function checkPayment(
  signature: string,
  offer: Offer,
  server: Pick<x402ResourceServer, 'findMatchingRequirements' | 'validateExtensions'>,
  groupPolicy: GroupPolicy,
): PaymentCheck {
  const decoded = decodePaymentHeader(signature);
  if (!decoded.ok) return refused(decoded.error, `${decoded.message}.`);
  const payload = decoded.payload;
  const requirements = server.findMatchingRequirements(offer.accepts, payload);
  if (!requirements) {
    return refused(
      mismatchCode(payload, offer.accepts),
      'The payment does not accept any of the requirements offered at this path (accepted must be an unchanged copy, naming this path).',
    );
  }
  const named = namedPath(payload);
  if (named !== null && named !== offer.point.path) {
    return refused(
      'payment_for_another_resource',
      `The payment was made for ${named}, not ${offer.point.path}.`,
    );
  }
  if (!server.validateExtensions(offer.paymentRequired, payload).valid) {
    return refused('extension_echo_mismatch', 'The echoed extensions differ from the offered ones.');
  }
  const paymentId = paymentIdOf(payload.extensions);
  if ('error' in paymentId) return refused('invalid_payload', `${paymentId.error}.`);
  const { paymentGroup, paymentIndex } = paymentGroupOf(payload);
  const group = checkPaymentGroup(paymentGroup, paymentIndex, requirements, groupPolicy);
  if (!group.ok) return refused(group.reason, `${group.message}.`);
  const presentation = presentationOf(group.signedPayment, paymentId.id);
  return { ok: true, payload, requirements, paymentId: paymentId.id, group, presentation };
}

/**
 * The transaction and presentation a payment header names, read without an offer to check it against (while the
 * paid file cannot be read, to find a payment the book already knows); null when it names none.
 */
export function presentedPayment(
  signature: string,
): { txid: string; presentation: string; paymentId: string | null } | null {
  const decoded = decodePaymentHeader(signature);
  if (!decoded.ok) return null;
  const { paymentGroup, paymentIndex } = paymentGroupOf(decoded.payload);
  const paid = signedPaymentOf(paymentGroup[paymentIndex]);
  const paymentId = paymentIdOf(decoded.payload.extensions);
  if (!paid || 'error' in paymentId) return null;
  return {
    txid: paid.txid,
    presentation: presentationOf(paid.signedPayment, paymentId.id),
    paymentId: paymentId.id,
  };
}
