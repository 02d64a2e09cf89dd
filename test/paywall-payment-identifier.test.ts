// A confirmed Algorand payment is public on chain, its signature included: anyone watching the payee can rebuild
// the very PAYMENT-SIGNATURE bytes a buyer sent (algosdk's encoding is canonical). So those bytes alone must not buy
// anything once they have landed: a settled payment is delivered again only with the payment identifier (x402's
// payment-identifier extension) it was first sent with, which never reaches the chain. (Lost settle answers:
// test/paywall-lost-answers.test.ts.)
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodePaymentResponseHeader } from '@x402/core/http';
import type { PaymentPayload } from '@x402/core/types';
import {
  appendPaymentIdentifierToExtensions,
  extractPaymentIdentifier,
  isPaymentIdentifierExtension,
} from '@x402/extensions/payment-identifier';
import { PaymentRequiredBody } from '../schemas/paid/payment-required.ts';
import { paymentIdOf, PAYMENT_IDENTIFIER } from '../schemas/paid/payment-identifier.ts';
import { fetchChallenge, newBuyer, paymentHeader, resourceById, startStack } from './paywall-harness.ts';
import type { Buyer, Stack } from './paywall-harness.ts';

const resource = resourceById('paidMarketRegime');
let stack: Stack;
let buyer: Buyer;

beforeAll(async () => {
  stack = await startStack();
  buyer = await newBuyer(stack.facilitator);
});
afterAll(() => stack?.close());

/** The buyer's payment as an onlooker rebuilds it from the chain: the same signed bytes, no payment identifier. */
function fromChain(payment: PaymentPayload): PaymentPayload {
  const copy = structuredClone(payment);
  const extension = copy.extensions?.[PAYMENT_IDENTIFIER] as { info: Record<string, unknown> } | undefined;
  if (extension) delete extension.info.id;
  return copy;
}

const paid = async (payment: PaymentPayload) => {
  const response = await fetch(stack.url(resource), { headers: paymentHeader(payment) });
  return { response, text: await response.text() };
};

describe('the payment-identifier extension, with the official client', () => {
  it('is declared in every 402 as the official helpers read it, and an official client’s id is the one kept', async () => {
    const { paymentRequired } = await fetchChallenge(stack.url(resource));
    expect(isPaymentIdentifierExtension(paymentRequired.extensions?.[PAYMENT_IDENTIFIER])).toBe(true);
    // An official x402 client adding its id the documented way (a hook before the payment is created).
    buyer.client.onBeforePaymentCreation(async ({ paymentRequired: offered }) => {
      appendPaymentIdentifierToExtensions(offered.extensions ?? {});
    });
    const payment = await buyer.pay(paymentRequired);
    const id = extractPaymentIdentifier(payment);
    expect(id).toMatch(/^pay_/);
    expect(paymentIdOf(payment.extensions)).toEqual({ id });
    const first = await paid(payment);
    expect(first.response.status).toBe(200);
    // The buyer collects its file again with the same payment: the same body, charged once.
    const before = stack.facilitator.ledger.assetBalance(buyer.address);
    const again = await paid(payment);
    expect(again.response.status).toBe(200);
    expect(again.text).toBe(first.text);
    expect(stack.facilitator.ledger.assetBalance(buyer.address)).toBe(before);
  });
});

describe('a settled payment rebuilt from the chain', () => {
  it('buys nothing without the id the buyer sent, and a payment sent with no id is delivered once', async () => {
    const { paymentRequired } = await fetchChallenge(stack.url(resource));
    const payment = await buyer.pay(paymentRequired); // the harness's buyer sends an id (as `emi buy` does)
    expect(paymentIdOf(payment.extensions)).toEqual({ id: expect.stringMatching(/^pay_/) });
    expect((await paid(payment)).response.status).toBe(200);
    const copied = await paid(fromChain(payment));
    expect(copied.response.status).toBe(402);
    expect(PaymentRequiredBody.parse(JSON.parse(copied.text)).error).toBe('payment_already_used');

    // A buyer whose client sends no id: the copy is byte for byte its own payment, so neither is served again.
    const bare = fromChain(await buyer.pay((await fetchChallenge(stack.url(resource))).paymentRequired));
    const first = await paid(bare);
    expect(first.response.status).toBe(200);
    const { transaction } = decodePaymentResponseHeader(first.response.headers.get('PAYMENT-RESPONSE')!);
    const second = await paid(bare);
    expect(second.response.status).toBe(402);
    const refusal = PaymentRequiredBody.parse(JSON.parse(second.text));
    expect(refusal.error).toBe('payment_already_used');
    expect(refusal.message).toContain(`Payment ${transaction} was settled and its file delivered`);
  });

  it('refuses a malformed payment id before anything is settled', async () => {
    const payment = await buyer.pay((await fetchChallenge(stack.url(resource))).paymentRequired);
    const bad = structuredClone(payment);
    (bad.extensions![PAYMENT_IDENTIFIER] as { info: Record<string, unknown> }).info.id = 'short!';
    const before = stack.facilitator.ledger.transactionCount;
    const { response, text } = await paid(bad);
    expect(response.status).toBe(402);
    expect(PaymentRequiredBody.parse(JSON.parse(text)).error).toBe('invalid_payload');
    expect(stack.facilitator.ledger.transactionCount).toBe(before);
  });
});

describe('a settled payment while the paid file is missing', () => {
  it('still collects the body it bought (the book keeps it); an unpaid request is told the file is unavailable', async () => {
    const payment = await buyer.pay((await fetchChallenge(stack.url(resource))).paymentRequired);
    const bought = await paid(payment);
    expect(bought.response.status).toBe(200);
    const file = join(stack.paidDir, resource.file);
    const kept = await readFile(file, 'utf8');
    await rm(file);
    try {
      const again = await paid(payment);
      expect(again.response.status).toBe(200);
      expect(again.text).toBe(bought.text);
      // A copy from the chain (no id) and a request without payment get the 503, never the body.
      expect((await paid(fromChain(payment))).response.status).toBe(503);
      expect((await fetch(stack.url(resource))).status).toBe(503);
    } finally {
      await writeFile(file, kept);
    }
  });
});
