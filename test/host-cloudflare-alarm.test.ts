// The payment book's alarm in workerd. The Worker is bundled as `wrangler deploy` ships it (deploy/cloudflare/
// wrangler.toml) and run by Miniflare with that file's bindings, Durable Objects and migrations. The one test seam:
// an entry module around the bundle exports the class wrangler.toml binds to PAYMENT_BOOK as a subclass of the
// bundle's class that adds three probe methods (read the storage and the alarm, plant an entry, set the alarm).
// Everything else, the alarm handler included, is the shipped class's own: if wrangler.toml named a class the bundle
// does not export, or the class had no working `alarm()`, this test fails. The record TTL is an hour, so expired
// entries are planted with an old `since`, and the alarm is brought forward to now; workerd then fires it.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import algosdk from 'algosdk';
import { Miniflare } from 'miniflare';
import { unstable_getMiniflareWorkerOptions } from 'wrangler';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodePaymentResponseHeader } from '@x402/core/http';
import { PAID_RESOURCES } from '../schemas/resources.ts';
import { bundleForDeploy, WRANGLER_CONFIG } from '../deploy/cloudflare/run.ts';
import { startDevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import type { DevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import { RECORD_TTL_MS } from '../paywall-worker/payment-book.ts';
import type { BookEntry, ClaimResult } from '../paywall-worker/payment-book.ts';
import {
  fetchChallenge,
  newBuyer,
  paymentHeader,
  resourceById,
  writePaidFixtures,
} from './paywall-harness.ts';

/** One payment-book object as the test reaches it (RPC through Miniflare): the book's methods and the probes. */
interface BookProbe {
  claim(txid: string, payment: string): Promise<ClaimResult>;
  /** JSON of `{ entries, alarm }`: every key in the object's storage, and its alarm (null when none is set). */
  probeRead(): Promise<string>;
  probePut(key: string, entry: BookEntry): Promise<void>;
  probeSetAlarm(time: number): Promise<void>;
}
interface BookNamespace {
  idFromName(name: string): unknown;
  get(id: unknown): BookProbe;
}
interface PaidBucket {
  put(key: string, body: string, options: { httpMetadata: { contentType: string } }): Promise<unknown>;
}
interface BookState {
  entries: Record<string, BookEntry>;
  alarm: number | null;
}

/** The test's entry module: the bundle as it ships, with the payment book's class extended by the probes. */
const probeEntry = (className: string) => `
import * as shipped from './entry.js';
export * from './entry.js';
export default shipped.default;
export class ${className} extends shipped.${className} {
  async probeRead() {
    const entries = Object.fromEntries(await this.ctx.storage.list());
    return JSON.stringify({ entries, alarm: await this.ctx.storage.getAlarm() });
  }
  async probePut(key, entry) { await this.ctx.storage.put(key, entry); }
  async probeSetAlarm(time) { await this.ctx.storage.setAlarm(time); }
}
`;

describe(
  "the payment book's alarm in workerd (Miniflare with wrangler.toml's bindings)",
  { timeout: 60_000 },
  () => {
    let root: string;
    let facilitator: DevFacilitator;
    let mf: Miniflare;
    let url: string;
    let books: BookNamespace;

    beforeAll(async () => {
      root = await mkdtemp(join(tmpdir(), 'emi-cloudflare-alarm-'));
      await mkdir(join(root, 'dist'));
      await writeFile(join(root, 'dist/index.html'), '<!doctype html><title>home</title>');
      await mkdir(join(root, 'paid'));
      await writePaidFixtures(join(root, 'paid'));
      await bundleForDeploy(join(root, 'out'), join(root, 'dist'));

      const { workerOptions } = unstable_getMiniflareWorkerOptions(WRANGLER_CONFIG, undefined, {
        overrides: { assets: { directory: join(root, 'dist') } },
      });
      const binding = workerOptions.durableObjects?.PAYMENT_BOOK;
      const className = typeof binding === 'string' ? binding : binding?.className;
      if (!className) throw new Error(`${WRANGLER_CONFIG} binds no PAYMENT_BOOK Durable Object`);
      await writeFile(join(root, 'out/probe.js'), probeEntry(className));

      facilitator = await startDevFacilitator();
      const payTo = algosdk.generateAccount().addr.toString();
      facilitator.ledger.optIn(payTo);
      mf = new Miniflare({
        ...workerOptions,
        bindings: {
          ...workerOptions.bindings,
          EMI_PAYTO: payTo,
          EMI_FACILITATOR_URL: facilitator.url,
          EMI_INDEXER_URL: facilitator.url,
          EMI_ALLOW_SIMULATED: '1', // the fixtures are the simulated examples
        },
        modulesRoot: join(root, 'out'),
        modules: [
          { type: 'ESModule', path: join(root, 'out/probe.js') },
          { type: 'ESModule', path: join(root, 'out/entry.js') },
        ],
        host: '127.0.0.1',
        port: 0,
      });
      url = (await mf.ready).origin;
      // The paid files in the bucket, as `npm run upload:r2` puts them.
      const bucket = (await mf.getR2Bucket('PAID_FILES')) as unknown as PaidBucket;
      for (const resource of PAID_RESOURCES) {
        await bucket.put(resource.file, await readFile(join(root, 'paid', resource.file), 'utf8'), {
          httpMetadata: { contentType: 'application/json' },
        });
      }
      books = (await mf.getDurableObjectNamespace('PAYMENT_BOOK')) as unknown as BookNamespace;
    }, 60_000);

    afterAll(async () => {
      await mf?.dispose();
      await facilitator?.close();
      if (root) await rm(root, { recursive: true, force: true });
    });

    /** The object that keeps this transaction id (the worker shards by its first letter). */
    const shard = (txid: string) => books.get(books.idFromName(`payments-${txid.charAt(0)}`));
    const read = async (book: BookProbe) => JSON.parse(await book.probeRead()) as BookState;

    /** Brings the alarm forward to now and waits (up to 10 s) until workerd has run it and `key` is gone. */
    async function runAlarm(book: BookProbe, key: string): Promise<BookState> {
      await book.probeSetAlarm(Date.now());
      for (let waited = 0; waited < 10_000; waited += 50) {
        const state = await read(book);
        if (!(key in state.entries)) return state;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      throw new Error(`the alarm did not remove ${key} within 10 s: is alarm() wired to the sweep?`);
    }

    it('sets an alarm with the first entry; when it fires it removes the expired, keeps the live, re-arms for the oldest left, and the paid redelivery still works', async () => {
      const resource = resourceById('atlas');
      const { paymentRequired } = await fetchChallenge(`${url}${resource.path}`);
      const buyer = await newBuyer(facilitator);
      const headers = paymentHeader(await buyer.pay(paymentRequired));
      const before = Date.now();
      const paid = await fetch(`${url}${resource.path}`, { headers });
      expect(paid.status).toBe(200);
      const body = await paid.text();
      const { transaction: txid } = decodePaymentResponseHeader(paid.headers.get('payment-response')!);
      const charged = facilitator.ledger.assetBalance(buyer.address);

      // The sale's entry is in its shard, settled; the alarm was set by its first state (the claim, in flight).
      const book = shard(txid);
      const sold = await read(book);
      const settled = sold.entries[txid];
      expect(settled?.state).toBe('settled');
      expect(sold.alarm).not.toBeNull();
      expect(sold.alarm! - RECORD_TTL_MS).toBeGreaterThanOrEqual(before - 1_000);
      expect(sold.alarm! - RECORD_TTL_MS).toBeLessThanOrEqual(settled!.since);

      // An entry past its TTL, and a live one older than the sale (so the next alarm must be set by it).
      const now = Date.now();
      const expired = `${txid.charAt(0)}EXPIRED`;
      const older = `${txid.charAt(0)}OLDER`;
      await book.probePut(expired, { state: 'pending', since: now - RECORD_TTL_MS - 60_000, payment: 'OLD' });
      await book.probePut(older, { state: 'pending', since: now - RECORD_TTL_MS / 2, payment: 'OLDER' });

      const swept = await runAlarm(book, expired);
      expect(Object.keys(swept.entries).sort()).toEqual([older, txid].sort());
      expect(swept.entries[txid]).toEqual(settled);
      expect(swept.alarm).toBe(now - RECORD_TTL_MS / 2 + RECORD_TTL_MS);

      // The same signed payment again: the same body and settlement, not charged again.
      const again = await fetch(`${url}${resource.path}`, { headers });
      expect(again.status).toBe(200);
      expect(await again.text()).toBe(body);
      expect(decodePaymentResponseHeader(again.headers.get('payment-response')!).transaction).toBe(txid);
      expect(facilitator.ledger.assetBalance(buyer.address)).toBe(charged);
    });

    it('leaves no alarm on an object the sweep emptied; its next entry sets one again', async () => {
      const book = shard('9-unused'); // no transaction id starts with 9 (base32): an object of its own
      const expired = '9EXPIRED';
      await book.probePut(expired, {
        state: 'in_flight',
        since: Date.now() - RECORD_TTL_MS - 1,
        payment: 'OLD',
      });
      const swept = await runAlarm(book, expired);
      expect(swept).toEqual({ entries: {}, alarm: null });

      const before = Date.now();
      expect(await book.claim('9NEXT', 'SIGNED')).toMatchObject({ state: 'claimed' });
      const next = await read(book);
      expect(next.alarm).toBe(next.entries['9NEXT']!.since + RECORD_TTL_MS);
      expect(next.entries['9NEXT']!.since).toBeGreaterThanOrEqual(before - 1_000);
    });
  },
);
