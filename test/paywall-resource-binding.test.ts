// A payment pays for one resource: a payment signed for path A is refused at path B, even when both cost the same
// (the market regime and the main brain are both 0.01 USDC), with or without the echoed extensions. A query string
// is not part of the resource: the paid paths take no parameters.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PaymentPayload } from '@x402/core/types';
import { PaymentRequiredBody } from '../schemas/paid/payment-required.ts';
import { fetchChallenge, newBuyer, paymentHeader, resourceById, startStack } from './paywall-harness.ts';
import type { Buyer, Stack } from './paywall-harness.ts';

const pathA = resourceById('paidMarketRegime');
const pathB = resourceById('paidMainBrain');
let stack: Stack;
let buyer: Buyer;

beforeAll(async () => {
  stack = await startStack();
  buyer = await newBuyer(stack.facilitator);
  expect(pathA.amountAtomic).toBe(pathB.amountAtomic);
});
afterAll(async () => {
  await stack?.close();
});

async function payFor(resource: typeof pathA): Promise<PaymentPayload> {
  const { paymentRequired } = await fetchChallenge(stack.url(resource));
  return buyer.pay(paymentRequired);
}

async function expectRefusedAtB(payload: PaymentPayload, error: string) {
  const before = stack.facilitator.ledger.assetBalance(buyer.address);
  const response = await fetch(stack.url(pathB), { headers: paymentHeader(payload) });
  expect(response.status).toBe(402);
  expect(PaymentRequiredBody.parse(await response.json()).error).toBe(error);
  expect(stack.facilitator.ledger.assetBalance(buyer.address)).toBe(before);
}

describe('a payment for path A at path B of the same price', () => {
  it('is refused with its extensions and resource', async () => {
    await expectRefusedAtB(await payFor(pathA), 'payment_does_not_match');
  });

  it('is refused without extensions or resource (accepted names the path)', async () => {
    const { extensions: _e, resource: _r, ...bare } = await payFor(pathA);
    expect(bare.accepted.extra.resource).toBe(pathA.path);
    await expectRefusedAtB(bare as PaymentPayload, 'payment_does_not_match');
  });

  it('is refused when accepted was copied from B but resource.url still names A', async () => {
    const forB = await payFor(pathB);
    const mixed = { ...forB, resource: { ...forB.resource!, url: `http://127.0.0.1:8080${pathA.path}` } };
    await expectRefusedAtB(mixed, 'payment_for_another_resource');
  });

  it('is still served at A', async () => {
    const response = await fetch(stack.url(pathA), { headers: paymentHeader(await payFor(pathA)) });
    expect(response.status).toBe(200);
  });
});

describe('a query string on a paid path (the paid paths take no parameters)', () => {
  it('is not part of what is sold: the 402 names the bare path, and the payment buys its body', async () => {
    const withQuery = `${stack.url(pathA)}?asset=BTC`;
    const { paymentRequired } = await fetchChallenge(withQuery);
    expect(paymentRequired.resource.url).toBe(`http://127.0.0.1:8080${pathA.path}`);
    const paid = await fetch(withQuery, { headers: paymentHeader(await buyer.pay(paymentRequired)) });
    expect(paid.status).toBe(200);
    const bare = await fetch(stack.url(pathA), { headers: paymentHeader(await payFor(pathA)) });
    expect(await paid.json()).toEqual(await bare.json());
  });
});
