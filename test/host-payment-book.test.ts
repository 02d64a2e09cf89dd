// The payment book's three homes keep the same rules: process memory, Durable Object storage (a Map standing in for
// `ctx.storage` here; the real Durable Object runs in test/host-cloudflare.test.ts) and a SQLite file (Node with a
// real facilitator), which also keeps its records across a restart and between two processes on one file.
import { describe, expect, it } from 'vitest';
import type { SettleResponse } from '@x402/core/types';
import { StoragePaymentBook } from '../paywall-worker/cloudflare/storage-payment-book.ts';
import { IN_FLIGHT_LEASE_MS, RECORD_TTL_MS } from '../paywall-worker/payment-book.ts';
import { SqlitePaymentBook } from '../paywall-worker/payment-book-sqlite.ts';
import { mapStorage } from './helpers/map-storage.ts';
import { paymentBookHomes } from './helpers/payment-book-homes.ts';

const settlement = { success: true, transaction: 'TX', network: 'algorand:x', payer: 'P' } as SettleResponse;
const record = { path: '/api/x402-atlas.php', settlement, payment: 'SIGNED-A', body: '{"sold":1}' };

const { homes, sqliteFile } = paymentBookHomes('emi-book-');

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
    // The bytes of the claim whose outcome is unknown, not those of whoever asks next; when that claim began.
    expect(await book.claim('A', 'OTHER-BYTES')).toEqual({
      state: 'pending',
      payment: 'SIGNED-A',
      attemptedAt: 0,
    });
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
    let now = 5_000;
    const book = open(() => now);
    await book.claim('A', 'SIGNED-A');
    await book.pending('A', 'SIGNED-A', 5_000);
    now += 1_000;
    // When the attempt that may have landed it began: a confirmation from before then is not its doing.
    expect(await book.claim('A', 'OTHER-BYTES')).toEqual({
      state: 'pending',
      payment: 'SIGNED-A',
      attemptedAt: 5_000,
    });
    // Kept however often the payment comes back (each retry puts it back pending with the first attempt's time).
    await book.pending('A', 'SIGNED-A', 5_000);
    now += 200_000;
    expect(await book.claim('A', 'SIGNED-A')).toEqual({
      state: 'pending',
      payment: 'SIGNED-A',
      attemptedAt: 5_000,
    });
  });
});

describe('the payment book in Durable Object storage', () => {
  it('sets an alarm with its first entry, and the alarm forgets what expired (in batches of 128)', async () => {
    let now = 1_000;
    const storage = mapStorage();
    const book = new StoragePaymentBook(storage, () => now);
    for (let i = 0; i < 300; i++) await book.claim(`OLD${i}`, 'SIGNED');
    await book.settled('OLD0', record);
    expect(storage.alarm).toBe(1_000 + RECORD_TTL_MS);
    now = 1_000 + RECORD_TTL_MS / 2;
    await book.settled('NEW', record); // an alarm is set already: not moved
    expect(storage.alarm).toBe(1_000 + RECORD_TTL_MS);

    now = 1_000 + RECORD_TTL_MS; // the alarm fires (the runtime clears it first)
    storage.alarm = null;
    await book.sweep();
    expect([...storage.map.keys()]).toEqual(['NEW']);
    expect(storage.alarm).toBe(1_000 + RECORD_TTL_MS / 2 + RECORD_TTL_MS); // when NEW expires
    expect(await book.claim('NEW', 'SIGNED-A')).toEqual({ state: 'settled', record });

    now = storage.alarm!;
    storage.alarm = null;
    await book.sweep();
    expect(storage.map.size).toBe(0);
    expect(storage.alarm).toBeNull(); // nothing left to wake for; the next entry sets one again
    await book.claim('LATER', 'SIGNED');
    expect(storage.alarm).toBe(now + RECORD_TTL_MS);
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
