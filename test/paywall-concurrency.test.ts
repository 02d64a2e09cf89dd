// Fifty buyers at once on the local stack, each with the official @x402/fetch client and its own wallet: every
// one is served, each is charged exactly once, and the payee receives exactly fifty prices.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buyWithDevWallet } from '../paywall-worker/buy.ts';
import { resourceById, startStack } from './paywall-harness.ts';
import type { Stack } from './paywall-harness.ts';

const BUYERS = 50;
const resource = resourceById('paidMarketRegime');
let stack: Stack;

beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.close();
});

describe(`${BUYERS} concurrent buyers`, () => {
  it('all succeed, each charged once', { timeout: 120_000 }, async () => {
    const { ledger } = stack.facilitator;
    const payeeBefore = ledger.assetBalance(stack.payTo);
    const results = await Promise.all(
      Array.from({ length: BUYERS }, () =>
        buyWithDevWallet({
          url: stack.url(resource),
          facilitatorUrl: stack.facilitator.url,
          fundAtomic: '1000000',
        }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array(BUYERS).fill(200));
    const transactions = new Set(results.map((r) => r.transaction));
    expect(transactions.size).toBe(BUYERS);
    for (const result of results) {
      expect(ledger.assetBalance(result.payer)).toBe(1_000_000n - BigInt(resource.amountAtomic));
    }
    expect(ledger.assetBalance(stack.payTo) - payeeBefore).toBe(
      BigInt(resource.amountAtomic) * BigInt(BUYERS),
    );
  });
});
