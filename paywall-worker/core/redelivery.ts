// A payment the book already settled is served again, never charged again: the body it bought (not the file as it
// is now), to the same path, and only to the same presentation (the signed bytes and the payment id); without an id
// only after a lost answer, since a landed payment's bytes are public on chain. This holds even while the paid file
// cannot be read: the book keeps the body.
import type { SalePoint, Offer } from '../offers.ts';
import type { PaymentBook, SettledPayment } from '../payment-book.ts';
import { challengeWith, deliveredAlready, inProgress, notThisPayment } from './answers.ts';
import type { Decision, PaywallLogEntry } from './decision.ts';
import { paidFileOfBody } from './paid-file.ts';
import type { PaidFile } from './paid-file.ts';
import { presentedPayment } from './payment-check.ts';

/**
 * Why a settled payment is not delivered again to this presentation, or null when it is: the same path, the same
 * bytes and id, and an id (or a first delivery that went to a retry after a lost answer).
 */
function redeliveryRefusal(
  record: SettledPayment,
  point: SalePoint,
  presentation: string,
  hasId: boolean,
): 'another_resource' | 'not_this_payment' | 'delivered_already' | null {
  if (record.path !== point.path) return 'another_resource';
  if (record.payment !== presentation) return 'not_this_payment';
  if (!hasId && !record.afterLostAnswer) return 'delivered_already';
  return null;
}

export interface Redelivery {
  /** The answer to a payment the book holds as settled: its body again, or why this presentation gets none. */
  settledClaim(
    record: SettledPayment,
    offer: Offer,
    presentation: string,
    hasId: boolean,
    txid: string,
  ): Decision;
  /**
   * While the paid file cannot be read, a payment already settled here still collects the body it bought, which the
   * book keeps (the same presentation, by the same rules as any redelivery); a payment whose settle answer was lost
   * is resumed on the body its attempt offered (`resume`: the chain is asked, nothing new is settled); anything else
   * leaves the book as it was.
   */
  storedPurchase(point: SalePoint, signature: string): Promise<Decision | { resume: PaidFile } | null>;
}

export function createRedelivery(book: PaymentBook, log: (entry: PaywallLogEntry) => void): Redelivery {
  /** Idempotent delivery: the body the payment bought, never a second charge, never newer data than it paid for. */
  function redelivered(record: SettledPayment, point: SalePoint, txid: string): Decision {
    log({ level: 'info', event: 'redelivered', path: point.path, txid });
    return { kind: 'serve', body: record.body, settlement: record.settlement, redelivery: true };
  }

  function settledClaim(
    record: SettledPayment,
    offer: Offer,
    presentation: string,
    hasId: boolean,
    txid: string,
  ): Decision {
    switch (redeliveryRefusal(record, offer.point, presentation, hasId)) {
      case 'another_resource':
        return challengeWith(
          offer,
          'payment_already_used',
          'This payment has already bought another resource.',
        );
      case 'not_this_payment':
        return notThisPayment(offer);
      case 'delivered_already':
        return deliveredAlready(offer, txid);
      case null:
        return redelivered(record, offer.point, txid);
    }
  }

  async function storedPurchase(
    point: SalePoint,
    signature: string,
  ): Promise<Decision | { resume: PaidFile } | null> {
    const presented = presentedPayment(signature);
    if (!presented) return null;
    const { txid, presentation } = presented;
    const claim = await book.claim(txid, presentation);
    if (claim.state === 'claimed') {
      await book.release(txid);
      return null;
    }
    if (claim.state === 'in_flight') return inProgress(point, txid);
    if (claim.state === 'pending') {
      await book.pending(txid, claim.payment, claim.attemptedAt, claim.body);
      const offered = claim.body === undefined ? null : paidFileOfBody(claim.body);
      return claim.payment === presentation && offered ? { resume: offered } : null;
    }
    const refusal = redeliveryRefusal(claim.record, point, presentation, presented.paymentId !== null);
    return refusal === null ? redelivered(claim.record, point, txid) : null;
  }

  return { settledClaim, storedPurchase };
}
