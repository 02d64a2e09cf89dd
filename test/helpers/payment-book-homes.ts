// Every home of the payment book, for the tests that hold each to the same rules: process memory, a Durable
// Object's storage (in a Map) and a SQLite file (a new one per call, in a folder removed after the test file).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { StoragePaymentBook } from '../../paywall-worker/cloudflare/storage-payment-book.ts';
import { MemoryPaymentBook } from '../../paywall-worker/payment-book.ts';
import type { PaymentBook } from '../../paywall-worker/payment-book.ts';
import { SqlitePaymentBook } from '../../paywall-worker/payment-book-sqlite.ts';
import { mapStorage } from './map-storage.ts';

export function paymentBookHomes(prefix: string): {
  homes: Array<[string, (now: () => number) => PaymentBook]>;
  sqliteFile: () => string;
} {
  const folder = mkdtempSync(join(tmpdir(), prefix));
  afterAll(() => rmSync(folder, { recursive: true, force: true }));
  let files = 0;
  const sqliteFile = () => join(folder, `payments-${++files}.sqlite`);
  return {
    homes: [
      ['memory', (now) => new MemoryPaymentBook(now)],
      ['Durable Object storage', (now) => new StoragePaymentBook(mapStorage(), now)],
      ['SQLite', (now) => new SqlitePaymentBook(sqliteFile(), now)],
    ],
    sqliteFile,
  };
}
