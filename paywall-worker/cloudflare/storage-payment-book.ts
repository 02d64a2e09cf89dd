// The payment book over a transactional key-value store: a Durable Object's storage at the edge. Each method runs
// inside one Durable Object, whose input gate makes every read-then-write here atomic with respect to other
// requests, so one payment is claimed by one request at a time across every isolate and restart.
import type { ClaimResult, PaymentBook, SettledPayment } from '../payment-book.ts';

/** The part of a Durable Object's `ctx.storage` the book uses. */
export interface BookStorage {
  get<T>(key: string): Promise<T | undefined>;
  put<T>(key: string, value: T): Promise<void>;
  delete(key: string): Promise<boolean>;
}

type Stored =
  | { state: 'in_flight'; since: number }
  | { state: 'pending'; since: number }
  | { state: 'settled'; since: number; record: SettledPayment };

/** Longer than the longest verify + settle (two facilitator timeouts): a claim older than this lost its worker. */
export const IN_FLIGHT_LEASE_MS = 2 * 60 * 1000;
/** Longer than an Algorand validity window (1000 rounds, about 47 minutes). */
export const RECORD_TTL_MS = 60 * 60 * 1000;

export class StoragePaymentBook implements PaymentBook {
  constructor(
    private readonly storage: BookStorage,
    private readonly now: () => number = Date.now,
  ) {}

  async claim(txid: string): Promise<ClaimResult> {
    const known = await this.storage.get<Stored>(txid);
    const age = known ? this.now() - known.since : Infinity;
    if (known?.state === 'settled' && age < RECORD_TTL_MS) return { state: 'settled', record: known.record };
    // An isolate that died between claim and outcome leaves an in-flight entry: after the lease its outcome is
    // unknown, so the next attempt must find out on chain first, exactly like a lost settle answer.
    if (known?.state === 'in_flight' && age < IN_FLIGHT_LEASE_MS) return { state: 'in_flight' };
    const unknownOutcome = known !== undefined && known.state !== 'settled' && age < RECORD_TTL_MS;
    await this.storage.put<Stored>(txid, { state: 'in_flight', since: this.now() });
    return { state: unknownOutcome ? 'pending' : 'claimed' };
  }

  async release(txid: string): Promise<void> {
    if ((await this.storage.get<Stored>(txid))?.state === 'in_flight') await this.storage.delete(txid);
  }

  async pending(txid: string): Promise<void> {
    await this.storage.put<Stored>(txid, { state: 'pending', since: this.now() });
  }

  async settled(txid: string, record: SettledPayment): Promise<void> {
    await this.storage.put<Stored>(txid, { state: 'settled', since: this.now(), record });
  }
}
