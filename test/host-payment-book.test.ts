// The payment book over Durable Object storage, in Node with a Map standing in for `ctx.storage` (the real
// Durable Object runs in test/host-cloudflare.test.ts): claims, leases of dead isolates, settled records, expiry.
import { describe, expect, it } from 'vitest';
import type { SettleResponse } from '@x402/core/types';
import {
  IN_FLIGHT_LEASE_MS,
  RECORD_TTL_MS,
  StoragePaymentBook,
} from '../paywall-worker/cloudflare/storage-payment-book.ts';
import type { BookStorage } from '../paywall-worker/cloudflare/storage-payment-book.ts';

function mapStorage(): BookStorage {
  const map = new Map<string, unknown>();
  return {
    get: <T>(key: string) => Promise.resolve(map.get(key) as T | undefined),
    put: <T>(key: string, value: T) => Promise.resolve(void map.set(key, structuredClone(value))),
    delete: (key: string) => Promise.resolve(map.delete(key)),
  };
}

const settlement = { success: true, transaction: 'TX', network: 'algorand:x', payer: 'P' } as SettleResponse;

describe('StoragePaymentBook', () => {
  it('claims a payment once; a release lets it be presented again', async () => {
    const book = new StoragePaymentBook(mapStorage());
    expect(await book.claim('A')).toEqual({ state: 'claimed' });
    expect(await book.claim('A')).toEqual({ state: 'in_flight' });
    await book.release('A');
    expect(await book.claim('A')).toEqual({ state: 'claimed' });
  });

  it('treats a claim older than the lease as an unknown outcome to reconcile (its isolate died)', async () => {
    let now = 0;
    const book = new StoragePaymentBook(mapStorage(), () => now);
    await book.claim('A');
    now = IN_FLIGHT_LEASE_MS - 1;
    expect(await book.claim('A')).toEqual({ state: 'in_flight' });
    now = IN_FLIGHT_LEASE_MS + 1;
    expect(await book.claim('A')).toEqual({ state: 'pending' });
  });

  it('returns a settled record for redelivery until it expires, and never releases it', async () => {
    let now = 0;
    const book = new StoragePaymentBook(mapStorage(), () => now);
    await book.claim('A');
    await book.settled('A', { path: '/api/x402-atlas.php', settlement });
    await book.release('A');
    expect(await book.claim('A')).toEqual({
      state: 'settled',
      record: { path: '/api/x402-atlas.php', settlement },
    });
    now = RECORD_TTL_MS + 1;
    expect(await book.claim('A')).toEqual({ state: 'claimed' });
  });

  it('keeps a lost settle answer pending: the next claim must find out first', async () => {
    const book = new StoragePaymentBook(mapStorage());
    await book.claim('A');
    await book.pending('A');
    expect(await book.claim('A')).toEqual({ state: 'pending' });
  });
});
