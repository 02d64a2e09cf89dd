// The 4 KB header budget (see test/paywall-headers.test.ts) on a publisher's storefront paths too, at its worst:
// the longest publisher id (32 characters), the longest brand name (80 characters, CJK: 3 bytes each in UTF-8),
// each product, and a payment identifier of its longest (128 characters). The name is in every 402 (the resource
// description and the Bazaar seller block), and the official client echoes the extensions back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodePaymentSignatureHeader } from '@x402/core/http';
import { PAYMENT_IDENTIFIER } from '../schemas/paid/payment-identifier.ts';
import { fetchChallenge, newBuyer } from './paywall-harness.ts';
import { account, publisherEntry, startPublisherStack } from './publishers-harness.ts';
import type { PublisherStack } from './publishers-harness.ts';

const LIMIT = 4 * 1024;
const LONGEST_ID = `p${'0'.repeat(30)}q`;
const LONGEST_NAME = '市場研究'.repeat(20); // 80 characters, 240 bytes
const PRODUCTS = ['market-regime', 'main-brain', 'atlas', 'atlas-human-report'];
let stack: PublisherStack;

beforeAll(async () => {
  stack = await startPublisherStack(
    () => [
      publisherEntry(LONGEST_ID, account(), {
        brand: {
          name: LONGEST_NAME,
          accentColor: '#aa3300',
          contactUrl: 'mailto:desk@example.org',
          termsUrl: 'https://example.org/terms',
        },
        products: Object.fromEntries(PRODUCTS.map((slug) => [slug, { priceUsd: '0.15' }])),
      }),
    ],
    { [LONGEST_ID]: 10 },
  );
});
afterAll(() => stack?.close());

describe.each(PRODUCTS)('/p/<longest id>/%s', (product) => {
  it('keeps PAYMENT-REQUIRED and the official client’s PAYMENT-SIGNATURE under 4 KB', async () => {
    const path = `/p/${LONGEST_ID}/api/x402-${product}.php`;
    const { response, paymentRequired } = await fetchChallenge(stack.url(path));
    expect(response.status).toBe(402);
    expect(paymentRequired.resource.description).toContain(LONGEST_NAME);
    const buyer = await newBuyer(stack.facilitator);
    const payment = await buyer.pay(paymentRequired);
    (payment.extensions?.[PAYMENT_IDENTIFIER] as { info: { id: string } }).info.id = 'x'.repeat(128);
    const signature = encodePaymentSignatureHeader(payment);
    expect(response.headers.get('PAYMENT-REQUIRED')!.length).toBeLessThanOrEqual(LIMIT);
    expect(signature.length).toBeLessThanOrEqual(LIMIT);
  });
});
