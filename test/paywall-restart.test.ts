// A buyer whose answer was lost sends the same payment again after the worker restarted: with a configured
// facilitator (real money) the Node worker keeps its payment book in a SQLite file in the state folder, so the
// payment is delivered again (the body it bought, no second charge) instead of refused as already on chain.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import algosdk from 'algosdk';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { startDevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import type { DevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import { createLocalPaywall } from '../paywall-worker/local.ts';
import type { LocalPaywallOptions } from '../paywall-worker/local.ts';
import { newBuyer, paymentHeader, resourceById, writePaidFixtures } from './paywall-harness.ts';

const resource = resourceById('paidMarketRegime');
let dir: string;
let facilitator: DevFacilitator;
let options: LocalPaywallOptions;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'emi-restart-'));
  await writePaidFixtures(dir);
  facilitator = await startDevFacilitator({ port: 0 }); // stands in for a configured facilitator
  const payTo = algosdk.generateAccount().addr.toString();
  facilitator.ledger.optIn(payTo);
  options = {
    paidDir: dir,
    baseUrl: 'http://127.0.0.1:8080',
    payTo,
    facilitatorUrl: facilitator.url,
    indexerUrl: facilitator.url,
    allowSimulated: true, // the fixtures are the simulated examples
    paymentBookFile: join(dir, 'state', 'payments.sqlite'),
  };
});
afterAll(async () => {
  await facilitator?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('a worker restarted between a payment and its retry', () => {
  it('delivers the body that was bought again, from the payment book kept in the state folder', async () => {
    const buyer = await newBuyer(facilitator);
    const first = await createLocalPaywall(options);
    expect(first.describe()).toContain(
      `x402 payment book: ${options.paymentBookFile} (settled payments are delivered again for an hour, across restarts)`,
    );
    const challenge = await first.app.request(resource.path);
    expect(challenge.status).toBe(402);
    const payload = await buyer.pay(decodePaymentRequiredHeader(challenge.headers.get('PAYMENT-REQUIRED')!));
    const sold = await first.app.request(resource.path, { headers: paymentHeader(payload) });
    expect(sold.status).toBe(200);
    const body = await sold.text();
    const paid = facilitator.ledger.assetBalance(buyer.address);
    await first.close();

    await writePaidFixtures(dir, -1); // a newer generation while the worker was down
    const second = await createLocalPaywall(options);
    try {
      const again = await second.app.request(resource.path, { headers: paymentHeader(payload) });
      expect(again.status).toBe(200);
      expect(await again.text()).toBe(body);
      expect(again.headers.get('PAYMENT-RESPONSE')).toBe(sold.headers.get('PAYMENT-RESPONSE'));
      expect(facilitator.ledger.assetBalance(buyer.address)).toBe(paid);
    } finally {
      await second.close();
    }
  });

  it('keeps the book in memory with the development facilitator, whose ledger is in memory too', async () => {
    const local = await createLocalPaywall({
      paidDir: dir,
      baseUrl: 'http://127.0.0.1:8080',
      devFacilitatorPort: 0,
    });
    try {
      expect(local.describe()).toContain('x402 payment book: in memory, like the development ledger');
    } finally {
      await local.close();
    }
  });
});
