// One payment id, one payment (x402's payment-identifier spec, "Idempotency Behavior": same id, different payload
// is a 409 Conflict). The official docs' buyer keeps one id and calls `fetchWithPayment` again, and @x402/fetch signs
// a new payment on every call: the second signature must be refused, never settled as a second purchase, while the
// first payment sent again (the same bytes and id) still collects what it bought. The same holds after a lost settle
// answer; a payment that never landed frees its id; two payments racing with one id settle once.
// (The book's rule in each of its homes: test/payment-book-ids.test.ts.)
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { decodePaymentResponseHeader } from '@x402/fetch';
import { PaywallErrorBody } from '../schemas/paid/payment-required.ts';
import type { DevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import type { PaywallServer } from '../paywall-worker/server.ts';
import { settleHold, startWorkerBehindProxy } from './publishers-harness.ts';
import {
  fetchChallenge,
  officialBuyerWithOneId,
  resourceById,
  writePaidFixtures,
} from './paywall-harness.ts';

type Stack = Awaited<ReturnType<typeof startWorkerBehindProxy>>;
const resource = resourceById('paidMarketRegime');
const PRICE = BigInt(resource.amountAtomic);
let paidDir: string;
let facilitator: DevFacilitator;
let proxy: Stack['proxy'];
let worker: PaywallServer;
let stack: Stack;
const url = () => `${worker.url}${resource.path}`;

beforeAll(async () => {
  paidDir = await mkdtemp(join(tmpdir(), 'emi-id-conflict-'));
  await writePaidFixtures(paidDir);
  stack = await startWorkerBehindProxy(paidDir);
  ({ facilitator, proxy, worker } = stack);
});
afterAll(async () => {
  await stack?.close();
  await rm(paidDir, { recursive: true, force: true });
});
beforeEach(() => {
  proxy.state.settle = 'pass';
  proxy.state.indexerDown = false;
});

/**
 * Holds the first settle that reaches the facilitator until `send` (told when one arrived) has returned, then lets it
 * go and waits for every answer.
 */
async function whileOneSettles(
  send: (arrived: Promise<void>) => Promise<Promise<Response>[]>,
): Promise<Response[]> {
  const hold = settleHold();
  proxy.state.hold = hold;
  try {
    const sending = await send(hold.arrived);
    hold.open();
    return await Promise.all(sending);
  } finally {
    proxy.state.hold = null;
    hold.open();
  }
}

const sendAgain = (signature: string) => fetch(url(), { headers: { 'PAYMENT-SIGNATURE': signature } });

async function conflictOf(response: Response) {
  expect(response.status).toBe(409);
  return PaywallErrorBody.parse(await response.json());
}

const transactionOf = (response: Response) =>
  decodePaymentResponseHeader(response.headers.get('PAYMENT-RESPONSE')!).transaction;

describe('one payment id, one payment, with the official client', () => {
  it('refuses a second signature with the id (409, not charged); the first payment sent again collects its file', async () => {
    const buyer = officialBuyerWithOneId(facilitator, 1_000_000n);
    const first = await buyer.fetchWithPayment(url());
    expect(first.status).toBe(200);
    const bought = await first.text();
    const paymentResponse = first.headers.get('PAYMENT-RESPONSE');
    expect(buyer.balance()).toBe(1_000_000n - PRICE);

    // The docs' "retry with the same payment ID": the wrapper signs a new payment for it.
    const second = await buyer.fetchWithPayment(url());
    expect(buyer.sent).toHaveLength(2);
    expect(buyer.sent[1]).not.toBe(buyer.sent[0]);
    const conflict = await conflictOf(second);
    expect(conflict.error).toBe('payment_id_conflict');
    expect(conflict.transaction).toBeNull();
    expect(conflict.message).toContain(transactionOf(first));
    expect(buyer.balance()).toBe(1_000_000n - PRICE); // charged once

    // The first payment, its bytes and id as sent, still collects what it bought.
    const again = await sendAgain(buyer.sent[0]!);
    expect(again.status).toBe(200);
    expect(await again.text()).toBe(bought);
    expect(again.headers.get('PAYMENT-RESPONSE')).toBe(paymentResponse);
    expect(buyer.balance()).toBe(1_000_000n - PRICE);
  });

  it('after a lost settle answer, refuses a new signature with the id; the kept payment collects its file', async () => {
    const buyer = officialBuyerWithOneId(facilitator, 1_000_000n);
    proxy.state.settle = 'lose-after-submit';
    proxy.state.indexerDown = true; // whether it landed cannot be found out now: the payment stays pending
    const lost = await buyer.fetchWithPayment(url());
    expect(lost.status).toBeGreaterThanOrEqual(500);
    const unknown = PaywallErrorBody.parse(await lost.json());
    expect(unknown.transaction).not.toBeNull();
    expect(buyer.balance()).toBe(1_000_000n - PRICE); // it did land

    proxy.state.settle = 'pass';
    proxy.state.indexerDown = false;
    const settleCalls = proxy.state.settleCalls;
    const retried = await buyer.fetchWithPayment(url()); // the official client's retry: a new signature, same id
    const conflict = await conflictOf(retried);
    expect(conflict.error).toBe('payment_id_conflict');
    expect(conflict.message).toContain(unknown.transaction!);
    expect(proxy.state.settleCalls).toBe(settleCalls); // nothing sent to settle
    expect(buyer.balance()).toBe(1_000_000n - PRICE); // no second charge

    const kept = await sendAgain(buyer.sent[0]!);
    expect(kept.status).toBe(200);
    expect(transactionOf(kept)).toBe(unknown.transaction);
    expect(buyer.balance()).toBe(1_000_000n - PRICE);
  });

  it('frees the id of a payment the facilitator refused: a funded new signature with it is sold', async () => {
    const buyer = officialBuyerWithOneId(facilitator, PRICE - 1n); // not enough
    const refused = await buyer.fetchWithPayment(url());
    expect(refused.status).toBe(402);
    expect(buyer.balance()).toBe(PRICE - 1n);

    facilitator.ledger.fund(buyer.address, PRICE);
    const bought = await buyer.fetchWithPayment(url());
    expect(bought.status).toBe(200);
    expect(buyer.balance()).toBe(PRICE - 1n);
  });

  it('settles one of two payments sent at once with one id; the other is refused, and the buyer charged once', async () => {
    const buyer = officialBuyerWithOneId(facilitator, 1_000_000n);
    const { paymentRequired } = await fetchChallenge(url());
    const sign = () => buyer.client.createPaymentPayload(structuredClone(paymentRequired));
    const first = await sign();
    facilitator.ledger.advance(1); // another round: another transaction (the same round signs the same bytes)
    const [a, b] = [first, await sign()].map((payment) => ({
      'PAYMENT-SIGNATURE': Buffer.from(JSON.stringify(payment)).toString('base64'),
    }));
    expect(a).not.toEqual(b);
    // The first to bind the id is held at settle until the other has its answer: they overlap.
    const answers = await whileOneSettles(async (arrived) => {
      const sending = [a, b].map((headers) => fetch(url(), { headers }));
      await arrived;
      expect((await Promise.race(sending)).status).not.toBe(200); // answered while the other is settling
      return sending;
    });
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses[0]).toBe(200);
    expect([409, 503]).toContain(statuses[1]);
    const refused = PaywallErrorBody.parse(await answers.find((answer) => answer.status !== 200)!.json());
    expect(['payment_id_conflict', 'payment_in_progress']).toContain(refused.error);
    expect(buyer.balance()).toBe(1_000_000n - PRICE);
  });
});
