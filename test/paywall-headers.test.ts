// Small headers: the PAYMENT-REQUIRED challenge and the PAYMENT-SIGNATURE the official client builds from it stay
// under 4 KB (the default header buffers of common proxies), while the Bazaar metadata still passes both
// official validators of @x402/extensions.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodePaymentSignatureHeader } from '@x402/core/http';
import { validateDiscoveryExtension, validateDiscoveryExtensionSpec } from '@x402/extensions/bazaar';
import { PAID_RESOURCES } from '../schemas/resources.ts';
import { fetchChallenge, newBuyer, startStack } from './paywall-harness.ts';
import type { Buyer, Stack } from './paywall-harness.ts';

const LIMIT = 4 * 1024;
let stack: Stack;
let buyer: Buyer;

beforeAll(async () => {
  stack = await startStack();
  buyer = await newBuyer(stack.facilitator);
});
afterAll(async () => {
  await stack?.close();
});

describe.each(PAID_RESOURCES.map((r) => [r.path, r] as const))('%s', (_, resource) => {
  it('keeps PAYMENT-REQUIRED and the official client’s PAYMENT-SIGNATURE under 4 KB', async () => {
    const { response, paymentRequired } = await fetchChallenge(stack.url(resource));
    const required = response.headers.get('PAYMENT-REQUIRED')!;
    const payment = await buyer.pay(paymentRequired);
    // The longest id the payment-identifier extension allows (the harness's buyer sends a 36-character one).
    (payment.extensions?.['payment-identifier'] as { info: { id: string } }).info.id = 'x'.repeat(128);
    const signature = encodePaymentSignatureHeader(payment);
    expect(required.length).toBeLessThanOrEqual(LIMIT);
    expect(signature.length).toBeLessThanOrEqual(LIMIT);
    expect(signature.length).toBeGreaterThan(required.length); // the client echoes the extension: a real header
  });

  it('carries Bazaar metadata that passes both official validators', async () => {
    const { paymentRequired } = await fetchChallenge(stack.url(resource));
    const bazaar = paymentRequired.extensions?.bazaar;
    const result = validateDiscoveryExtension(bazaar as Parameters<typeof validateDiscoveryExtension>[0]);
    expect(result.valid, JSON.stringify(result.errors)).toBe(true);
    const spec = validateDiscoveryExtensionSpec(bazaar as Record<string, unknown>);
    expect(spec.valid, JSON.stringify(spec.errors)).toBe(true);
  });
});
