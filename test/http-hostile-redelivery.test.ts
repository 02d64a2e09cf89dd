// What a kept payment is compared by when it comes back: the buyer's signed transaction and the payment identifier
// it was sent with, not the rest of the group or the header's spelling. The signed transaction carries its group id,
// which fixes every other member of the group, so a copy with the fee payer's transaction cut off, or the same
// payload re-serialised, is the same payment and collects its file again (nothing reaches the chain on redelivery);
// another signature is refused, in words that name what is compared.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import algosdk from 'algosdk';
import type { PaymentPayload } from '@x402/core/types';
import { fetchChallenge, newBuyer, paymentHeader, resourceById, startStack } from './paywall-harness.ts';
import type { Buyer, Stack } from './paywall-harness.ts';

const resource = resourceById('paidMarketRegime');

let stack: Stack;
let buyer: Buyer;
beforeAll(async () => {
  stack = await startStack();
  buyer = await newBuyer(stack.facilitator);
});
afterAll(async () => {
  await stack?.close();
});

const send = (headers: Record<string, string>) => fetch(stack.url(resource), { headers });

describe('a settled payment presented again', () => {
  let payload: PaymentPayload;
  let sold: string;
  let group: { paymentGroup: string[]; paymentIndex: number };
  beforeAll(async () => {
    const { paymentRequired } = await fetchChallenge(stack.url(resource));
    payload = await buyer.pay(paymentRequired);
    const first = await send(paymentHeader(payload));
    expect(first.status).toBe(200);
    sold = await first.text();
    group = payload.payload as typeof group;
    expect(group.paymentGroup.length).toBeGreaterThan(1); // the fee payer's transaction is there to cut
  });

  it('with the group cut to its signed transaction is the same payment: its file again, no new charge', async () => {
    const txns = stack.facilitator.ledger.transactionCount;
    const cut = {
      ...payload,
      payload: {
        ...payload.payload,
        paymentGroup: [group.paymentGroup[group.paymentIndex]!],
        paymentIndex: 0,
      },
    };
    const again = await send(paymentHeader(cut));
    expect(again.status).toBe(200);
    expect(await again.text()).toBe(sold);
    expect(stack.facilitator.ledger.transactionCount).toBe(txns);
  });

  it('re-serialised with whitespace is the same payment', async () => {
    const spaced = Buffer.from(JSON.stringify(payload, null, 2), 'utf8').toString('base64');
    const again = await send({ 'PAYMENT-SIGNATURE': spaced });
    expect(again.status).toBe(200);
    expect(await again.text()).toBe(sold);
  });

  it('with another signature is refused in words that say what is compared', async () => {
    const signed = algosdk.decodeSignedTransaction(
      Buffer.from(group.paymentGroup[group.paymentIndex]!, 'base64'),
    );
    const resigned = Buffer.from(signed.txn.signTxn(algosdk.generateAccount().sk)).toString('base64');
    const copy = {
      ...payload,
      payload: {
        ...payload.payload,
        paymentGroup: group.paymentGroup.map((member, i) => (i === group.paymentIndex ? resigned : member)),
      },
    };
    const refused = await send(paymentHeader(copy));
    expect(refused.status).toBe(402);
    const body = (await refused.json()) as { error: string; message: string };
    expect(body.error).toBe('payment_already_used');
    expect(body.message).toMatch(/other signed bytes/);
    expect(body.message).toMatch(/same signed transaction with the same payment identifier/);
    expect(body.message).not.toMatch(/as it was sent/);
  });
});
