// The credit ledger over a transactional key-value store: a Durable Object's storage at the edge, where the Worker
// keeps one object per publisher (`credit-ledger-durable.ts`). Each method runs inside that one object, whose input
// gate makes every read-then-write here atomic with respect to other requests: two buyers racing for the last
// credit cannot both hold it, across every isolate. A hold left by an isolate that died mid-sale stops counting
// after RESERVATION_TTL_MS, as the SQLite ledger's does.
import { CreditError, RESERVATION_TTL_MS } from './credit-ledger.ts';
import type { CreditBalance, CreditLedger, GrantRecord, SaleRecord } from './credit-ledger.ts';

/** The part of a Durable Object's `ctx.storage` the ledger uses. */
export interface LedgerStorage {
  get<T>(key: string): Promise<T | undefined>;
  /** Several keys in one put are written atomically. */
  put(entries: Record<string, unknown>): Promise<void>;
  delete(keys: string[]): Promise<number>;
  list<T>(options: { prefix: string; start?: string }): Promise<Map<string, T>>;
}

interface Hold {
  since: number;
}
interface Grant {
  at: string;
  amount: number;
  note: string | null;
}

/** Keys of one publisher; ids are slugs and transaction ids base32, so `:` never occurs inside a part. */
const keys = (publisherId: string) => {
  const own = `credits:${publisherId}:`;
  return {
    balance: `${own}balance`,
    sales: `${own}sales`,
    grants: `${own}grants`,
    holds: `${own}hold:`,
    hold: (txid: string) => `${own}hold:${txid}`,
    /** Sales by time (ISO times sort as text), then transaction id. */
    salesByTime: `${own}sale:`,
    sale: (at: string, txid: string) => `${own}sale:${at}:${txid}`,
    sold: (txid: string) => `${own}sold:${txid}`,
    /** Grants in the order they were made (`grants` counts them). */
    grantsInOrder: `${own}grant:`,
    grant: (n: number) => `${own}grant:${String(n).padStart(10, '0')}`,
    known: `known:${publisherId}`,
  };
};

export class StorageCreditLedger implements CreditLedger {
  constructor(
    private readonly storage: LedgerStorage,
    private readonly now: () => number = Date.now,
  ) {}

  /** Live holds of a publisher; expired ones are deleted on the way. */
  private async liveHolds(publisherId: string): Promise<number> {
    const holds = await this.storage.list<Hold>({ prefix: keys(publisherId).holds });
    const cutoff = this.now() - RESERVATION_TTL_MS;
    const expired = [...holds].filter(([, hold]) => hold.since <= cutoff).map(([key]) => key);
    if (expired.length > 0) await this.storage.delete(expired);
    return holds.size - expired.length;
  }

  async balance(publisherId: string): Promise<CreditBalance> {
    const k = keys(publisherId);
    const balance = (await this.storage.get<number>(k.balance)) ?? 0;
    const reserved = await this.liveHolds(publisherId);
    const sales = (await this.storage.get<number>(k.sales)) ?? 0;
    return { publisherId, balance, reserved, available: Math.max(0, balance - reserved), sales };
  }

  async reserve(publisherId: string, txid: string): Promise<boolean> {
    const k = keys(publisherId);
    const held = await this.storage.get<Hold>(k.hold(txid));
    if (held && held.since > this.now() - RESERVATION_TTL_MS) return true;
    if ((await this.balance(publisherId)).available < 1) return false;
    await this.storage.put({ [k.hold(txid)]: { since: this.now() } satisfies Hold });
    return true;
  }

  async consume(sale: SaleRecord): Promise<void> {
    const k = keys(sale.publisherId);
    await this.storage.delete([k.hold(sale.transaction)]);
    if (await this.storage.get<string>(k.sold(sale.transaction))) return; // already on the books
    const balance = (await this.storage.get<number>(k.balance)) ?? 0;
    const sales = (await this.storage.get<number>(k.sales)) ?? 0;
    // One put: the sale, its marker, the count and the balance are written together or not at all. The balance
    // is floored at 0, as SQLite's: a sale delivered after its hold expired and the credits were withdrawn.
    await this.storage.put({
      [k.sale(sale.at, sale.transaction)]: sale,
      [k.sold(sale.transaction)]: k.sale(sale.at, sale.transaction),
      [k.sales]: sales + 1,
      [k.balance]: Math.max(0, balance - sale.credits),
      [k.known]: true,
    });
  }

  async release(publisherId: string, txid: string): Promise<void> {
    await this.storage.delete([keys(publisherId).hold(txid)]);
  }

  async credit(publisherId: string, amount: number, note?: string): Promise<CreditBalance> {
    if (!Number.isSafeInteger(amount) || amount === 0) {
      throw new CreditError(`credits must be a non-zero whole number: ${amount}`);
    }
    const k = keys(publisherId);
    const before = await this.balance(publisherId);
    const next = before.balance + amount;
    if (next < before.reserved) {
      throw new CreditError(
        `publisher "${publisherId}" has ${before.balance} credit(s), ${before.reserved} held by sales in progress: cannot withdraw ${-amount}`,
      );
    }
    const grants = ((await this.storage.get<number>(k.grants)) ?? 0) + 1;
    const grant: Grant = { at: new Date(this.now()).toISOString(), amount, note: note ?? null };
    await this.storage.put({
      [k.balance]: next,
      [k.grants]: grants,
      [k.grant(grants)]: grant,
      [k.known]: true,
    });
    return { ...before, balance: next, available: Math.max(0, next - before.reserved) };
  }

  async statement(publisherId: string, since?: string): Promise<SaleRecord[]> {
    const k = keys(publisherId);
    const rows = await this.storage.list<SaleRecord>({
      prefix: k.salesByTime,
      ...(since ? { start: `${k.salesByTime}${since}` } : {}),
    });
    return [...rows.values()];
  }

  async grants(publisherId: string, since?: string): Promise<GrantRecord[]> {
    // Keyed by their count, not their time: read whole (a publisher has a few grants, not thousands) and filtered.
    const rows = await this.storage.list<Grant>({ prefix: keys(publisherId).grantsInOrder });
    return [...rows.values()]
      .filter((grant) => since === undefined || grant.at >= since)
      .map((grant) => ({ at: grant.at, publisherId, credits: grant.amount, note: grant.note }));
  }

  async list(): Promise<CreditBalance[]> {
    const known = await this.storage.list<true>({ prefix: 'known:' });
    return Promise.all([...known.keys()].map((key) => this.balance(key.slice('known:'.length))));
  }
}
