// The unpaid 402 answered at once: a repeated unpaid request for an unchanged file gets the very same challenge
// without any I/O wait, and nothing that changes what may be sold (a new generation, a deleted file, time making
// the file stale, a payment, a publisher's credit) is answered from it once the store's last confirmation of the
// file is CONFIRMED_FOR_MS old.
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import algosdk from 'algosdk';
import { PAID_EXAMPLES } from '../schemas/paid/examples.ts';
import { createPaywallApp } from '../paywall-worker/app.ts';
import type { PaywallApp } from '../paywall-worker/app.ts';
import type { Decision, SaleHooks } from '../paywall-worker/core/decide.ts';
import { startDevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import type { DevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import type { SalePoint } from '../paywall-worker/offers.ts';
import { createFsStorage } from '../paywall-worker/storage-fs.ts';
import type { PaidFileStorage } from '../paywall-worker/storage.ts';
import { CONFIRMED_FOR_MS, PaidFileReader } from '../paywall-worker/core/paid-file.ts';
import { buyWithDevWallet } from '../paywall-worker/buy.ts';
import { fetchChallenge, resourceById, startStack } from './paywall-harness.ts';

const resource = resourceById('paidMarketRegime');
const MAX_AGE_SECONDS = 180;
let facilitator: DevFacilitator;
let dir: string;
let payTo: string;
let clock: number;

beforeAll(async () => {
  facilitator = await startDevFacilitator();
  payTo = algosdk.generateAccount().addr.toString();
  facilitator.ledger.optIn(payTo);
});
afterAll(async () => {
  await facilitator?.close();
});
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'emi-known-402-'));
  clock = Date.now();
  return () => rm(dir, { recursive: true, force: true });
});

/** Waits until any version the worker confirmed before now has outlived CONFIRMED_FOR_MS. */
async function pastConfirmation(): Promise<void> {
  const from = performance.now();
  while (performance.now() - from <= CONFIRMED_FOR_MS) await new Promise((done) => setImmediate(done));
}

/** Publishes the paid file as the generator does (a new file renamed over the old), generated at `at`. */
async function publish(at: number): Promise<string> {
  const updated = new Date(at).toISOString();
  const body = { ...(PAID_EXAMPLES[resource.id] as Record<string, unknown>), updated };
  await writeFile(join(dir, 'next.tmp'), JSON.stringify(body));
  await rename(join(dir, 'next.tmp'), join(dir, resource.file));
  await pastConfirmation();
  return updated;
}

function app(options: { salePoints?: SalePoint[]; hooks?: SaleHooks } = {}): PaywallApp {
  return createPaywallApp(
    {
      payTo,
      facilitatorUrl: facilitator.url,
      baseUrl: 'http://127.0.0.1:8080',
      storage: createFsStorage(dir),
      allowSimulated: true,
      maxDataAgeSeconds: MAX_AGE_SECONDS,
    },
    { ...options, now: () => clock, log: () => {} },
  );
}

const unpaid = (path = resource.path) => ({ path, method: 'GET' });

describe('an unpaid request for an unchanged file', () => {
  it('is answered at once, with the very bytes of the full decision', async () => {
    await publish(clock - 5_000);
    const paywall = app();
    const first = paywall.decide(unpaid());
    expect(first).toBeInstanceOf(Promise); // nothing known yet: read, validated, offer encoded
    const full = await first;
    const again = paywall.decide(unpaid());
    expect(again).not.toBeInstanceOf(Promise);
    expect(again).toEqual(full);
    expect((again as Decision).kind).toBe('payment_required');
    // HEAD gets the same challenge; the HTTP answer is the same 402.
    expect(paywall.decide({ ...unpaid(), method: 'HEAD' })).toEqual(full);
    const response = await paywall.request(resource.path);
    expect(response.status).toBe(402);
    expect(response.headers.get('PAYMENT-REQUIRED')).toBe((full as { header: string }).header);
  });
});

