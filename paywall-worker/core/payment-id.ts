// One payment id, one payment (x402's payment-identifier spec, "Idempotency Behavior": same id, different payload
// is a 409). A payment new to the book binds its id to its transaction before it is settled; a new signature sent
// with an id bound to another payment is refused, never settled as a second purchase and never merged into the
// first (README "Decisions"). A payment that ends without landing frees its id again; one delivered or that may have
// landed keeps it as long as its record.
import { describeError } from '../facilitator-errors.ts';
import type { SalePoint } from '../offers.ts';
import type { PaymentBook } from '../payment-book.ts';
import { fail, paymentIdConflict } from './answers.ts';
import type { Decision, PaywallLogEntry } from './decision.ts';

export interface PaymentIds {
  /**
   * Binds `paymentId` to `txid`, whose claim this request holds. Null when bound: settle it. Otherwise the answer,
   * after the claim was released: the 409 naming the payment the id belongs to, or a 500 when the book failed
   * (nothing was verified or settled either way).
   */
  bind(point: SalePoint, txid: string, paymentId: string): Promise<Decision | null>;
  /**
   * The payment was delivered or may have landed: its id stays its own as long as its record, so it is bound anew
   * (its time refreshed) whenever the record is written; a resumed payment's record outlives its first binding. Never
   * a refusal (money may have moved): an id another payment took meanwhile is logged. Best effort, as unbind.
   */
  keep(point: SalePoint, txid: string, paymentId: string): Promise<void>;
  /** The payment did not land: its id is free again. Best effort: a failure is logged, the answer stands. */
  unbind(point: SalePoint, txid: string, paymentId: string): Promise<void>;
}

export function createPaymentIds(book: PaymentBook, log: (entry: PaywallLogEntry) => void): PaymentIds {
  const bookFailed = (point: SalePoint, txid: string, what: string, error: unknown) =>
    log({
      level: 'error',
      event: 'payment_book_failed',
      path: point.path,
      txid,
      detail: `${what}: ${describeError(error)}`,
    });

  async function bind(point: SalePoint, txid: string, paymentId: string): Promise<Decision | null> {
    let bound;
    try {
      bound = await book.bindId(paymentId, txid);
    } catch (error) {
      bookFailed(point, txid, 'bind id', error);
      await book.release(txid);
      return fail(
        500,
        'internal_error',
        'The paywall could not record this payment id; nothing was verified or settled. Send the same payment again later.',
        point,
      );
    }
    if (bound.bound) return null;
    await book.release(txid);
    log({
      level: 'warn',
      event: 'payment_id_conflict',
      path: point.path,
      txid,
      detail: `id bound to ${bound.txid}`,
    });
    return paymentIdConflict(point, bound.txid);
  }

  async function keep(point: SalePoint, txid: string, paymentId: string): Promise<void> {
    const bound = await book.bindId(paymentId, txid).catch((error: unknown) => {
      bookFailed(point, txid, 'keep id', error);
      return null;
    });
    if (bound?.bound === false) {
      log({
        level: 'error',
        event: 'payment_id_conflict',
        path: point.path,
        txid,
        detail: `this payment was delivered or may have landed, but its id is bound to ${bound.txid}`,
      });
    }
  }

  async function unbind(point: SalePoint, txid: string, paymentId: string): Promise<void> {
    await book
      .unbindId(paymentId, txid)
      .catch((error: unknown) => bookFailed(point, txid, 'unbind id', error));
  }

  return { bind, keep, unbind };
}
