// The publisher programme end to end on the local stack with real signatures: the official x402 client pays a
// publisher's path, the development facilitator settles on its in-memory ledger, and the SQLite credit ledger
// records the sale. The money goes to the publisher's address, at the publisher's price; a credit is consumed only
// when the body was delivered; nobody is asked to pay for what cannot be delivered.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { decodePaymentResponseHeader } from '@x402/core/http';
import { PaywallErrorBody } from '../schemas/paid/payment-required.ts';
import {
  fetchChallenge,
  newBuyer,
  paymentHeader,
  resourceById,
  writePaidFixtures,
} from './paywall-harness.ts';
import { account, publisherEntry, settleHold, startPublisherStack } from './publishers-harness.ts';
import type { PublisherStack } from './publishers-harness.ts';

const REPORT = '/p/acme/api/x402-atlas-human-report.php';
const SOLO_REPORT = '/p/solo/api/x402-atlas-human-report.php';
const EMPTY_REPORT = '/p/empty/api/x402-atlas-human-report.php';

let stack: PublisherStack;
const acme = () => stack.publishers.find((p) => p.id === 'acme')!;

beforeAll(async () => {
  stack = await startPublisherStack(
    () => [
      publisherEntry('acme', account()),
      publisherEntry('solo', account()),
      publisherEntry('empty', account()),
      publisherEntry('late', account()),
    ],
    { acme: 20, solo: 1, empty: 0, late: 1 },
  );
});
afterEach(async () => {
  stack.proxy.state.settle = 'pass';
  stack.proxy.state.indexerDown = false;
  stack.proxy.state.hold = null;
  await writePaidFixtures(stack.paidDir);
});
afterAll(async () => {
  await stack?.close();
});

const balances = (...addresses: string[]) => addresses.map((a) => stack.facilitator.ledger.assetBalance(a));

