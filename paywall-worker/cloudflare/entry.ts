// Cloudflare Workers entry (wrangler.toml `main`): the site worker, with its payment book in a Durable Object so
// that one payment is claimed by one request at a time, and delivered again rather than charged again, across
// every isolate and restart.
import { DurableObject } from 'cloudflare:workers';
import type { ClaimResult, PaymentBook, SettledPayment } from '../payment-book.ts';
import { createSiteWorker } from './site-worker.ts';
import type { SiteWorkerEnv } from './site-worker.ts';
import { StoragePaymentBook } from './storage-payment-book.ts';

export { ArenaVoteStore } from '../arena-vote/store-durable-object.ts';

export class PaymentBookObject extends DurableObject {
  private readonly book = new StoragePaymentBook(this.ctx.storage);
  claim(txid: string): Promise<ClaimResult> {
    return this.book.claim(txid);
  }
  release(txid: string): Promise<void> {
    return this.book.release(txid);
  }
  pending(txid: string): Promise<void> {
    return this.book.pending(txid);
  }
  settled(txid: string, record: SettledPayment): Promise<void> {
    return this.book.settled(txid, record);
  }
}

interface BookNamespace {
  idFromName(name: string): unknown;
  get(id: unknown): PaymentBook;
}

/** Payments are spread over 32 objects by the first letter of their transaction id (base32). */
function durableBook(namespace: BookNamespace): PaymentBook {
  const shard = (txid: string) => namespace.get(namespace.idFromName(`payments-${txid.charAt(0)}`));
  return {
    claim: (txid) => shard(txid).claim(txid),
    release: (txid) => shard(txid).release(txid),
    pending: (txid) => shard(txid).pending(txid),
    settled: (txid, record) => shard(txid).settled(txid, record),
  };
}

export default createSiteWorker((env: SiteWorkerEnv) => {
  if (!env.PAYMENT_BOOK) throw new Error('no PAYMENT_BOOK Durable Object binding (see wrangler.toml)');
  return durableBook(env.PAYMENT_BOOK as BookNamespace);
});
