// A confirmed Algorand payment is public on chain, its signature included: anyone watching the payee can rebuild
// the very PAYMENT-SIGNATURE bytes a buyer sent (algosdk's encoding is canonical). So those bytes alone must not buy
// anything once they have landed: a settled payment is delivered again only with the payment identifier (x402's
// payment-identifier extension) it was first sent with, which never reaches the chain; and a lost settle answer
// delivers only a payment that landed during this attempt, never an old one presented again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Hono } from 'hono';
import { decodePaymentResponseHeader } from '@x402/core/http';
import type { PaymentPayload } from '@x402/core/types';
import {
  appendPaymentIdentifierToExtensions,
  extractPaymentIdentifier,
  isPaymentIdentifierExtension,
} from '@x402/extensions/payment-identifier';
import { PaymentRequiredBody } from '../schemas/paid/payment-required.ts';
import { startDevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import type { DevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import { listen } from '../paywall-worker/node-listen.ts';
import { paymentIdOf, PAYMENT_IDENTIFIER } from '../schemas/paid/payment-identifier.ts';
import { startPaywallServer } from '../paywall-worker/server.ts';
import type { PaywallServer } from '../paywall-worker/server.ts';
import { createFsStorage } from '../paywall-worker/storage-fs.ts';
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

describe('one purchase per payment id (the extension’s idempotency)', () => {
  /** A payment for `path` carrying `id`, signed by `payer` (a new signature each time, as a client's retry is). */
  async function payWithId(payer: Buyer, path: string, id: string): Promise<PaymentPayload> {
    const payment = await payer.pay((await fetchChallenge(`${stack.worker.url}${path}`)).paymentRequired);
    (payment.extensions![PAYMENT_IDENTIFIER] as { info: { id: string } }).info.id = id;
    return payment;
  }
  const send = async (path: string, payment: PaymentPayload) => {
    const response = await fetch(`${stack.worker.url}${path}`, { headers: paymentHeader(payment) });
    return { response, text: await response.text() };
  };

  it('answers a new payment with an id that already bought the path with that purchase, and never settles it', async () => {
    const id = `pay_${'a1'.repeat(16)}`;
    const first = await send(resource.path, await payWithId(buyer, resource.path, id));
    expect(first.response.status).toBe(200);
    const { ledger } = stack.facilitator;
    const before = { balance: ledger.assetBalance(buyer.address), txns: ledger.transactionCount };
    // The official client's retry: the same id, a payment signed anew (another transaction).
    const retry = await send(resource.path, await payWithId(buyer, resource.path, id));
    expect(retry.response.status).toBe(200);
    expect(retry.text).toBe(first.text);
    expect(retry.response.headers.get('PAYMENT-RESPONSE')).toBe(
      first.response.headers.get('PAYMENT-RESPONSE'),
    );
    expect(ledger.assetBalance(buyer.address)).toBe(before.balance);
    expect(ledger.transactionCount).toBe(before.txns);
  });

  it('refuses the id from another payer, or for another path, and settles nothing', async () => {
    const id = `pay_${'b2'.repeat(16)}`;
    expect((await send(resource.path, await payWithId(buyer, resource.path, id))).response.status).toBe(200);
    const stranger = await newBuyer(stack.facilitator);
    const { ledger } = stack.facilitator;
    const before = ledger.transactionCount;
    const guessed = await send(resource.path, await payWithId(stranger, resource.path, id));
    expect(guessed.response.status).toBe(402);
    expect(PaymentRequiredBody.parse(JSON.parse(guessed.text)).error).toBe('payment_already_used');
    const other = resourceById('paidMainBrain');
    const elsewhere = await send(other.path, await payWithId(buyer, other.path, id));
    expect(elsewhere.response.status).toBe(402);
    expect(PaymentRequiredBody.parse(JSON.parse(elsewhere.text)).error).toBe('payment_already_used');
    expect(ledger.transactionCount).toBe(before);
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

describe('an old payment presented again while the settle answer is lost', () => {
  const HOURS_2 = 2 * 3600 * 1000;
  let chain: DevFacilitator;
  let lossy: Awaited<ReturnType<typeof listen>>;
  let fresh: PaywallServer;
  let oldBuyer: Buyer;

  beforeAll(async () => {
    // A chain whose blocks were made two hours ago: every payment on it landed long before it is presented below.
    chain = await startDevFacilitator({ now: () => Date.now() - HOURS_2 });
    chain.ledger.optIn(stack.payTo);
    oldBuyer = await newBuyer(chain);
    // A facilitator whose settle answers never arrive (the paywall gives up waiting; the request reached it).
    const app = new Hono();
    app.get('/supported', () => fetch(`${chain.url}/supported`));
    app.post('/verify', async (c) =>
      fetch(`${chain.url}/verify`, { method: 'POST', headers: c.req.header(), body: await c.req.text() }),
    );
    app.post('/settle', async () => {
      await new Promise((resolve) => setTimeout(resolve, 3000));
      return new Response('{}', { status: 500 });
    });
    lossy = await listen(app, 0, '127.0.0.1');
  });
  afterAll(async () => {
    await fresh?.close();
    await lossy?.close();
    await chain?.close();
  });

  const paywallOn = (facilitatorUrl: string) =>
    startPaywallServer({
      port: 0,
      payTo: stack.payTo,
      facilitatorUrl,
      facilitatorTimeoutMs: 1000,
      baseUrl: 'http://127.0.0.1:8080',
      storage: createFsStorage(stack.paidDir),
      allowSimulated: true,
      indexerUrl: chain.url,
    });

  it('is refused: the chain shows it landed before this request, so this request did not settle it', async () => {
    const seller = await paywallOn(chain.url);
    const { paymentRequired } = await fetchChallenge(`${seller.url}${resource.path}`);
    const payment = await oldBuyer.pay(paymentRequired);
    const sold = await fetch(`${seller.url}${resource.path}`, { headers: paymentHeader(payment) });
    expect(sold.status).toBe(200);
    await seller.close();

    // A paywall whose book no longer holds it (records last an hour), and whose settle answer is lost.
    fresh = await paywallOn(`http://127.0.0.1:${lossy.port}`);
    const replayed = await fetch(`${fresh.url}${resource.path}`, { headers: paymentHeader(payment) });
    const text = await replayed.text();
    expect(replayed.status).toBe(402);
    expect(PaymentRequiredBody.parse(JSON.parse(text)).error).toBe('payment_already_used');
    expect(text).toContain('landed on chain');
  }, 30_000);
});
