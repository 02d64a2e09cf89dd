// The payment book over a transactional key-value store: a Durable Object's storage at the edge. Each method runs
// inside one Durable Object, whose input gate makes every read-then-write here atomic with respect to other
// requests, so one payment is claimed by one request at a time across every isolate and restart. Entries expire as
// in the other homes: an alarm set with the first entry sweeps out those older than RECORD_TTL_MS (a settled one
// holds the body it sold, so an object that never forgot would grow with every sale). A payment id's binding is
// kept under `id:<id>` (a transaction id is base32, never `id:`), and swept by the same alarm.
import { bindEntry, claimEntry, pendingEntry, RECORD_TTL_MS, unbinds } from '../payment-book.ts';
import type {
  BindResult,
  BookEntry,
  ClaimResult,
  IdBinding,
  PaymentBook,
  SettledPayment,
} from '../payment-book.ts';

/** The part of a Durable Object's `ctx.storage` the book uses. */
export interface BookStorage {
  get<T>(key: string): Promise<T | undefined>;
  put<T>(key: string, value: T): Promise<void>;
  delete(key: string): Promise<boolean>;
  delete(keys: string[]): Promise<number>;
  list<T>(): Promise<Map<string, T>>;
  getAlarm(): Promise<number | null>;
  setAlarm(time: number): Promise<void>;
}

/** Durable Object storage deletes at most this many keys in one call. */
const DELETE_BATCH = 128;

export class StoragePaymentBook implements PaymentBook {
  constructor(
    private readonly storage: BookStorage,
    private readonly now: () => number = Date.now,
  ) {}

  async claim(txid: string, payment: string, body?: string): Promise<ClaimResult> {
    const { result, entry } = claimEntry(await this.storage.get<BookEntry>(txid), payment, this.now(), body);
    if (entry) await this.put(txid, entry);
    return result;
  }

  async release(txid: string): Promise<void> {
    if ((await this.storage.get<BookEntry>(txid))?.state === 'in_flight') await this.storage.delete(txid);
  }

  async pending(txid: string, payment: string, attemptedAt: number, body?: string): Promise<void> {
    await this.put(txid, pendingEntry(this.now(), payment, attemptedAt, body));
  }

  async settled(txid: string, record: SettledPayment): Promise<void> {
    await this.put(txid, { state: 'settled', since: this.now(), record });
  }

  async bindId(id: string, txid: string): Promise<BindResult> {
    const key = idKey(id);
    const { result, entry } = bindEntry(await this.storage.get<IdBinding>(key), txid, this.now());
    if (entry) await this.put(key, entry);
    return result;
  }

  async unbindId(id: string, txid: string): Promise<void> {
    const key = idKey(id);
    if (unbinds(await this.storage.get<IdBinding>(key), txid)) await this.storage.delete(key);
  }

  /**
   * The alarm's work: forgets expired entries (payments and id bindings alike: both have `since`), and wakes again
   * when the oldest one left expires.
   */
  async sweep(): Promise<void> {
    const now = this.now();
    const expired: string[] = [];
    let oldest = Infinity;
    for (const [key, entry] of await this.storage.list<BookEntry | IdBinding>()) {
      if (now - entry.since >= RECORD_TTL_MS) expired.push(key);
      else oldest = Math.min(oldest, entry.since);
    }
    for (let i = 0; i < expired.length; i += DELETE_BATCH) {
      await this.storage.delete(expired.slice(i, i + DELETE_BATCH));
    }
    if (oldest !== Infinity) await this.storage.setAlarm(oldest + RECORD_TTL_MS);
  }

  private async put(key: string, entry: BookEntry | IdBinding): Promise<void> {
    await this.storage.put(key, entry);
    if ((await this.storage.getAlarm()) === null) await this.storage.setAlarm(entry.since + RECORD_TTL_MS);
  }
}

/** The storage key of a payment id's binding. */
const idKey = (id: string): string => `id:${id}`;
