// The payment book: what the paywall knows about each payment, keyed by the payment transaction id. One contract,
// several homes (process memory on Node, a SQLite file, a Durable Object at the edge), so that every runtime keeps
// the same books: a payment is processed by one request at a time, settled at most once, and once settled the body
// it bought is delivered again (never charged again, never replaced by newer data) to the same presentation (the
// signed payment and the payment identifier it was sent with) before the record expires, as an idempotency key
// replays its stored response. It also keeps which payment each payment id belongs to, so that a new signature
// sent with a used id is refused (409) rather than charged as a second purchase (x402's payment-identifier spec:
// same id, different payload). Nothing else is needed: the chain itself refuses a transaction id it has already
// confirmed.
import type { SettleResponse } from '@x402/core/types';

/** A confirmed settlement of one payment, kept so that a retry of the same payment gets the file again. */
export interface SettledPayment {
  /** The paid path the payment bought (a payment pays for one resource). */
  path: string;
  settlement: SettleResponse;
  /** The presentation that settled (see presentationOf): a retry must present it again. */
  payment: string;
  /**
   * The body that was sold. A retry gets it, not the file as it is now: a confirmed payment's fields are public on
   * chain, so fresher data on replay would let anyone who copies the payment read every later generation for free.
   */
  body: string;
  /**
   * Delivered on a retry after a lost settle answer (the first request never got the body): the same signed bytes
   * may collect it again without a payment identifier.
   */
  afterLostAnswer?: boolean;
}

export type ClaimResult =
  /** New to the book: process it now. */
  | { state: 'claimed' }
  /**
   * An earlier attempt's outcome is unknown (its settle answer was lost): now claimed, find out first. `payment` is
   * the presentation that attempt sent, the only one that may resume it; `attemptedAt` when that attempt began;
   * `body` the body it offered (absent in entries of an older book), which is what the payment buys if it landed.
   */
  | { state: 'pending'; payment: string; attemptedAt: number; body?: string }
  | { state: 'in_flight' }
  | { state: 'settled'; record: SettledPayment };

export interface PaymentBook {
  /**
   * Atomically claims a payment for processing (one request at a time per payment). `payment` is the signed payment
   * presented and `body` the body this request offers for it; a pending payment keeps the presentation and the body
   * of its unknown attempt (a payment buys the body it was offered, never whatever the file became since).
   */
  claim(txid: string, payment: string, body?: string): Promise<ClaimResult>;
  /** The payment was not settled and not submitted: it may be presented again. */
  release(txid: string): Promise<void>;
  /**
   * The settle answer of this payment was lost: a retry must first find out whether it landed. `attemptedAt`: when
   * the attempt that may have landed it began (kept as it is however often the payment comes back); `body`: the body
   * that attempt offered, delivered if it landed.
   */
  pending(txid: string, payment: string, attemptedAt: number, body?: string): Promise<void>;
  /** The payment is confirmed on chain: remember it for redelivery. */
  settled(txid: string, record: SettledPayment): Promise<void>;
  /**
   * Atomically binds a payment id (x402's payment-identifier extension) to the payment it came with, unless it is
   * bound to another payment within RECORD_TTL_MS: then nothing changes and the answer names that payment. One id
   * belongs to one payment, so a new signature sent with a used id is refused, never settled as a second purchase.
   */
  bindId(id: string, txid: string): Promise<BindResult>;
  /** The payment was not settled and not submitted: its id is free again (only if it is still bound to `txid`). */
  unbindId(id: string, txid: string): Promise<void>;
}

export type BindResult = { bound: true } | { bound: false; txid: string };

/** A payment id's binding to one payment's transaction id; `since` is when it was bound. */
export interface IdBinding {
  txid: string;
  since: number;
}

/**
 * What the book compares when a payment comes back: its signed bytes, and the payment identifier it was sent with
 * (x402's payment-identifier extension) when it has one. The bytes alone prove nothing once the payment has landed:
 * the chain shows them to everyone. The id never reaches the chain.
 */
export const presentationOf = (signedPayment: string, paymentId: string | null): string =>
  paymentId === null ? signedPayment : `${signedPayment} ${paymentId}`;

/** The payment id a presentation carries (what follows the signed bytes), or null. */
export const paymentIdOfPresentation = (presentation: string): string | null => {
  const space = presentation.lastIndexOf(' ');
  return space > 0 ? presentation.slice(space + 1) : null;
};

/** One payment's entry, in whichever home keeps the book; `since` is when it entered its state. */
export type BookEntry =
  | { state: 'in_flight'; since: number; payment: string; attemptedAt?: number; body?: string }
  | { state: 'pending'; since: number; payment: string; attemptedAt?: number; body?: string }
  | { state: 'settled'; since: number; record: SettledPayment };

/** Longer than the longest verify + settle (two facilitator timeouts): a claim older than this lost its worker. */
export const IN_FLIGHT_LEASE_MS = 2 * 60 * 1000;
/** Longer than an Algorand validity window (1000 rounds, about 47 minutes). */
export const RECORD_TTL_MS = 60 * 60 * 1000;