describe('never answered from the last challenge', () => {
  it('a new generation of the file: the next 402 offers the new data', async () => {
    const old = await publish(clock - 60_000);
    const paywall = app();
    const before = await paywall.decide(unpaid());
    expect(JSON.stringify(before)).toContain(old);
    const fresh = await publish(clock - 1_000);
    const next = paywall.decide(unpaid());
    expect(next).toBeInstanceOf(Promise);
    const after = await next;
    expect(after.kind).toBe('payment_required');
    expect(JSON.stringify(after)).toContain(fresh);
    expect(JSON.stringify(after)).not.toContain(old);
  });

  it('a deleted file: refused before any payment is asked for', async () => {
    await publish(clock - 5_000);
    const paywall = app();
    expect((await paywall.decide(unpaid())).kind).toBe('payment_required');
    await rm(join(dir, resource.file));
    await pastConfirmation();
    const answer = await paywall.decide(unpaid());
    expect(answer).toMatchObject({
      kind: 'error',
      status: 503,
      body: { error: 'paid_resource_unavailable' },
    });
  });

  it('a file that time has made stale: 503, not a challenge', async () => {
    await publish(clock - 5_000);
    const paywall = app();
    expect((await paywall.decide(unpaid())).kind).toBe('payment_required');
    clock += MAX_AGE_SECONDS * 1000;
    const answer = await paywall.decide(unpaid());
    expect(answer).toMatchObject({ kind: 'error', status: 503, body: { error: 'data_stale' } });
  });

  it('a request carrying a payment, of either version, is decided in full', async () => {
    await publish(clock - 5_000);
    const paywall = app();
    await paywall.decide(unpaid());
    const paying = paywall.decide({ ...unpaid(), paymentSignature: 'not-base64-json' });
    expect(paying).toBeInstanceOf(Promise);
    expect(await paying).toMatchObject({ kind: 'payment_required' });
    expect(JSON.stringify(await paying)).toContain('invalid_payload');
    const legacy = paywall.decide({ ...unpaid(), legacyPayment: true });
    expect(legacy).toBeInstanceOf(Promise);
    expect(JSON.stringify(await legacy)).toContain('x402_v1_not_supported');
  });

  it("a publisher's sale point: its credit is asked on every unpaid request, and only there", async () => {
    await publish(clock - 5_000);
    const path = '/p/acme/api/x402-market-regime.php';
    let credit = true;
    let asked = 0;
    const hooks: SaleHooks = {
      unavailable: async () => {
        asked += 1;
        return credit ? null : { status: 503, error: 'not_available_from_seller', message: 'no credit left' };
      },
      reserve: async () => true,
      delivered: async () => {},
      release: async () => {},
    };
    const point: SalePoint = {
      path,
      resource,
      payTo,
      amountAtomic: resource.amountAtomic,
      priceUsd: resource.priceUsd,
      seller: { id: 'acme', name: 'Acme' },
    };
    const paywall = app({ salePoints: [point], hooks });
    expect((await paywall.decide(unpaid(path))).kind).toBe('payment_required');
    expect((await paywall.decide(unpaid(path))).kind).toBe('payment_required');
    expect(asked).toBe(2);
    credit = false;
    const answer = await paywall.decide(unpaid(path));
    expect(answer).toMatchObject({
      kind: 'error',
      status: 503,
      body: { error: 'not_available_from_seller' },
    });
    // The operator's own point does not depend on a seller's credit: never asked, still for sale.
    expect((await paywall.decide(unpaid())).kind).toBe('payment_required');
    expect((await paywall.decide(unpaid())).kind).toBe('payment_required');
    expect(asked).toBe(3);
  });
});

describe('the confirmation window', () => {
  it('one stat serves the unpaid requests of a millisecond; after it a replaced file is seen', async () => {
    await publish(clock - 5_000);
    const fs = createFsStorage(dir);
    let stats = 0;
    const counting: PaidFileStorage = {
      read: (file) => fs.read(file),
      versionNow: (file) => {
        stats += 1;
        return fs.versionNow!(file);
      },
    };
    let monotonic = 0;
    const reader = new PaidFileReader(
      counting,
      1000,
      () => clock,
      () => monotonic,
    );
    const first = await reader.load(resource);
    expect(first.ok).toBe(true);
    expect(stats).toBe(1);
    await publish(clock - 1_000); // replaced: a new inode
    monotonic += CONFIRMED_FOR_MS / 2;
    expect(reader.known(resource)).toBe(first); // inside the window: the store is not asked
    expect(stats).toBe(1);
    monotonic += CONFIRMED_FOR_MS;
    expect(reader.known(resource)).toBeUndefined(); // past it: asked, and the change is seen
    expect(stats).toBe(2);
    // A request with a payment never trusts the window: `load` asks the store each time.
    const fresh = await reader.load(resource);
    expect(fresh.ok && fresh.file.generatedAt).toBe(new Date(clock - 1_000).toISOString());
    await reader.load(resource);
    expect(stats).toBe(4);
  });
});

describe('over HTTP, with the official client', () => {
  it('a 402 answered at once is the same challenge, and @x402/fetch pays it and gets the file', async () => {
    const stack = await startStack();
    try {
      const url = stack.url(resource);
      const full = await fetchChallenge(url); // the first request is decided in full
      expect(stack.worker.app.decide(unpaid())).not.toBeInstanceOf(Promise); // the next one is answered at once
      const known = await fetchChallenge(url);
      expect(known.response.headers.get('PAYMENT-REQUIRED')).toBe(
        full.response.headers.get('PAYMENT-REQUIRED'),
      );
      expect(known.body).toEqual(full.body);
      // @x402/fetch reads the challenge the server now answers at once, signs and pays it.
      const bought = await buyWithDevWallet({ url, facilitatorUrl: stack.facilitator.url });
      expect(bought.status).toBe(200);
      expect(bought.settlement?.success).toBe(true);
      expect(resource.schema.safeParse(bought.body).success).toBe(true);
    } finally {
      await stack.close();
    }
  });
});
