// When a settle answer is lost, the paywall asks the chain (an indexer) whether the payment landed. A payment's
// bytes are public once it has, so the chain's answer must be read with care: a confirmation older than the attempt
// that could have landed it is an old payment presented again and buys nothing; while the answer is unknown the
// payment stays pending however often anyone presents it, and a charged buyer always collects the file.
// Real servers on loopback: the development facilitator and ledger, a facilitator in front of it whose settle
// answers can be lost, an indexer in front of it that can be down, and a paywall whose clock the test moves.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Hono } from 'hono';
import type { PaymentPayload } from '@x402/core/types';
import { startDevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import type { DevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import { listen } from '../paywall-worker/node-listen.ts';
import { MemoryPaymentBook } from '../paywall-worker/payment-book.ts';
import { startPaywallServer } from '../paywall-worker/server.ts';
import type { PaywallServer } from '../paywall-worker/server.ts';
import { createFsStorage } from '../paywall-worker/storage-fs.ts';
import {
  fetchChallenge,
  newBuyer,
  paymentHeader,
  resourceById,
  writePaidFixtures,
} from './paywall-harness.ts';
import type { Buyer } from './paywall-harness.ts';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import algosdk from 'algosdk';

const resource = resourceById('paidMarketRegime');
const ANSWER_TIMEOUT_MS = 800;

type SettleMode = 'pass' | 'lose';
let chain: DevFacilitator;
let facilitator: { url: string; mode: SettleMode; close(): Promise<void> };
let indexer: { url: string; down: boolean; close(): Promise<void> };
let paidDir: string;
let payTo: string;
let buyer: Buyer;
const clock = { offsetMs: 0, now: () => Date.now() + clock.offsetMs };
let paywall: PaywallServer | null = null;

beforeAll(async () => {
  chain = await startDevFacilitator();
  payTo = algosdk.generateAccount().addr.toString();
  chain.ledger.optIn(payTo);
  paidDir = await mkdtemp(join(tmpdir(), 'emi-lost-answers-'));
  await writePaidFixtures(paidDir);
  buyer = await newBuyer(chain);

  const facilitatorApp = new Hono();
  const forward = async (path: string, body: string) =>
    fetch(`${chain.url}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
  facilitatorApp.get('/supported', () => fetch(`${chain.url}/supported`));
  facilitatorApp.post('/verify', async (c) => forward('/verify', await c.req.text()));
  facilitatorApp.post('/settle', async (c) => {
    const answer = await forward('/settle', await c.req.text());
    if (facilitator.mode === 'pass') return answer;
    // Settled, but the answer never arrives: the paywall has given up waiting.
    await new Promise((resolve) => setTimeout(resolve, ANSWER_TIMEOUT_MS * 3));
    return answer;
  });
  const facilitatorServer = await listen(facilitatorApp, 0, '127.0.0.1');
  facilitator = {
    url: `http://127.0.0.1:${facilitatorServer.port}`,
    mode: 'pass',
    close: facilitatorServer.close,
  };

  const indexerApp = new Hono();
  indexerApp.get('*', (c) =>
    indexer.down ? c.json({ message: 'down' }, 503) : fetch(`${chain.url}${new URL(c.req.url).pathname}`),
  );
  const indexerServer = await listen(indexerApp, 0, '127.0.0.1');
  indexer = { url: `http://127.0.0.1:${indexerServer.port}`, down: false, close: indexerServer.close };
});
afterEach(async () => {
  await paywall?.close();
  paywall = null;
  facilitator.mode = 'pass';
  indexer.down = false;
  clock.offsetMs = 0;
});
afterAll(async () => {
  await facilitator?.close();
  await indexer?.close();
  await chain?.close();
  await rm(paidDir, { recursive: true, force: true });
});

/** A paywall with its own payment book, on this test's clock. */
async function startPaywall(): Promise<PaywallServer> {
  paywall = await startPaywallServer(
    {
      port: 0,
      payTo,
      facilitatorUrl: facilitator.url,
      facilitatorTimeoutMs: ANSWER_TIMEOUT_MS,
      baseUrl: 'http://127.0.0.1:8080',
      storage: createFsStorage(paidDir),
      allowSimulated: true,
      indexerUrl: indexer.url,
    },
    { now: clock.now, paymentBook: new MemoryPaymentBook(clock.now) },
  );
  return paywall;
}

const url = () => `${paywall!.url}${resource.path}`;
const pay = async (): Promise<PaymentPayload> => buyer.pay((await fetchChallenge(url())).paymentRequired);
const send = async (payment: PaymentPayload) => {
  const response = await fetch(url(), { headers: paymentHeader(payment) });
  return { status: response.status, response, json: (await response.json()) as Record<string, unknown> };
};
/** The payment as anyone rebuilds it from the chain: the same signed bytes, and no payment identifier. */
const fromChain = (payment: PaymentPayload): PaymentPayload => ({ ...payment, extensions: {} });
const charged = () => chain.ledger.assetBalance(buyer.address);

describe('a lost settle answer', () => {
  it('never delivers a payment that landed long before it was presented', async () => {
    await startPaywall();
    const payment = await pay();
    expect((await send(payment)).status).toBe(200);
    // Two hours of rounds later, a paywall whose book has forgotten it (records last an hour) is shown it again.
    chain.ledger.advance(3_000);
    await paywall!.close();
    await startPaywall();
    facilitator.mode = 'lose';
    const replayed = await send(payment);
    expect(replayed.status).toBe(402);
    expect(replayed.json.error).toBe('payment_already_used');
    expect(String(replayed.json.message)).toContain('landed on chain');
  });

  it('delivers the payment this request landed, whatever the paywall’s clock says (no two clocks compared)', async () => {
    clock.offsetMs = 90_000; // a paywall clock 90 s fast
    await startPaywall();
    facilitator.mode = 'lose';
    const before = charged();
    const paid = await send(await pay());
    expect(paid.status).toBe(200);
    expect(before - charged()).toBe(BigInt(resource.amountAtomic));
  });

  it('keeps the payment pending for its buyer however often copies come, and delivers it when the chain answers', async () => {
    await startPaywall();
    facilitator.mode = 'lose';
    indexer.down = true;
    const payment = await pay();
    const before = charged();
    expect((await send(payment)).status).toBe(504); // landed, but nobody can tell yet
    expect(before - charged()).toBe(BigInt(resource.amountAtomic));
    facilitator.mode = 'pass';
    for (const minutes of [1, 2, 3]) {
      clock.offsetMs = minutes * 60_000;
      expect((await send(fromChain(payment))).json.error).toBe('payment_already_used');
      // The buyer's own retry while the chain cannot be asked: settled again, refused ("already in the
      // ledger"), which proves nothing; still pending, not released.
      expect((await send(payment)).status).toBe(504);
    }
    indexer.down = false;
    const collected = await send(payment);
    expect(collected.status).toBe(200);
    expect(before - charged()).toBe(BigInt(resource.amountAtomic));
  });

  it('still serves its buyer when a copy from the chain collected the file first (a payment sent without an id)', async () => {
    await startPaywall();
    facilitator.mode = 'lose';
    indexer.down = true;
    const payment = fromChain(await pay()); // the buyer's client sends no payment identifier
    expect((await send(payment)).status).toBe(504);
    indexer.down = false;
    // An onlooker's copy is the same bytes: it collects the file (one copy leaks) ...
    expect((await send(payment)).status).toBe(200);
    // ... and the buyer, charged, still gets it.
    const collected = await send(payment);
    expect(collected.status).toBe(200);
    expect(collected.json.type).toBe('paid_market_regime');
  });
});