/** A payment's entry once its settle answer was lost (see PaymentBook.pending), the same in every home. */
export const pendingEntry = (
  since: number,
  payment: string,
  attemptedAt: number,
  body?: string,
): BookEntry => ({
  state: 'pending',
  since,
  payment,
  attemptedAt,
  ...(body === undefined ? {} : { body }),
});

/**
 * The book's rule for a claim, the same in every home: what the claimant is told, and the entry to store (null:
 * leave it as it is). A claim older than its lease, like a lost settle answer, leaves an outcome to find out first,
 * and keeps the signed bytes and the offered body of the attempt that may have landed.
 */
export function claimEntry(
  known: BookEntry | undefined,
  payment: string,
  now: number,
  body?: string,
): { result: ClaimResult; entry: BookEntry | null } {
  const age = known ? now - known.since : Infinity;
  if (known?.state === 'settled' && age < RECORD_TTL_MS) {
    return { result: { state: 'settled', record: known.record }, entry: null };
  }
  if (known?.state === 'in_flight' && age < IN_FLIGHT_LEASE_MS)
    return { result: { state: 'in_flight' }, entry: null };
  const unknown = known && known.state !== 'settled' && age < RECORD_TTL_MS ? known : null;
  const kept = unknown?.payment ?? payment;
  // Entries of an older book have no attempt time: the lease before they turned pending bounds it.
  const attemptedAt = unknown ? (unknown.attemptedAt ?? unknown.since - IN_FLIGHT_LEASE_MS) : now;
  // An entry of an older book kept no body: this request's stands for it from now on, as it did before.
  const offered = unknown ? (unknown.body ?? body) : body;
  const withBody = offered === undefined ? {} : { body: offered };
  return {
    result: unknown ? { state: 'pending', payment: kept, attemptedAt, ...withBody } : { state: 'claimed' },
    entry: { state: 'in_flight', since: now, payment: kept, attemptedAt, ...withBody },
  };
}

/**
 * The book's rule for binding a payment id, the same in every home: what the caller is told, and the binding to
 * store (null: leave it as it is). Only ever a refusal, never a merge: an id bound to another payment within
 * RECORD_TTL_MS stays that payment's; the same payment binding again, or an expired binding, binds (anew).
 */
export function bindEntry(
  known: IdBinding | undefined,
  txid: string,
  now: number,
): { result: BindResult; entry: IdBinding | null } {
  if (known && known.txid !== txid && now - known.since < RECORD_TTL_MS) {
    return { result: { bound: false, txid: known.txid }, entry: null };
  }
  return { result: { bound: true }, entry: { txid, since: now } };
}

/** Whether unbindId(id, txid) removes the binding: only while it still points to that payment. */
export const unbinds = (known: IdBinding | undefined, txid: string): boolean => known?.txid === txid;

/** The book in one process's memory (Node, tests). Entries are forgotten after RECORD_TTL_MS, oldest first. */
export class MemoryPaymentBook implements PaymentBook {
  private readonly entries = new Map<string, BookEntry>();
  private readonly ids = new Map<string, IdBinding>();

  constructor(
    private readonly now: () => number = Date.now,
    private readonly maxEntries = 100_000,
  ) {}

  claim(txid: string, payment: string, body?: string): Promise<ClaimResult> {
    this.forgetExpired();
    const { result, entry } = claimEntry(this.entries.get(txid), payment, this.now(), body);
    if (entry) this.put(txid, entry);
    return Promise.resolve(result);
  }

  release(txid: string): Promise<void> {
    if (this.entries.get(txid)?.state === 'in_flight') this.entries.delete(txid);
    return Promise.resolve();
  }

  pending(txid: string, payment: string, attemptedAt: number, body?: string): Promise<void> {
    this.put(txid, pendingEntry(this.now(), payment, attemptedAt, body));
    return Promise.resolve();
  }

  settled(txid: string, record: SettledPayment): Promise<void> {
    this.put(txid, { state: 'settled', since: this.now(), record });
    return Promise.resolve();
  }

  bindId(id: string, txid: string): Promise<BindResult> {
    this.forgetExpired();
    const { result, entry } = bindEntry(this.ids.get(id), txid, this.now());
    if (entry) this.putIn(this.ids, id, entry);
    return Promise.resolve(result);
  }

  unbindId(id: string, txid: string): Promise<void> {
    if (unbinds(this.ids.get(id), txid)) this.ids.delete(id);
    return Promise.resolve();
  }

  private put(txid: string, entry: BookEntry): void {
    this.putIn(this.entries, txid, entry);
  }

  private putIn<T>(map: Map<string, T>, key: string, value: T): void {
    map.delete(key); // re-insert so that insertion order stays age order
    map.set(key, value);
    if (map.size > this.maxEntries) {
      const oldest = map.keys().next().value;
      if (oldest !== undefined) map.delete(oldest);
    }
  }

  private forgetExpired(): void {
    const now = this.now();
    for (const map of [this.entries, this.ids]) {
      for (const [key, { since }] of map) {
        if (now - since < RECORD_TTL_MS) break;
        map.delete(key);
      }
    }
  }
}
