// One payment id, one payment, in every home of the payment book (process memory, Durable Object storage, a SQLite
// file): an id binds to the first payment sent with it; another payment with that id is told which payment it
// belongs to (the paywall answers 409) until the binding is an hour old; only the payment it belongs to unbinds it.
// The SQLite book adds its table to a file an older version made; Durable Object storage sweeps bindings like
// payments. (The paywall's use of the rule: test/paywall-payment-id-conflict.test.ts.)
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { SettleResponse } from '@x402/core/types';
import { StoragePaymentBook } from '../paywall-worker/cloudflare/storage-payment-book.ts';
import { RECORD_TTL_MS } from '../paywall-worker/payment-book.ts';
import { SqlitePaymentBook } from '../paywall-worker/payment-book-sqlite.ts';
import { mapStorage } from './helpers/map-storage.ts';
import { paymentBookHomes } from './helpers/payment-book-homes.ts';

const { homes, sqliteFile } = paymentBookHomes('emi-book-ids-');

const ID = 'pay_0123456789abcdef0123';

describe.each(homes)('payment ids in the payment book in %s', (_, open) => {
  it('binds an id to the first payment; another payment with it is told which payment it belongs to', async () => {
    const book = open(() => 0);
    expect(await book.bindId(ID, 'A')).toEqual({ bound: true });
    expect(await book.bindId(ID, 'B')).toEqual({ bound: false, txid: 'A' });
    expect(await book.bindId(ID, 'A')).toEqual({ bound: true }); // the same payment again
    expect(await book.bindId(`${ID}-other`, 'B')).toEqual({ bound: true }); // another id is another matter
  });

  it('lets the id bind anew once its binding is RECORD_TTL_MS old', async () => {
    let now = 0;
    const book = open(() => now);
    await book.bindId(ID, 'A');
    now = RECORD_TTL_MS - 1;
    expect(await book.bindId(ID, 'B')).toEqual({ bound: false, txid: 'A' });
    now = RECORD_TTL_MS;
    expect(await book.bindId(ID, 'B')).toEqual({ bound: true });
    expect(await book.bindId(ID, 'A')).toEqual({ bound: false, txid: 'B' });
  });

  it('is unbound only by the payment it belongs to', async () => {
    const book = open(() => 0);
    await book.bindId(ID, 'A');
    await book.unbindId(ID, 'B');
    expect(await book.bindId(ID, 'B')).toEqual({ bound: false, txid: 'A' });
    await book.unbindId(ID, 'A');
    expect(await book.bindId(ID, 'B')).toEqual({ bound: true });
    await book.unbindId(ID, 'A'); // A's unbind after B bound leaves B's binding
    expect(await book.bindId(ID, 'C')).toEqual({ bound: false, txid: 'B' });
  });

  it('keeps bindings apart from payments: a payment keyed like an id is a payment', async () => {
    const book = open(() => 0);
    await book.bindId(ID, 'A');
    expect(await book.claim(ID, 'SIGNED')).toEqual({ state: 'claimed' });
    expect(await book.claim('A', 'SIGNED-A')).toEqual({ state: 'claimed' });
    expect(await book.bindId(ID, 'B')).toEqual({ bound: false, txid: 'A' });
  });
});

