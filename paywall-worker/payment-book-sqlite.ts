// The payment book in one SQLite file (WAL), for Node: `emi paywall`, `emi serve` and `emi up` with a real
// facilitator. A settled payment's record (and the body it bought) survives a restart, so a buyer whose answer was
// lost still gets the file by sending the same payment again; two workers on one state folder share it. Each claim
// is one write transaction (BEGIN IMMEDIATE), so one payment is claimed by one request at a time across processes;
// so is each binding of a payment id (table payment_ids, created beside an older book's table when it opens).
import type Database from 'better-sqlite3';
import { openMoneyDatabase } from './sqlite-file.ts';
import { bindEntry, claimEntry, pendingEntry, RECORD_TTL_MS } from './payment-book.ts';
import type {
  BindResult,
  BookEntry,
  ClaimResult,
  IdBinding,
  PaymentBook,
  SettledPayment,
} from './payment-book.ts';

export const DEFAULT_PAYMENT_BOOK_FILE = 'payments.sqlite';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS payments (
  txid TEXT PRIMARY KEY,
  since INTEGER NOT NULL,
  entry TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS payments_by_age ON payments (since);
CREATE TABLE IF NOT EXISTS payment_ids (
  id TEXT PRIMARY KEY,
  txid TEXT NOT NULL,
  since INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS payment_ids_by_age ON payment_ids (since);
`;

export class SqlitePaymentBook implements PaymentBook {
  private readonly db: Database.Database;
  private readonly read: Database.Statement<[string], { entry: string }>;
  private readonly write: Database.Statement<[string, number, string]>;

  constructor(
    file: string,
    private readonly now: () => number = Date.now,
  ) {
    this.db = openMoneyDatabase(file, SCHEMA, 'the payment book'); // a settled payment's record survives a power loss
    this.read = this.db.prepare('SELECT entry FROM payments WHERE txid = ?');
    this.write = this.db.prepare('INSERT OR REPLACE INTO payments (txid, since, entry) VALUES (?, ?, ?)');
    this.bindKnownIds();
  }

  /**
   * Binds the id of every payment the book holds that has none bound: a book written by a release before payment
   * ids were bound (its payments' ids would otherwise be free to a second charge for the rest of their hour), or a
   * worker stopped between a claim and its binding. An id already bound stays as it is. Done in SQL, so that no body
   * is loaded, over the last hour's entries only; an entry that cannot be read (not JSON, no presentation) is
   * skipped, as a claim skips what it cannot read.
   */
  private bindKnownIds(): void {
    this.db
      .prepare(
        `INSERT OR IGNORE INTO payment_ids (id, txid, since)
         SELECT substr(presentation, instr(presentation, ' ') + 1), txid, since
         FROM (
           SELECT txid, since,
             COALESCE(json_extract(entry, '$.record.payment'), json_extract(entry, '$.payment')) AS presentation
           FROM payments WHERE since > ? AND json_valid(entry)
         )
         WHERE typeof(presentation) = 'text' AND instr(presentation, ' ') > 0`,
      )
      .run(this.now() - RECORD_TTL_MS);
  }

  close(): void {
    this.db.close();
  }

  private get(txid: string): BookEntry | undefined {
    const row = this.read.get(txid);
    return row ? (JSON.parse(row.entry) as BookEntry) : undefined;
  }

  private put(txid: string, entry: BookEntry): void {
    this.write.run(txid, entry.since, JSON.stringify(entry));
  }

  claim(txid: string, payment: string, body?: string): Promise<ClaimResult> {
    const run = this.db.transaction((): ClaimResult => {
      const now = this.now();
      this.db.prepare('DELETE FROM payments WHERE since <= ?').run(now - RECORD_TTL_MS);
      const { result, entry } = claimEntry(this.get(txid), payment, now, body);
      if (entry) this.put(txid, entry);
      return result;
    });
    return Promise.resolve(run.immediate());
  }

  release(txid: string): Promise<void> {
    this.db
      .prepare("DELETE FROM payments WHERE txid = ? AND json_extract(entry, '$.state') = 'in_flight'")
      .run(txid);
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
    const run = this.db.transaction((): BindResult => {
      const now = this.now();
      this.db.prepare('DELETE FROM payment_ids WHERE since <= ?').run(now - RECORD_TTL_MS);
      const known = this.db
        .prepare<[string], IdBinding>('SELECT txid, since FROM payment_ids WHERE id = ?')
        .get(id);
      const { result, entry } = bindEntry(known, txid, now);
      if (entry) {
        this.db
          .prepare('INSERT OR REPLACE INTO payment_ids (id, txid, since) VALUES (?, ?, ?)')
          .run(id, entry.txid, entry.since);
      }
      return result;
    });
    return Promise.resolve(run.immediate());
  }

  unbindId(id: string, txid: string): Promise<void> {
    this.db.prepare('DELETE FROM payment_ids WHERE id = ? AND txid = ?').run(id, txid);
    return Promise.resolve();
  }
}
