// Cloudflare Workers entry (wrangler.toml `main`): the site worker, with its payment book in a Durable Object so
// that one payment is claimed by one request at a time, and delivered again rather than charged again, across
// every isolate and restart; and each publisher's credits in a Durable Object of its own, so that two buyers racing
// for the last credit cannot both hold it.
import { DurableObject } from 'cloudflare:workers';
import type { BindResult, ClaimResult, PaymentBook, SettledPayment } from '../payment-book.ts';
import type { CreditBalance, GrantRecord, SaleRecord } from '../publishers/credit-ledger.ts';
import { creditLedgerObject, durableCreditLedger } from '../publishers/credit-ledger-durable.ts';
import type {
  CreditLedgerNamespace,
  CreditLedgerObject,
  CreditOutcome,
} from '../publishers/credit-ledger-durable.ts';
import { StorageCreditLedger } from '../publishers/credit-ledger-storage.ts';
import { createSiteWorker } from './site-worker.ts';
import type { SiteWorkerEnv } from './site-worker.ts';
import { StoragePaymentBook } from './storage-payment-book.ts';

export { ArenaVoteStore } from '../arena-vote/store-durable-object.ts';

export class PaymentBookObject extends DurableObject {
  private readonly book = new StoragePaymentBook(this.ctx.storage);
  claim(txid: string, payment: string, body?: string): Promise<ClaimResult> {
    return this.book.claim(txid, payment, body);
  }
  release(txid: string): Promise<void> {
    return this.book.release(txid);
  }
  pending(txid: string, payment: string, attemptedAt: number, body?: string): Promise<void> {
    return this.book.pending(txid, payment, attemptedAt, body);
  }
  settled(txid: string, record: SettledPayment): Promise<void> {
    return this.book.settled(txid, record);
  }
  bindId(id: string, txid: string): Promise<BindResult> {
    return this.book.bindId(id, txid);
  }
  unbindId(id: string, txid: string): Promise<void> {
    return this.book.unbindId(id, txid);
  }
  alarm(): Promise<void> {
    return this.book.sweep();
  }
}

/** One publisher's credits, holds and sales (named `credits-<id>`); RPC methods must be the class's own. */
export class PublisherCreditsObject extends DurableObject implements CreditLedgerObject {
  private readonly ledger = creditLedgerObject(new StorageCreditLedger(this.ctx.storage));
  balance(publisherId: string): Promise<CreditBalance> {
    return this.ledger.balance(publisherId);
  }
  reserve(publisherId: string, txid: string): Promise<boolean> {
    return this.ledger.reserve(publisherId, txid);
  }
  consume(sale: SaleRecord): Promise<void> {
    return this.ledger.consume(sale);
  }
  release(publisherId: string, txid: string): Promise<void> {
    return this.ledger.release(publisherId, txid);
  }
  credit(publisherId: string, amount: number, note?: string): Promise<CreditOutcome> {
    return this.ledger.credit(publisherId, amount, note);
  }
  statement(publisherId: string, since?: string): Promise<SaleRecord[]> {
    return this.ledger.statement(publisherId, since);
  }

  grants(publisherId: string, since?: string): Promise<GrantRecord[]> {
    return this.ledger.grants(publisherId, since);
  }
}

interface BookNamespace {
  idFromName(name: string): unknown;
  get(id: unknown): PaymentBook;
}

/**
 * Payments are spread over 32 objects by the first letter of their transaction id (base32). A payment id's binding
 * lives in an object named by the id itself (its last character), so that two payments sent with one id meet in
 * one object, whose input gate makes the binding atomic.
 */
function durableBook(namespace: BookNamespace): PaymentBook {
  const shard = (txid: string) => namespace.get(namespace.idFromName(`payments-${txid.charAt(0)}`));
  const idShard = (id: string) => namespace.get(namespace.idFromName(`payments-id-${id.slice(-1)}`));
  return {
    claim: (txid, payment, body) => shard(txid).claim(txid, payment, body),
    release: (txid) => shard(txid).release(txid),
    pending: (txid, payment, attemptedAt, body) => shard(txid).pending(txid, payment, attemptedAt, body),
    settled: (txid, record) => shard(txid).settled(txid, record),
    bindId: (id, txid) => idShard(id).bindId(id, txid),
    unbindId: (id, txid) => idShard(id).unbindId(id, txid),
  };
}

export default createSiteWorker(
  (env: SiteWorkerEnv) => {
    if (!env.PAYMENT_BOOK) throw new Error('no PAYMENT_BOOK Durable Object binding (see wrangler.toml)');
    return durableBook(env.PAYMENT_BOOK as BookNamespace);
  },
  (env, publisherIds) => {
    if (!env.PUBLISHER_CREDITS) {
      throw new Error('no PUBLISHER_CREDITS Durable Object binding (see wrangler.toml)');
    }
    return durableCreditLedger(env.PUBLISHER_CREDITS as CreditLedgerNamespace, publisherIds);
  },
);
