// The credit ledger in one SQLite file (WAL), for Node: `emi serve`/`emi up` and the `emi publisher` commands open
// the same file, so credits added by the operator count at once. Each change is one write transaction
// (BEGIN IMMEDIATE): two buyers racing for the last credit cannot both hold it, even from two processes.
import type Database from 'better-sqlite3';
import { openMoneyDatabase } from '../sqlite-file.ts';
import { CreditError, RESERVATION_TTL_MS } from './credit-ledger.ts';
import type { CreditBalance, CreditLedger, GrantRecord, SaleRecord } from './credit-ledger.ts';

export const DEFAULT_LEDGER_FILE = 'publishers.sqlite';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS publisher_credits (
  publisher_id TEXT PRIMARY KEY,
  balance INTEGER NOT NULL CHECK (balance >= 0)
);
CREATE TABLE IF NOT EXISTS credit_reservations (
  txid TEXT PRIMARY KEY,
  publisher_id TEXT NOT NULL,
  reserved_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS credit_grants (
  id INTEGER PRIMARY KEY,
  publisher_id TEXT NOT NULL,
  at TEXT NOT NULL,
  amount INTEGER NOT NULL,
  note TEXT
);
CREATE TABLE IF NOT EXISTS publisher_sales (
  transaction_id TEXT PRIMARY KEY,
  publisher_id TEXT NOT NULL,
  at TEXT NOT NULL,
  product TEXT NOT NULL,
  path TEXT NOT NULL,
  price_usd TEXT NOT NULL,
  amount_atomic TEXT NOT NULL,
  pay_to TEXT NOT NULL,
  payer TEXT NOT NULL,
  network TEXT NOT NULL,
  credits INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS publisher_sales_by_time ON publisher_sales (publisher_id, at);
`;

interface SaleRow {
  transaction_id: string;
  publisher_id: string;
  at: string;
  product: string;
  path: string;
  price_usd: string;
  amount_atomic: string;
  pay_to: string;
  payer: string;
  network: string;
  credits: number;
}

const toRecord = (row: SaleRow): SaleRecord => ({
  at: row.at,
  publisherId: row.publisher_id,
  product: row.product,
  path: row.path,
  priceUsd: row.price_usd,
  amountAtomic: row.amount_atomic,
  payTo: row.pay_to,
  payer: row.payer,
  transaction: row.transaction_id,
  network: row.network,
  credits: row.credits,
});

export class SqliteCreditLedger implements CreditLedger {
  private readonly db: Database.Database;

  constructor(
    file: string,
    private readonly now: () => number = Date.now,
  ) {
    this.db = openMoneyDatabase(file, SCHEMA, "the publishers' credit ledger"); // a consumed credit and its sale survive a power loss
  }

  close(): void {
    this.db.close();
  }

  private snapshot(publisherId: string): CreditBalance {
    const balance =
      (
        this.db.prepare('SELECT balance FROM publisher_credits WHERE publisher_id = ?').get(publisherId) as
          { balance: number } | undefined
      )?.balance ?? 0;
    const { reserved } = this.db
      .prepare(
        'SELECT COUNT(*) AS reserved FROM credit_reservations WHERE publisher_id = ? AND reserved_at > ?',
      )
      .get(publisherId, this.now() - RESERVATION_TTL_MS) as { reserved: number };
    const { sales } = this.db
      .prepare('SELECT COUNT(*) AS sales FROM publisher_sales WHERE publisher_id = ?')
      .get(publisherId) as { sales: number };
    return { publisherId, balance, reserved, available: Math.max(0, balance - reserved), sales };
  }

  balance(publisherId: string): Promise<CreditBalance> {
    return Promise.resolve(this.snapshot(publisherId));
  }

  reserve(publisherId: string, txid: string): Promise<boolean> {
    const run = this.db.transaction((): boolean => {
      this.db
        .prepare('DELETE FROM credit_reservations WHERE reserved_at <= ?')
        .run(this.now() - RESERVATION_TTL_MS);
      if (this.db.prepare('SELECT 1 FROM credit_reservations WHERE txid = ?').get(txid)) return true;
      if (this.snapshot(publisherId).available < 1) return false;
      this.db
        .prepare('INSERT INTO credit_reservations (txid, publisher_id, reserved_at) VALUES (?, ?, ?)')
        .run(txid, publisherId, this.now());
      return true;
    });
    return Promise.resolve(run.immediate());
  }

  consume(sale: SaleRecord): Promise<void> {
    const run = this.db.transaction(() => {
      this.db.prepare('DELETE FROM credit_reservations WHERE txid = ?').run(sale.transaction);
      const recorded = this.db
        .prepare(
          `INSERT OR IGNORE INTO publisher_sales (transaction_id, publisher_id, at, product, path, price_usd,
             amount_atomic, pay_to, payer, network, credits) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          sale.transaction,
          sale.publisherId,
          sale.at,
          sale.product,
          sale.path,
          sale.priceUsd,
          sale.amountAtomic,
          sale.payTo,
          sale.payer,
          sale.network,
          sale.credits,
        );
      if (recorded.changes === 0) return; // this transaction's sale is already on the books
      // MAX(0, ...): a sale delivered after its reservation expired and the credits were withdrawn is still
      // recorded; the balance does not go negative.
      this.db
        .prepare('UPDATE publisher_credits SET balance = MAX(0, balance - ?) WHERE publisher_id = ?')
        .run(sale.credits, sale.publisherId);
    });
    run.immediate();
    return Promise.resolve();
  }

  release(_publisherId: string, txid: string): Promise<void> {
    this.db.prepare('DELETE FROM credit_reservations WHERE txid = ?').run(txid);
    return Promise.resolve();
  }

  credit(publisherId: string, amount: number, note?: string): Promise<CreditBalance> {
    if (!Number.isSafeInteger(amount) || amount === 0) {
      return Promise.reject(new CreditError(`credits must be a non-zero whole number: ${amount}`));
    }
    const run = this.db.transaction((): CreditBalance => {
      const before = this.snapshot(publisherId);
      const next = before.balance + amount;
      if (next < before.reserved) {
        throw new CreditError(
          `publisher "${publisherId}" has ${before.balance} credit(s), ${before.reserved} held by sales in progress: cannot withdraw ${-amount}`,
        );
      }
      this.db
        .prepare(
          `INSERT INTO publisher_credits (publisher_id, balance) VALUES (?, ?)
           ON CONFLICT (publisher_id) DO UPDATE SET balance = excluded.balance`,
        )
        .run(publisherId, next);
      this.db
        .prepare('INSERT INTO credit_grants (publisher_id, at, amount, note) VALUES (?, ?, ?, ?)')
        .run(publisherId, new Date(this.now()).toISOString(), amount, note ?? null);
      return this.snapshot(publisherId);
    });
    try {
      return Promise.resolve(run.immediate());
    } catch (error) {
      return Promise.reject(error as Error);
    }
  }

  statement(publisherId: string, since?: string): Promise<SaleRecord[]> {
    const rows = this.db
      .prepare('SELECT * FROM publisher_sales WHERE publisher_id = ? AND at >= ? ORDER BY at, transaction_id')
      .all(publisherId, since ?? '') as SaleRow[];
    return Promise.resolve(rows.map(toRecord));
  }

  grants(publisherId: string, since?: string): Promise<GrantRecord[]> {
    // By id within one time: two grants in the same millisecond keep the order they were made in.
    const rows = this.db
      .prepare(
        `SELECT at, publisher_id AS publisherId, amount AS credits, note FROM credit_grants
         WHERE publisher_id = ? AND at >= ? ORDER BY at, id`,
      )
      .all(publisherId, since ?? '') as GrantRecord[];
    return Promise.resolve(rows);
  }

  list(): Promise<CreditBalance[]> {
    const ids = this.db
      .prepare(
        `SELECT publisher_id FROM publisher_credits UNION SELECT publisher_id FROM publisher_sales
         ORDER BY publisher_id`,
      )
      .all() as { publisher_id: string }[];
    return Promise.resolve(ids.map(({ publisher_id }) => this.snapshot(publisher_id)));
  }
}
