// One payment id, one payment, in workerd: the Cloudflare recipe keeps each id's binding in a Durable Object named
// by the id (not by the transaction), so that two payments sent with one id meet in one object. The official docs'
// buyer (@x402/fetch, one id appended to every payment) calling twice is refused the second time (409), charged
// once, and the first payment sent again still collects its file. (Node: test/paywall-payment-id-conflict.test.ts.)
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import algosdk from 'algosdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PaywallErrorBody } from '../schemas/paid/payment-required.ts';
import { uploadPaidFiles } from '../deploy/cloudflare/run.ts';
import type { WranglerDev } from '../deploy/cloudflare/run.ts';
import { startDevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import type { DevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import { officialBuyerWithOneId, resourceById, writePaidFixtures } from './paywall-harness.ts';
import { startTestWorker } from './helpers/test-worker.ts';

/** This suite's ports: 20300-20319. */
let nextPort = 20300;
const ports = () => Promise.resolve(nextPort++);

describe('payment ids in workerd (wrangler dev)', { timeout: 120_000 }, () => {
  let root: string;
  let facilitator: DevFacilitator;
  let worker: WranglerDev;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'emi-cloudflare-ids-'));
    await mkdir(join(root, 'dist'));
    await mkdir(join(root, 'paid'));
    await writePaidFixtures(join(root, 'paid'));
    facilitator = await startDevFacilitator();
    const payTo = algosdk.generateAccount().addr.toString();
    facilitator.ledger.optIn(payTo);
    const persistTo = join(root, 'state');
    await uploadPaidFiles(join(root, 'paid'), { persistTo });
    worker = await startTestWorker({
      persistTo,
      assetsDir: join(root, 'dist'),
      payTo,
      facilitatorUrl: facilitator.url,
      ports,
    });
  }, 180_000);

  afterAll(async () => {
    await worker?.stop();
    await facilitator?.close();
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('refuses a second signature with the id the official client appends (409), charging once', async () => {
    const resource = resourceById('paidMarketRegime');
    const url = `${worker.url}${resource.path}`;
    const { fetchWithPayment, sent, balance } = officialBuyerWithOneId(facilitator, 1_000_000n);
    const charged = () => 1_000_000n - balance();

    const first = await fetchWithPayment(url);
    expect(first.status).toBe(200);
    const bought = await first.text();
    const second = await fetchWithPayment(url);
    expect(second.status).toBe(409);
    expect(PaywallErrorBody.parse(await second.json()).error).toBe('payment_id_conflict');
    expect(charged()).toBe(BigInt(resource.amountAtomic));

    const again = await fetch(url, { headers: { 'PAYMENT-SIGNATURE': sent[0]! } });
    expect(again.status).toBe(200);
    expect(await again.text()).toBe(bought);
    expect(charged()).toBe(BigInt(resource.amountAtomic));
  });
});
