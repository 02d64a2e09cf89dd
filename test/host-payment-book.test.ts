// The payment book's three homes keep the same rules: process memory, Durable Object storage (a Map standing in for
// `ctx.storage` here; the real Durable Object runs in test/host-cloudflare.test.ts) and a SQLite file (Node with a
// real facilitator), which also keeps its records across a restart and between two processes on one file.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { SettleResponse } from '@x402/core/types';
import { StoragePaymentBook } from '../paywall-worker/cloudflare/storage-payment-book.ts';
import type { BookStorage } from '../paywall-worker/cloudflare/storage-payment-book.ts';
import { IN_FLIGHT_LEASE_MS, MemoryPaymentBook, RECORD_TTL_MS } from '../paywall-worker/payment-book.ts';
import type { PaymentBook } from '../paywall-worker/payment-book.ts';
import { SqlitePaymentBook } from '../paywall-worker/payment-book-sqlite.ts';

function mapStorage(): BookStorage {
  const map = new Map<string, unknown>();
  return {
    get: <T>(key: string) => Promise.resolve(map.get(key) as T | undefined),
    put: <T>(key: string, value: T) => Promise.resolve(void map.set(key, structuredClone(value))),
    delete: (key: string) => Promise.resolve(map.delete(key)),
  };
}

const settlement = { success: true, transaction: 'TX', network: 'algorand:x', payer: 'P' } as SettleResponse;
const record = { path: '/api/x402-atlas.php', settlement, payment: 'SIGNED-A', body: '{"sold":1}' };

const folder = mkdtempSync(join(tmpdir(), 'emi-book-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));
let files = 0;
const sqliteFile = () => join(folder, `payments-${++files}.sqlite`);

const homes: Array<[string, (now: () => number) => PaymentBook]> = [
  ['memory', (now) => new MemoryPaymentBook(now)],
  ['Durable Object storage', (now) => new StoragePaymentBook(mapStorage(), now)],
  ['SQLite', (now) => new SqlitePaymentBook(sqliteFile(), now)],
];

describe.each(homes)('the payment book in %s', (_, open) => {
  it('claims a payment once; a release lets it be presented again', async () => {
    const book = open(Date.now);
    expect(await book.claim('A', 'SIGNED-A')).toEqual({ state: 'claimed' });
    expect(await book.claim('A', 'SIGNED-A')).toEqual({ state: 'in_flight' });
    await book.release('A');
    expect(await book.claim('A', 'SIGNED-A')).toEqual({ state: 'claimed' });
  });

  it('treats a claim older than the lease as an unknown outcome to reconcile (its worker died)', async () => {
    let now = 0;
    const book = open(() => now);
    await book.claim('A', 'SIGNED-A');
    now = IN_FLIGHT_LEASE_MS - 1;
    expect(await book.claim('A', 'SIGNED-A')).toEqual({ state: 'in_flight' });
    now = IN_FLIGHT_LEASE_MS + 1;
    // The bytes of the claim whose outcome is unknown, not those of whoever asks next.
    expect(await book.claim('A', 'OTHER-BYTES')).toEqual({ state: 'pending', payment: 'SIGNED-A' });
  });

  it('returns a settled record for redelivery until it expires, and never releases it', async () => {
    let now = 0;
    const book = open(() => now);
    await book.claim('A', 'SIGNED-A');
    await book.settled('A', record);
    await book.release('A');
    expect(await book.claim('A', 'SIGNED-A')).toEqual({ state: 'settled', record });
    now = RECORD_TTL_MS + 1;
    expect(await book.claim('A', 'SIGNED-A')).toEqual({ state: 'claimed' });
  });

  it('keeps a lost settle answer pending, with the bytes that were sent: the next claim must find out first', async () => {
    const book = open(Date.now);
    await book.claim('A', 'SIGNED-A');
    await book.pending('A', 'SIGNED-A');
    expect(await book.claim('A', 'OTHER-BYTES')).toEqual({ state: 'pending', payment: 'SIGNED-A' });
    await book.pending('A', 'SIGNED-A');
    expect(await book.claim('A', 'SIGNED-A')).toEqual({ state: 'pending', payment: 'SIGNED-A' });
  });
});

describe('the payment book in a SQLite file', () => {
  it('delivers a settled payment again after a restart', async () => {
    const file = sqliteFile();
    const before = new SqlitePaymentBook(file);
    await before.claim('A', 'SIGNED-A');
    await before.settled('A', record);
    before.close();
    const after = new SqlitePaymentBook(file);
    expect(await after.claim('A', 'SIGNED-A')).toEqual({ state: 'settled', record });
    after.close();
  });

  it('lets one of two workers on the same file claim a payment', async () => {
    const file = sqliteFile();
    const one = new SqlitePaymentBook(file);
    const two = new SqlitePaymentBook(file);
    expect(await one.claim('A', 'SIGNED-A')).toEqual({ state: 'claimed' });
    expect(await two.claim('A', 'SIGNED-A')).toEqual({ state: 'in_flight' });
    await one.release('A');
    expect(await two.claim('A', 'SIGNED-A')).toEqual({ state: 'claimed' });
    one.close();
    two.close();
  });
});
