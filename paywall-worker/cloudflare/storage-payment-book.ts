// The payment book over a transactional key-value store: a Durable Object's storage at the edge. Each method runs
// inside one Durable Object, whose input gate makes every read-then-write here atomic with respect to other
// requests, so one payment is claimed by one request at a time across every isolate and restart.
import { claimEntry } from '../payment-book.ts';
import type { BookEntry, ClaimResult, PaymentBook, SettledPayment } from '../payment-book.ts';

/** The part of a Durable Object's `ctx.storage` the book uses. */
export interface BookStorage {
  get<T>(key: string): Promise<T | undefined>;
  put<T>(key: string, value: T): Promise<void>;
  delete(key: string): Promise<boolean>;
}

export class StoragePaymentBook implements PaymentBook {
  constructor(
    private readonly storage: BookStorage,
    private readonly now: () => number = Date.now,
  ) {}

  async claim(txid: string, payment: string): Promise<ClaimResult> {
    const { result, entry } = claimEntry(await this.storage.get<BookEntry>(txid), payment, this.now());
    if (entry) await this.storage.put<BookEntry>(txid, entry);
    return result;
  }

  async release(txid: string): Promise<void> {
    if ((await this.storage.get<BookEntry>(txid))?.state === 'in_flight') await this.storage.delete(txid);
  }

  async pending(txid: string, payment: string): Promise<void> {
    await this.storage.put<BookEntry>(txid, { state: 'pending', since: this.now(), payment });
  }

  async settled(txid: string, record: SettledPayment): Promise<void> {
    await this.storage.put<BookEntry>(txid, { state: 'settled', since: this.now(), record });
  }
}
