// Refusals a mutation audit found unpinned (each case names the rule it keeps and the wrong program it catches):
// - a payment signed while the file was for sale, sent after it went stale, is refused before it is settled: "refuse
//   stale before payment" holds for a payment the book has never seen, not only for an unreadable header;
// - a payment settled at path A is never collected at path B, even while B's file cannot be read (when a settled
//   payment is answered from the book without an offer to check it against) and the payment names no resource;
// - the freshness boundary: a file exactly `maxAgeSeconds` old is still sold (the freshness rule calls it late, not
//   stale: README "Freshness", /docs/freshness/), one second older is not.
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PaymentPayload } from '@x402/core/types';
import type { PaywallLogEntry } from '../paywall-worker/core/decide.ts';
import { PaymentRequiredBody, PaywallErrorBody } from '../schemas/paid/payment-required.ts';
import { paymentIdOf } from '../schemas/paid/payment-identifier.ts';
import { freshnessRefusal } from '../paywall-worker/core/paid-file.ts';
import type { PaidFile } from '../paywall-worker/core/paid-file.ts';
import {
  fetchChallenge,
  newBuyer,
  paymentHeader,
  resourceById,
  startStack,
  writePaidFixtures,
} from './paywall-harness.ts';
import type { Buyer, Stack } from './paywall-harness.ts';

const pathA = resourceById('paidMarketRegime');
const pathB = resourceById('paidMainBrain');
let stack: Stack;
let buyer: Buyer;
const logged: PaywallLogEntry[] = [];

beforeAll(async () => {
  stack = await startStack({ appOptions: { log: (entry) => logged.push(entry) } });
  buyer = await newBuyer(stack.facilitator, '5000000');
});
afterAll(() => stack?.close());

const balance = () => stack.facilitator.ledger.assetBalance(buyer.address);
const sold = () => logged.filter((entry) => entry.event === 'sold').length;
const payFor = async (resource: typeof pathA): Promise<PaymentPayload> =>
  buyer.pay((await fetchChallenge(stack.url(resource))).paymentRequired);

describe('a payment signed while the file was fresh, sent once it is stale', () => {
  it('is refused with data_stale before anything is settled, never charged, never a 402', async () => {
    const payment = await payFor(pathA);
    await writePaidFixtures(stack.paidDir, 3600); // an hour old: past the 120 s this worker sells
    try {
      const before = balance();
      const transactions = stack.facilitator.ledger.transactionCount;
      const sales = sold();
      const response = await fetch(stack.url(pathA), { headers: paymentHeader(payment) });
      expect(response.status).toBe(503);
      expect(response.headers.get('PAYMENT-REQUIRED')).toBeNull();
      expect(response.headers.get('PAYMENT-RESPONSE')).toBeNull();
      expect(PaywallErrorBody.parse(await response.json()).error).toBe('data_stale');
      expect(balance()).toBe(before);
      expect(stack.facilitator.ledger.transactionCount).toBe(transactions); // nothing was settled
      expect(sold()).toBe(sales);
    } finally {
      await writePaidFixtures(stack.paidDir);
    }
    // The same payment, not spent by the refusal, buys the file once it is fresh again.
    expect((await fetch(stack.url(pathA), { headers: paymentHeader(payment) })).status).toBe(200);
  });
});

describe('a payment settled at path A, sent to path B of the same price', () => {
  it('never collects A’s body at B while B’s file cannot be read, even naming no resource', async () => {
    expect(pathA.amountAtomic).toBe(pathB.amountAtomic);
    const { resource: _resource, ...bare } = await payFor(pathA);
    const payment = bare as PaymentPayload;
    // With its payment id, so that its own path would deliver it again: only the path stands in the way.
    expect(paymentIdOf(payment.extensions)).toEqual({ id: expect.stringMatching(/^pay_/) });
    const bought = await fetch(stack.url(pathA), { headers: paymentHeader(payment) });
    expect(bought.status).toBe(200);
    const body = await bought.text();

    const file = join(stack.paidDir, pathB.file);
    const kept = await readFile(file, 'utf8');
    await rm(file);
    try {
      const before = balance();
      const atB = await fetch(stack.url(pathB), { headers: paymentHeader(payment) });
      expect(atB.status).toBe(503);
      const text = await atB.text();
      expect(text).not.toBe(body);
      expect(PaywallErrorBody.parse(JSON.parse(text)).error).toBe('paid_resource_unavailable');
      expect(atB.headers.get('PAYMENT-RESPONSE')).toBeNull();
      expect(balance()).toBe(before);
    } finally {
      await writeFile(file, kept);
    }
    // With B's file back, the payment is checked against B's offer, which it does not match.
    const readable = await fetch(stack.url(pathB), { headers: paymentHeader(payment) });
    expect(readable.status).toBe(402);
    expect(PaymentRequiredBody.parse(await readable.json()).error).toBe('payment_does_not_match');
    // At A it is still the buyer's: the same body again.
    const again = await fetch(stack.url(pathA), { headers: paymentHeader(payment) });
    expect(again.status).toBe(200);
    expect(await again.text()).toBe(body);
  });
});

describe('the maximum age is the last second a file is sold', () => {
  const generatedAt = '2026-11-27T12:00:00.000Z';
  const file: PaidFile = { text: '{}', mode: 'live', generatedAt };
  const policy = { allowSimulated: false, maxAgeSeconds: 120 };
  const at = (ms: number) => freshnessRefusal(file, policy, Date.parse(generatedAt) + ms);

  it('sells a file exactly maxAgeSeconds old (late, not stale) and refuses it a second later', () => {
    expect(at(120_000)).toBeNull();
    expect(at(120_499)).toBeNull(); // ages are whole seconds, rounded
    expect(at(121_000)).toMatchObject({ error: 'data_stale' });
    expect(at(121_000)?.message).toMatch(/generated 121 s ago .* past the 120 s this service sells/);
  });
});