describe('a purchase through a publisher', () => {
  it('offers the publisher address, the publisher price and names the publisher in the 402 and the Bazaar', async () => {
    const { paymentRequired, body } = await fetchChallenge(stack.url(REPORT));
    expect(paymentRequired.accepts).toHaveLength(1);
    expect(paymentRequired.accepts[0]).toMatchObject({
      payTo: acme().payTo,
      amount: '150000',
      extra: { resource: REPORT },
    });
    expect(paymentRequired.resource.url).toBe(`http://127.0.0.1:8080${REPORT}`);
    expect(paymentRequired.resource.description).toContain('sold by acme Research');
    const bazaar = paymentRequired.extensions?.bazaar as { info: { seller?: unknown } };
    // The name is in the description above; the Bazaar block names the seller by id (both headers carry it).
    expect(bazaar.info.seller).toEqual({ id: 'acme' });
    expect((body as { message: string }).message).toContain('Pay exactly 0.15 USDC (150000 atomic units');
  });

  it('pays the publisher exactly its price, serves the body with a publisher block, and consumes one credit', async () => {
    const buyer = await newBuyer(stack.facilitator);
    const [buyerBefore, publisherBefore, operatorBefore] = balances(
      buyer.address,
      acme().payTo,
      stack.operatorPayTo,
    );
    const creditsBefore = await stack.ledger.balance('acme');
    const { paymentRequired } = await fetchChallenge(stack.url(REPORT));
    const payload = await buyer.pay(paymentRequired);

    const response = await fetch(stack.url(REPORT), { headers: paymentHeader(payload) });
    expect(response.status).toBe(200);
    const settlement = decodePaymentResponseHeader(response.headers.get('PAYMENT-RESPONSE')!);
    const body = (await response.json()) as Record<string, unknown>;
    const resource = resourceById('atlasHumanReport');
    expect(() => resource.schema.parse(body)).not.toThrow();
    expect(body.publisher).toMatchObject({
      id: 'acme',
      name: 'acme Research',
      pay_to: acme().payTo,
      price_usd: '0.15',
      terms_url: 'https://acme.example/terms',
    });

    const [buyerAfter, publisherAfter, operatorAfter] = balances(
      buyer.address,
      acme().payTo,
      stack.operatorPayTo,
    );
    expect(buyerBefore! - buyerAfter!).toBe(150000n);
    expect(publisherAfter! - publisherBefore!).toBe(150000n);
    expect(operatorAfter).toBe(operatorBefore); // the service never takes a cut or holds the money

    const creditsAfter = await stack.ledger.balance('acme');
    expect(creditsAfter.balance).toBe(creditsBefore.balance - 1);
    expect(creditsAfter.reserved).toBe(0);
    const sales = await stack.ledger.statement('acme');
    expect(sales.at(-1)).toMatchObject({
      product: 'atlas-human-report',
      path: REPORT,
      priceUsd: '0.15',
      amountAtomic: '150000',
      payTo: acme().payTo,
      payer: buyer.address,
      transaction: settlement.transaction,
      credits: 1,
    });

    // The same payment again: delivered again, neither charged nor counted again.
    const again = await fetch(stack.url(REPORT), { headers: paymentHeader(payload) });
    expect(again.status).toBe(200);
    expect(((await again.json()) as { publisher?: unknown }).publisher).toEqual(body.publisher);
    expect((await stack.ledger.balance('acme')).balance).toBe(creditsAfter.balance);
    expect(balances(buyer.address)[0]).toBe(buyerAfter);
  });

  it('sells the operator paths at the base price to the base payee, without touching credits', async () => {
    const base = resourceById('atlasHumanReport');
    const { paymentRequired } = await fetchChallenge(stack.url(base.path));
    expect(paymentRequired.accepts[0]).toMatchObject({
      payTo: stack.operatorPayTo,
      amount: base.amountAtomic,
    });
    const before = await stack.ledger.balance('acme');
    const buyer = await newBuyer(stack.facilitator);
    const response = await fetch(stack.url(base.path), {
      headers: paymentHeader(await buyer.pay(paymentRequired)),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).not.toHaveProperty('publisher');
    expect(await stack.ledger.balance('acme')).toEqual(before);
  });
});

describe('refusals that consume no credit and move no money', () => {
  it('refuses a payment to the base payee at a publisher path', async () => {
    const buyer = await newBuyer(stack.facilitator);
    const before = {
      money: balances(buyer.address, stack.operatorPayTo),
      credits: await stack.ledger.balance('acme'),
    };
    const { paymentRequired } = await fetchChallenge(stack.url(REPORT));
    for (const change of [
      { payTo: stack.operatorPayTo },
      { payTo: stack.operatorPayTo, amount: resourceById('atlasHumanReport').amountAtomic },
    ]) {
      const payload = await buyer.pay(paymentRequired, (r) => ({ ...r, ...change }));
      const response = await fetch(stack.url(REPORT), { headers: paymentHeader(payload) });
      expect(response.status).toBe(402);
      expect(((await response.json()) as { error: string }).error).toBe('payment_does_not_match');
    }
    expect(balances(buyer.address, stack.operatorPayTo)).toEqual(before.money);
    expect(await stack.ledger.balance('acme')).toEqual(before.credits);
  });

  it('refuses a payment signed for the operator path at the publisher path, and the reverse', async () => {
    const buyer = await newBuyer(stack.facilitator);
    const base = resourceById('atlasHumanReport').path;
    const credits = await stack.ledger.balance('acme');
    const forBase = await buyer.pay((await fetchChallenge(stack.url(base))).paymentRequired);
    const atPublisher = await fetch(stack.url(REPORT), { headers: paymentHeader(forBase) });
    expect(atPublisher.status).toBe(402);
    const forPublisher = await buyer.pay((await fetchChallenge(stack.url(REPORT))).paymentRequired);
    const atBase = await fetch(stack.url(base), { headers: paymentHeader(forPublisher) });
    expect(atBase.status).toBe(402);
    expect(await stack.ledger.balance('acme')).toEqual(credits);
  });

  it('consumes no credit when settlement is refused', async () => {
    const buyer = await newBuyer(stack.facilitator);
    const before = {
      money: balances(buyer.address, acme().payTo),
      credits: await stack.ledger.balance('acme'),
    };
    const payload = await buyer.pay((await fetchChallenge(stack.url(REPORT))).paymentRequired);
    stack.proxy.state.settle = 'refuse';
    const response = await fetch(stack.url(REPORT), { headers: paymentHeader(payload) });
    expect(response.status).toBe(402);
    expect(((await response.json()) as { error: string }).error).toBe('insufficient_funds');
    expect(balances(buyer.address, acme().payTo)).toEqual(before.money);
    expect(await stack.ledger.balance('acme')).toEqual(before.credits);
  });

  it('consumes no credit when the settle answer is lost, and exactly one when the same payment is retried', async () => {
    const buyer = await newBuyer(stack.facilitator);
    const before = await stack.ledger.balance('acme');
    const payload = await buyer.pay((await fetchChallenge(stack.url(REPORT))).paymentRequired);
    stack.proxy.state.settle = 'lose-unsent';
    const lost = await fetch(stack.url(REPORT), { headers: paymentHeader(payload) });
    expect(lost.status).toBeGreaterThanOrEqual(500);
    const failure = PaywallErrorBody.parse(await lost.json());
    expect(failure.transaction).not.toBeNull(); // the buyer is told which payment to ask about
    expect(await stack.ledger.balance('acme')).toEqual(before); // nothing held, nothing consumed

    stack.proxy.state.settle = 'pass';
    const retried = await fetch(stack.url(REPORT), { headers: paymentHeader(payload) });
    expect(retried.status).toBe(200);
    const after = await stack.ledger.balance('acme');
    expect(after.balance).toBe(before.balance - 1);
    expect(after.reserved).toBe(0);
  });

  it('consumes exactly one credit when a lost settle answer is found confirmed on chain and the body delivered', async () => {
    const buyer = await newBuyer(stack.facilitator);
    const before = await stack.ledger.balance('acme');
    const publisherBefore = balances(acme().payTo)[0]!;
    const payload = await buyer.pay((await fetchChallenge(stack.url(REPORT))).paymentRequired);
    stack.proxy.state.settle = 'lose-after-submit';
    const response = await fetch(stack.url(REPORT), { headers: paymentHeader(payload) });
    expect(response.status).toBe(200);
    expect(balances(acme().payTo)[0]! - publisherBefore).toBe(150000n);
    expect((await stack.ledger.balance('acme')).balance).toBe(before.balance - 1);
  });

  it('delivers a payment that landed while its answer was lost, even after the last credit is gone', async () => {
    const path = '/p/late/api/x402-atlas-human-report.php';
    const late = stack.publishers.find((p) => p.id === 'late')!;
    const buyer = await newBuyer(stack.facilitator);
    const payload = await buyer.pay((await fetchChallenge(stack.url(path))).paymentRequired);
    stack.proxy.state.settle = 'lose-after-submit';
    stack.proxy.state.indexerDown = true; // the outcome cannot be found out now
    const unknown = await fetch(stack.url(path), { headers: paymentHeader(payload) });
    expect(unknown.status).toBeGreaterThanOrEqual(500);
    expect(PaywallErrorBody.parse(await unknown.json()).transaction).not.toBeNull();
    expect(await stack.ledger.balance('late')).toMatchObject({ balance: 1, reserved: 0 }); // released, not consumed
    const [paidBy] = balances(buyer.address);

    await stack.ledger.credit('late', -1); // the operator withdraws the last credit meanwhile
    expect((await fetch(stack.url(path))).status).toBe(503); // no new sale
    stack.proxy.state.settle = 'pass';
    stack.proxy.state.indexerDown = false;
    const retried = await fetch(stack.url(path), { headers: paymentHeader(payload) });
    expect(retried.status).toBe(200); // the buyer was charged: the file is delivered
    expect(((await retried.json()) as { publisher?: { id: string } }).publisher?.id).toBe('late');
    expect(balances(buyer.address)[0]).toBe(paidBy); // and not charged twice
    expect(await stack.ledger.balance('late')).toMatchObject({ balance: 0, reserved: 0, sales: 1 });
    expect((await stack.ledger.statement('late'))[0]?.payTo).toBe(late.payTo);
  });

  it('consumes no credit and asks for no payment when the paid file is missing', async () => {
    await rm(join(stack.paidDir, resourceById('atlasHumanReport').file));
    const buyer = await newBuyer(stack.facilitator);
    const credits = await stack.ledger.balance('acme');
    const unpaid = await fetch(stack.url(REPORT));
    expect(unpaid.status).toBe(503);
    expect(unpaid.headers.get('PAYMENT-REQUIRED')).toBeNull();
    expect(PaywallErrorBody.parse(await unpaid.json()).error).toBe('paid_resource_unavailable');

    // A payment signed before the file went missing is refused too, and not settled.
    await writePaidFixtures(stack.paidDir);
    const payload = await buyer.pay((await fetchChallenge(stack.url(REPORT))).paymentRequired);
    await rm(join(stack.paidDir, resourceById('atlasHumanReport').file));
    const money = balances(buyer.address, acme().payTo);
    const paid = await fetch(stack.url(REPORT), { headers: paymentHeader(payload) });
    expect(paid.status).toBe(503);
    expect(balances(buyer.address, acme().payTo)).toEqual(money);
    expect(await stack.ledger.balance('acme')).toEqual(credits);
  });
});

describe('credits run out', () => {
  it('two concurrent buyers with one credit left: one is served, the other refused before paying', async () => {
    const solo = stack.publishers.find((p) => p.id === 'solo')!;
    const buyers = await Promise.all([newBuyer(stack.facilitator), newBuyer(stack.facilitator)]);
    const { paymentRequired } = await fetchChallenge(stack.url(SOLO_REPORT));
    const payloads = await Promise.all(buyers.map((b) => b.pay(paymentRequired)));
    const before = balances(...buyers.map((b) => b.address), solo.payTo);

    // The first sale to reach settle is held there, holding the credit, while the other buyer is answered: a
    // ledger that did not hold the credit before settle would let both through to settle.
    const hold = settleHold();
    stack.proxy.state.hold = hold;
    const pending = payloads.map((p) => fetch(stack.url(SOLO_REPORT), { headers: paymentHeader(p) }));
    await hold.arrived;
    const first = await Promise.race(pending);
    expect(first.status).toBe(503);
    hold.open();
    const responses = await Promise.all(pending);
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 503]);
    const refused = responses.find((r) => r.status === 503)!;
    expect(refused.headers.get('PAYMENT-RESPONSE')).toBeNull();
    expect(PaywallErrorBody.parse(await refused.json()).error).toBe('not_available_from_seller');

    const after = balances(...buyers.map((b) => b.address), solo.payTo);
    const paidBy = [0, 1].filter((i) => after[i] !== before[i]);
    expect(paidBy).toHaveLength(1); // exactly one buyer was charged, the one served
    expect(responses[paidBy[0]!]!.status).toBe(200);
    expect(after[2]! - before[2]!).toBe(150000n);
    expect(await stack.ledger.balance('solo')).toMatchObject({ balance: 0, reserved: 0, sales: 1 });

    // With none left, the next visitor is told so before any payment is requested.
    const next = await fetch(stack.url(SOLO_REPORT));
    expect(next.status).toBe(503);
    expect(next.headers.get('PAYMENT-REQUIRED')).toBeNull();
  });

  it('zero credits: 503 with a clear message before any payment is requested', async () => {
    for (const method of ['GET', 'HEAD']) {
      const response = await fetch(stack.url(EMPTY_REPORT), { method });
      expect(response.status).toBe(503);
      expect(response.headers.get('PAYMENT-REQUIRED')).toBeNull();
      expect(response.headers.get('Retry-After')).toBe('30');
      if (method === 'GET') {
        const body = PaywallErrorBody.parse(await response.json());
        expect(body.error).toBe('not_available_from_seller');
        expect(body.message).toContain('empty Research has no shared-intelligence credit left');
        expect(body.message).toContain('No payment was requested');
      }
    }
    // The operator's own path is not affected by a publisher's balance.
    expect((await fetch(stack.url(resourceById('atlasHumanReport').path))).status).toBe(402);
  });

  it('a credit added while the worker runs is available at the next request', async () => {
    await stack.ledger.credit('empty', 1);
    expect((await fetch(stack.url(EMPTY_REPORT))).status).toBe(402);
    await stack.ledger.credit('empty', -1);
    expect((await fetch(stack.url(EMPTY_REPORT))).status).toBe(503);
  });
});

describe('unknown publishers and products', () => {
  it.each([
    '/p/nobody/api/x402-atlas.php',
    '/p/acme/api/x402-main-brain.php',
    '/p/acme/api/x402-nothing.php',
  ])('%s is a JSON 404', async (path) => {
    const response = await fetch(stack.url(path));
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(PaywallErrorBody.parse(await response.json()).error).toBe('not_found');
  });
});
