// End to end over loopback HTTP with real ed25519 signatures: the official x402 client pays the worker, the worker
// asks the development facilitator (the official @x402/avm facilitator scheme on an in-memory ledger) to verify and
// settle, and the ledger moves the money.
import { PAID_EXAMPLES } from '../schemas/paid/examples.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodePaymentResponseHeader } from '@x402/core/http';
import { PAID_RESOURCES } from '../schemas/resources.ts';
import { PaymentRequiredBody } from '../schemas/paid/payment-required.ts';
import { ALGORAND_MAINNET, USDC_ASA_ID } from '../schemas/paid/terms.ts';
import { fetchChallenge, newBuyer, paymentHeader, resourceById, startStack } from './paywall-harness.ts';
import type { Stack } from './paywall-harness.ts';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.close();
});

describe('unpaid request', () => {
  it.each(PAID_RESOURCES.map((r) => [r.path, r] as const))(
    '%s answers 402 with agreeing header and body',
    async (_, resource) => {
      const { response, paymentRequired, body } = await fetchChallenge(stack.url(resource));
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(response.headers.get('access-control-allow-origin')).toBe('*');
      expect(response.headers.get('access-control-expose-headers')).toContain('PAYMENT-REQUIRED');

      const parsed = PaymentRequiredBody.parse(body);
      expect(parsed.x402Version).toBe(2);
      expect(parsed.error).toBe('payment_required');
      expect(parsed.resource).toEqual(paymentRequired.resource);
      expect(parsed.accepts).toEqual(paymentRequired.accepts);
      expect(parsed.extensions).toEqual(paymentRequired.extensions);
      expect(paymentRequired.resource.url).toBe(`http://127.0.0.1:8080${resource.path}`);

      expect(paymentRequired.accepts).toHaveLength(1);
      expect(paymentRequired.accepts[0]).toEqual({
        scheme: 'exact',
        network: ALGORAND_MAINNET,
        amount: resource.amountAtomic,
        asset: USDC_ASA_ID,
        payTo: stack.payTo,
        maxTimeoutSeconds: 300,
        extra: { feePayer: stack.facilitator.feePayer, paymentFlow: 'upfront', resource: resource.path },
      });
      const bazaar = paymentRequired.extensions?.bazaar as {
        info: { input: unknown; output: { example: unknown } };
      };
      expect(bazaar.info.input).toEqual({ type: 'http', method: 'GET' });
      // A preview of the body (its top-level scalar fields), small enough to echo in the payment header.
      const example = bazaar.info.output.example as Record<string, unknown>;
      const full = PAID_EXAMPLES[resource.id] as Record<string, unknown>;
      expect(Object.keys(example).length).toBeGreaterThan(2);
      for (const [name, value] of Object.entries(example)) {
        expect(typeof value).toBe(typeof full[name]);
        if (typeof value !== 'string') expect(value).toBe(full[name]);
        else expect(String(full[name]).startsWith(value.replace(/…$/, ''))).toBe(true);
      }
    },
  );

  it('keeps the challenge header well under common header limits', async () => {
    for (const resource of PAID_RESOURCES) {
      const response = await fetch(stack.url(resource));
      expect(response.headers.get('PAYMENT-REQUIRED')!.length).toBeLessThan(4 * 1024);
    }
  });
});

describe('paid request', () => {
  it('serves the body after settlement and moves exactly the price on the ledger', async () => {
    const resource = resourceById('atlas');
    const { ledger } = stack.facilitator;
    const buyer = await newBuyer(stack.facilitator);
    const { paymentRequired } = await fetchChallenge(stack.url(resource));
    const payload = await buyer.pay(paymentRequired);

    const payerBefore = ledger.assetBalance(buyer.address);
    const payeeBefore = ledger.assetBalance(stack.payTo);
    const feePayerAlgoBefore = ledger.algoBalance(stack.facilitator.feePayer);

    const response = await fetch(stack.url(resource), { headers: paymentHeader(payload) });
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    const body = await response.json();
    expect(resource.schema.safeParse(body).success).toBe(true);
    expect(body.payment_status).toBe('settled');

    const price = BigInt(resource.amountAtomic);
    expect(payerBefore - ledger.assetBalance(buyer.address)).toBe(price);
    expect(ledger.assetBalance(stack.payTo) - payeeBefore).toBe(price);
    expect(ledger.algoBalance(stack.facilitator.feePayer)).toBeLessThan(feePayerAlgoBefore); // it paid the fee

    const settlement = decodePaymentResponseHeader(response.headers.get('PAYMENT-RESPONSE')!);
    expect(settlement.success).toBe(true);
    expect(settlement.network).toBe(ALGORAND_MAINNET);
    expect(settlement.payer).toBe(buyer.address);
    expect(settlement.transaction).toMatch(/^[A-Z2-7]{52}$/);
    expect(ledger.confirmedRound(settlement.transaction)).toBeDefined();
  });

  it('pays through @x402/fetch end to end (the emi buy path)', async () => {
    const { buyWithDevWallet } = await import('../paywall-worker/buy.ts');
    const resource = resourceById('atlasHumanReport');
    const result = await buyWithDevWallet({
      url: stack.url(resource),
      facilitatorUrl: stack.facilitator.url,
    });
    expect(result.status).toBe(200);
    expect(resource.schema.safeParse(result.body).success).toBe(true);
    expect(result.transaction).toMatch(/^[A-Z2-7]{52}$/);
    expect(stack.facilitator.ledger.assetBalance(result.payer)).toBe(1_000_000n - 100_000n);
  });
});
