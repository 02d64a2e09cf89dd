// The answers the core gives, built in one place so that every path words them alike: the error body every runtime
// sends (JSON, with the project and the disclaimer), an upstream or local failure (`fail`), and the 402 challenge
// that refuses a payment and asks for another (`challengeWith`). Pure: no I/O, no clock.
import type { SettleResponse } from '@x402/core/types';
import { DISCLAIMER, PROJECT } from '../../schemas/common.ts';
import type { PaywallErrorBody } from '../../schemas/paid/payment-required.ts';
import { endpointName } from '../copy.ts';
import { challenge } from '../offers.ts';
import type { Offer, SalePoint } from '../offers.ts';
import { RETRY_AFTER_SECONDS } from '../../schemas/delivery.ts';
import type { Decision, ErrorStatus } from './decision.ts';

/** The error body every runtime sends; a 503's carries the Retry-After wait too (`retry_after_seconds`). */
export function errorBody(
  status: ErrorStatus,
  error: string,
  message: string,
  point: SalePoint | null,
  transaction: string | null = null,
): PaywallErrorBody {
  return {
    success: false,
    status,
    error,
    message,
    project: PROJECT,
    endpoint: point ? endpointName(point.resource) : null,
    retry_after_seconds: status === 503 ? RETRY_AFTER_SECONDS : null,
    transaction,
    disclaimer: DISCLAIMER,
  };
}

/** An answer without a challenge: a wrong request, a failure here or upstream, or a 503 to retry the same request. */
export const fail = (
  status: ErrorStatus,
  error: string,
  message: string,
  point: SalePoint | null,
  transaction: string | null = null,
): Decision => ({ kind: 'error', status, body: errorBody(status, error, message, point, transaction) });

/**
 * A 402: the offer's challenge again, with the reason this request's payment (if any) bought nothing, and the
 * facilitator's failed settlement when it gave one. The plain unpaid challenge is the one encoded with the offer.
 */
export function challengeWith(
  offer: Offer,
  error: string,
  detail?: string,
  settlement?: SettleResponse,
): Decision {
  const { header, body } =
    error === 'payment_required' && !detail ? offer.unpaid : challenge(offer, error, detail);
  return { kind: 'payment_required', paymentRequired: offer.paymentRequired, header, body, settlement };
}

/**
 * A transaction the book knows from other signed bytes: a copy of a confirmed payment rebuilt from the chain (whose
 * fields are public) without the buyer's signature, or with another one. What is compared is the presentation
 * (presentationOf): the signed transaction and the payment identifier, not the rest of the group, whose members the
 * signed transaction's group id already fixes, nor the header's spelling.
 */
export const notThisPayment = (offer: Offer): Decision =>
  challengeWith(
    offer,
    'payment_already_used',
    'This transaction was presented before with other signed bytes or another payment identifier; it is served again only to the same signed transaction with the same payment identifier.',
  );

/** A settled payment sent without a payment identifier: its bytes are on chain for anyone, so it is not served again. */
export const deliveredAlready = (offer: Offer, txid: string): Decision =>
  challengeWith(
    offer,
    'payment_already_used',
    `Payment ${txid} was settled and its file delivered. It was sent without a payment identifier, so it is not ` +
      'delivered again: once a payment lands, its signed bytes are public on chain and anyone could present them. ' +
      'Send a payment with an id (the x402 payment-identifier extension) to be able to collect its file again.',
  );

/**
 * A payment another request is processing (or one cut short, until its claim's lease lapses): not a 402, which
 * would carry a challenge and invite a second payment, but a 503 to retry the same payment after Retry-After.
 */
export const inProgress = (point: SalePoint, txid: string): Decision =>
  fail(
    503,
    'payment_in_progress',
    `Payment ${txid} is being processed by another request (or by one that was cut short, whose claim lapses ` +
      'within two minutes). Do not sign a new payment: send this same PAYMENT-SIGNATURE again after the ' +
      'Retry-After delay to receive the file or the outcome of its settlement; a payment is never charged twice.',
    point,
    txid,
  );

/** Why a payment whose id belongs to another payment (`otherTxid`) is refused, and what to do instead. */
export const paymentIdConflictMessage = (otherTxid: string): string =>
  `This payment id already belongs to another payment (transaction ${otherTxid}). Send that payment again ` +
  '(the same PAYMENT-SIGNATURE, with its payment id) to the path it paid for to collect what it bought. A new ' +
  'signature with this id is refused so that you are not charged twice: nothing was verified or settled. Use a ' +
  'new payment id for a new purchase.';

/**
 * A new payment sent with a payment id that belongs to another payment (x402's payment-identifier spec: same id,
 * different payload, 409). Nothing was verified or settled; the buyer collects with the payment the id belongs to,
 * and a new purchase takes a new id. Refused, never merged into the other payment (README "Decisions").
 */
export const paymentIdConflict = (point: SalePoint, otherTxid: string): Decision =>
  fail(409, 'payment_id_conflict', paymentIdConflictMessage(otherTxid), point);
