// The payment book: what the paywall knows about each payment, keyed by the payment transaction id. One contract,
// several homes (process memory on Node, a SQLite file, a Durable Object at the edge), so that every runtime keeps
// the same books: a payment is processed by one request at a time, settled at most once, and once settled it is
// delivered again (never charged again) to whoever presents the same signed payment before the record expires.
// Nothing else is needed: the chain itself refuses a transaction id it has already confirmed.
import type { SettleResponse } from '@x402/core/types';

/** A confirmed settlement of one payment, kept so that a retry of the same payment gets the file again. */
export interface SettledPayment {
  /** The paid path the payment bought (a payment pays for one resource). */
  path: string;
  settlement: SettleResponse;
}

export type ClaimResult =
  /** New to the book: process it now. */
  | { state: 'claimed' }
  /** An earlier attempt's outcome is unknown (its settle answer was lost): now claimed, find out first. */
  | { state: 'pending' }
  | { state: 'in_flight' }
  | { state: 'settled'; record: SettledPayment };

export interface PaymentBook {
  /** Atomically claims a payment for processing (one request at a time per payment). */
  claim(txid: string): Promise<ClaimResult>;
  /** The payment was not settled and not submitted: it may be presented again. */
  release(txid: string): Promise<void>;
  /** The settle answer was lost: a retry must first find out whether the payment landed. */
  pending(txid: string): Promise<void>;
  /** The payment is confirmed on chain: remember it for redelivery. */
  settled(txid: string, record: SettledPayment): Promise<void>;
}

type Entry = { state: 'in_flight' } | { state: 'pending' } | { state: 'settled'; record: SettledPayment };

/** The book in one process's memory (Node, tests). Entries are forgotten after `ttlMs`, oldest first. */
export class MemoryPaymentBook implements PaymentBook {
  private readonly entries = new Map<string, { entry: Entry; expiresAt: number }>();

  constructor(
    /** Longer than an Algorand validity window (1000 rounds, about 47 minutes). */
    private readonly ttlMs = 60 * 60 * 1000,
    private readonly maxEntries = 100_000,
    private readonly now: () => number = Date.now,
  ) {}

  claim(txid: string): Promise<ClaimResult> {
    this.forgetExpired();
    const known = this.entries.get(txid)?.entry;
    if (known && known.state !== 'pending') return Promise.resolve(known);
    this.put(txid, { state: 'in_flight' });
    return Promise.resolve({ state: known ? 'pending' : 'claimed' });
  }

  release(txid: string): Promise<void> {
    if (this.entries.get(txid)?.entry.state === 'in_flight') this.entries.delete(txid);
    return Promise.resolve();
  }

  pending(txid: string): Promise<void> {
    this.put(txid, { state: 'pending' });
    return Promise.resolve();
  }

  settled(txid: string, record: SettledPayment): Promise<void> {
    this.put(txid, { state: 'settled', record });
    return Promise.resolve();
  }

  private put(txid: string, entry: Entry): void {
    this.entries.delete(txid); // re-insert so that insertion order stays expiry order
    this.entries.set(txid, { entry, expiresAt: this.now() + this.ttlMs });
    if (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
  }

  private forgetExpired(): void {
    const now = this.now();
    for (const [txid, { expiresAt }] of this.entries) {
      if (expiresAt > now) break;
      this.entries.delete(txid);
    }
  }
}