describe('payment ids in a SQLite book', () => {
  it('binds in a file made by the version before ids, whose payments it still reads', async () => {
    const file = sqliteFile();
    const old = new Database(file);
    old.exec(`
      CREATE TABLE payments (txid TEXT PRIMARY KEY, since INTEGER NOT NULL, entry TEXT NOT NULL);
      CREATE INDEX payments_by_age ON payments (since);
    `);
    const settlement = {
      success: true,
      transaction: 'A',
      network: 'algorand:x',
      payer: 'P',
    } as SettleResponse;
    const record = { path: '/api/x402-atlas.php', settlement, payment: 'SIGNED-A', body: '{"sold":1}' };
    old
      .prepare('INSERT INTO payments (txid, since, entry) VALUES (?, ?, ?)')
      .run('A', 0, JSON.stringify({ state: 'settled', since: 0, record }));
    old.close();
    const book = new SqlitePaymentBook(file, () => 1);
    expect(await book.claim('A', 'SIGNED-A')).toEqual({ state: 'settled', record });
    expect(await book.bindId(ID, 'A')).toEqual({ bound: true });
    expect(await book.bindId(ID, 'B')).toEqual({ bound: false, txid: 'A' });
    book.close();
  });

  it('binds, when it opens a book an older version wrote, the ids of the payments it holds (settled and pending)', async () => {
    const file = sqliteFile();
    const old = new Database(file);
    old.exec('CREATE TABLE payments (txid TEXT PRIMARY KEY, since INTEGER NOT NULL, entry TEXT NOT NULL);');
    const settlement = {
      success: true,
      transaction: 'S',
      network: 'algorand:x',
      payer: 'P',
    } as SettleResponse;
    const entries = {
      // Presentations as presentationOf writes them: the signed bytes, a space, the payment id.
      S: {
        state: 'settled',
        since: 10,
        record: { path: '/p', settlement, payment: 'SIGNED-S pay_settled_0123456789', body: '{}' },
      },
      P: { state: 'pending', since: 20, payment: 'SIGNED-P pay_pending_0123456789', attemptedAt: 5 },
      N: { state: 'settled', since: 30, record: { path: '/p', settlement, payment: 'SIGNED-N', body: '{}' } },
    };
    const insert = old.prepare('INSERT INTO payments (txid, since, entry) VALUES (?, ?, ?)');
    for (const [txid, entry] of Object.entries(entries)) insert.run(txid, entry.since, JSON.stringify(entry));
    old.close();

    const book = new SqlitePaymentBook(file, () => 1_000);
    // A new signature with either id is told which payment it belongs to (the paywall's 409), for their hour.
    expect(await book.bindId('pay_settled_0123456789', 'NEW')).toEqual({ bound: false, txid: 'S' });
    expect(await book.bindId('pay_pending_0123456789', 'NEW')).toEqual({ bound: false, txid: 'P' });
    expect(await book.bindId('pay_settled_0123456789', 'S')).toEqual({ bound: true }); // its own payment: kept
    book.close();
    // Opening again changes nothing already bound.
    const again = new SqlitePaymentBook(file, () => 2_000);
    expect(await again.bindId('pay_pending_0123456789', 'NEW')).toEqual({ bound: false, txid: 'P' });
    again.close();
  });

  it("opens a book holding rows it cannot read, and binds only the last hour's ids it can", async () => {
    const file = sqliteFile();
    const old = new Database(file);
    old.exec('CREATE TABLE payments (txid TEXT PRIMARY KEY, since INTEGER NOT NULL, entry TEXT NOT NULL);');
    const insert = old.prepare('INSERT INTO payments (txid, since, entry) VALUES (?, ?, ?)');
    const now = 10 * RECORD_TTL_MS;
    insert.run('BAD', now, 'not json');
    insert.run('NORECORD', now, JSON.stringify({ state: 'settled', since: now }));
    insert.run(
      'OLD',
      now - RECORD_TTL_MS - 1,
      JSON.stringify({ state: 'pending', since: 0, payment: 'S pay_old_0123456789ab' }),
    );
    insert.run(
      'P',
      now,
      JSON.stringify({ state: 'pending', since: now, payment: 'S pay_kept_0123456789ab' }),
    );
    old.close();

    const book = new SqlitePaymentBook(file, () => now); // was: a SyntaxError out of the constructor
    expect(await book.bindId('pay_kept_0123456789ab', 'NEW')).toEqual({ bound: false, txid: 'P' });
    expect(await book.bindId('pay_old_0123456789ab', 'NEW')).toEqual({ bound: true }); // its hour had passed
    book.close();
  });

  it('is one binding for two workers on one file', async () => {
    const file = sqliteFile();
    const first = new SqlitePaymentBook(file, () => 0);
    const second = new SqlitePaymentBook(file, () => 0);
    expect(await first.bindId(ID, 'A')).toEqual({ bound: true });
    expect(await second.bindId(ID, 'B')).toEqual({ bound: false, txid: 'A' });
    await second.unbindId(ID, 'A');
    expect(await first.bindId(ID, 'B')).toEqual({ bound: true });
    first.close();
    second.close();
  });

  it('deletes expired bindings', async () => {
    const file = sqliteFile();
    let now = 0;
    const book = new SqlitePaymentBook(file, () => now);
    await book.bindId(ID, 'A');
    now = RECORD_TTL_MS;
    await book.bindId(`${ID}-other`, 'B');
    book.close();
    const db = new Database(file, { readonly: true });
    expect(db.prepare('SELECT id, txid FROM payment_ids').all()).toEqual([{ id: `${ID}-other`, txid: 'B' }]);
    db.close();
  });
});

describe('payment ids in Durable Object storage', () => {
  it('are swept by the alarm with the payments: expired ones of both kinds go, the alarm follows the oldest left', async () => {
    const storage = mapStorage();
    let now = 0;
    const book = new StoragePaymentBook(storage, () => now);
    await book.bindId(ID, 'A');
    expect(storage.alarm).toBe(RECORD_TTL_MS); // the first binding sets the alarm as a first payment does
    await book.claim('A', 'SIGNED-A');
    now = 10;
    await book.bindId(`${ID}-later`, 'B');
    await book.claim('B', 'SIGNED-B');
    now = RECORD_TTL_MS;
    await book.sweep();
    expect([...storage.map.keys()].sort()).toEqual(['B', `id:${ID}-later`]);
    expect(storage.alarm).toBe(10 + RECORD_TTL_MS);
    now = 10 + RECORD_TTL_MS;
    await book.sweep();
    expect(storage.map.size).toBe(0);
  });

  it('keeps a binding under id:<id>, beside the payments', async () => {
    const storage = mapStorage();
    const book = new StoragePaymentBook(storage, () => 5);
    await book.bindId(ID, 'A');
    expect(storage.map.get(`id:${ID}`)).toEqual({ txid: 'A', since: 5 });
  });
});
