// What the worker does when something other than the payment is wrong: the facilitator is down, slow, answering
// 500 or garbage, settlement is refused, or the paid file is missing. The paid body is never
// served, and nobody is charged for a body that cannot be served.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Hono } from 'hono';
import algosdk from 'algosdk';
import { decodePaymentResponseHeader } from '@x402/core/http';
import type { PaymentPayload } from '@x402/core/types';
import { PaywallErrorBody } from '../schemas/paid/payment-required.ts';
import { PAID_EXAMPLES } from '../schemas/paid/examples.ts';
import { createPaywallApp, PaywallConfigError } from '../paywall-worker/app.ts';
import { listen } from '../paywall-worker/node-listen.ts';
import { startPaywallServer } from '../paywall-worker/server.ts';
import type { PaywallServer } from '../paywall-worker/server.ts';
import { createFsStorage } from '../paywall-worker/storage-fs.ts';
import { createSiteWorker } from '../paywall-worker/cloudflare/site-worker.ts';
import { MemoryPaymentBook } from '../paywall-worker/payment-book.ts';
import {
  fetchChallenge,
  newBuyer,
  paymentHeader,
  resourceById,
  startStack,
  writePaidFixtures,
} from './paywall-harness.ts';
import type { Buyer, Stack } from './paywall-harness.ts';

type Mode = 'pass' | 'slow' | 'late' | '500' | 'garbage' | 'expire-first' | 'unconfirmed';

/** A facilitator in front of the development one whose verify and settle can misbehave on demand. */
async function startProxyFacilitator(target: string, ledgerAdvance: () => void) {
  const modes = { verify: 'pass' as Mode, settle: 'pass' as Mode };
  const calls = { verify: 0, settle: 0 };
  const app = new Hono();
  app.get('/supported', async () => fetch(`${target}/supported`));
  for (const op of ['verify', 'settle'] as const) {
    app.post(`/${op}`, async (c) => {
      calls[op] += 1;
      const mode = modes[op];
      if (mode === 'slow') {
        await new Promise((r) => setTimeout(r, 3000));
        return c.json({ error: 'too late' }, 500); // never forwarded: the ledger stays as it was
      }
      // Settled after the worker gave up waiting: the money moves, the answer never reaches it.
      if (mode === 'late') await new Promise((r) => setTimeout(r, 2000));
      if (mode === '500') return c.json({ error: 'internal failure' }, 500);
      if (mode === 'garbage') return c.text('<html>not json</html>', 200);
      if (mode === 'expire-first') ledgerAdvance(); // the payment's validity ends between verify and settle
      const forwarded = await fetch(`${target}/${op}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: await c.req.text(),
      });
      if (mode !== 'unconfirmed') return forwarded;
      // Submitted (the money moved) but reported as a failure, as when waiting for confirmation fails.
      const settled = (await forwarded.json()) as { transaction: string; network: string };
      return c.json({
        success: false,
        errorReason: 'confirmation_failed',
        errorMessage: 'Transaction submitted but confirmation failed',
        transaction: settled.transaction,
        network: settled.network,
      });
    });
  }
  const listening = await listen(app, 0, '127.0.0.1');
  return { url: `http://127.0.0.1:${listening.port}`, modes, calls, close: listening.close };
}

const resource = resourceById('paidMainBrain');
let stack: Stack;
let proxy: Awaited<ReturnType<typeof startProxyFacilitator>>;
let worker: PaywallServer;
let buyer: Buyer;

beforeAll(async () => {
  stack = await startStack();
  proxy = await startProxyFacilitator(stack.facilitator.url, () => stack.facilitator.ledger.advance(50));
  worker = await startWorker(proxy.url);
  buyer = await newBuyer(stack.facilitator);
});
afterEach(async () => {
  proxy.modes.verify = 'pass';
  proxy.modes.settle = 'pass';
  await writePaidFixtures(stack.paidDir);
});
afterAll(async () => {
  await worker?.close();
  await proxy?.close();
  await stack?.close();
});

const url = () => `${worker.url}${resource.path}`;

const startWorker = (facilitatorUrl: string) =>
  startPaywallServer({
    port: 0,
    payTo: stack.payTo,
    facilitatorUrl,
    facilitatorTimeoutMs: 1500, // generous: the machine runs other suites in parallel
    baseUrl: 'http://127.0.0.1:8080',
    storage: createFsStorage(stack.paidDir),
    allowSimulated: true,
    indexerUrl: stack.facilitator.url,
  });

async function signedPayment() {
  const { paymentRequired } = await fetchChallenge(url());
  return buyer.pay(paymentRequired);
}

/** Sends a valid payment and checks the answer is a JSON error with CORS, and that no money moved. */
async function expectUpstreamError(status: number, error: string, signed?: PaymentPayload) {
  const payload = signed ?? (await signedPayment());
  const { ledger } = stack.facilitator;
  const before = { payer: ledger.assetBalance(buyer.address), txns: ledger.transactionCount };
  const response = await fetch(url(), { headers: paymentHeader(payload) });
  expect(response.status).toBe(status);
  expect(response.headers.get('access-control-allow-origin')).toBe('*');
  expect(response.headers.get('cache-control')).toBe('no-store');
  const body = PaywallErrorBody.parse(await response.json());
  expect(body.error).toBe(error);
  expect(body).not.toHaveProperty('coins'); // never the paid body
  expect(ledger.assetBalance(buyer.address)).toBe(before.payer);
  expect(ledger.transactionCount).toBe(before.txns);
  return { response, body };
}

describe('facilitator trouble', () => {
  it('asks the facilitator once per sale, to settle (x402 upfront flow: settle verifies); /verify is never reached', async () => {
    proxy.modes.verify = '500'; // would fail the sale if it were asked
    const calls = { ...proxy.calls };
    const payload = await signedPayment();
    const response = await fetch(url(), { headers: paymentHeader(payload) });
    expect(response.status).toBe(200);
    expect(resource.schema.safeParse(await response.json()).success).toBe(true);
    expect(proxy.calls.verify).toBe(calls.verify);
    expect(proxy.calls.settle).toBe(calls.settle + 1);
  });

  it('answers 504 with the payment id when settle times out, and settles that payment once when it is retried', async () => {
    proxy.modes.settle = 'slow';
    const payload = await signedPayment();
    const first = await fetch(url(), { headers: paymentHeader(payload) });
    expect(first.status).toBe(504);
    const failure = PaywallErrorBody.parse(await first.json());
    expect(failure.error).toBe('facilitator_timeout');
    // The buyer gets the id of the payment whose outcome is unknown, and is told to retry the same payment.
    const { paymentGroup, paymentIndex } = payload.payload as {
      paymentGroup: string[];
      paymentIndex: number;
    };
    const txid = algosdk
      .decodeSignedTransaction(Buffer.from(paymentGroup[paymentIndex]!, 'base64'))
      .txn.txID();
    expect(failure.transaction).toBe(txid);
    expect(failure.message).toContain(txid);
    expect(failure.message).toMatch(/same PAYMENT-SIGNATURE again/);
    proxy.modes.settle = 'pass';
    // The chain shows the payment did not land and is still valid: the retry settles it, exactly once.
    const before = stack.facilitator.ledger.assetBalance(buyer.address);
    const again = await fetch(url(), { headers: paymentHeader(payload) });
    expect(again.status).toBe(200);
    expect(decodePaymentResponseHeader(again.headers.get('PAYMENT-RESPONSE')!).transaction).toBe(txid);
    expect(before - stack.facilitator.ledger.assetBalance(buyer.address)).toBe(BigInt(resource.amountAtomic));
  });

  it('delivers a payment whose settle answer was lost only to the signed bytes that were sent', async () => {
    proxy.modes.settle = 'late';
    const payload = await signedPayment();
    const before = stack.facilitator.ledger.assetBalance(buyer.address);
    expect((await fetch(url(), { headers: paymentHeader(payload) })).status).toBe(504);
    const { paymentGroup, paymentIndex } = payload.payload as {
      paymentGroup: string[];
      paymentIndex: number;
    };
    const { txn } = algosdk.decodeSignedTransaction(Buffer.from(paymentGroup[paymentIndex]!, 'base64'));
    while (stack.facilitator.ledger.confirmedRound(txn.txID()) === undefined) {
      await new Promise((r) => setTimeout(r, 50)); // the late settlement lands
    }
    // The confirmed transaction is public: a copy signed by someone else has its id but not its bytes, nor the
    // buyer's payment identifier, which never reaches the chain.
    const forged = Buffer.from(txn.signTxn(algosdk.generateAccount().sk)).toString('base64');
    const copy = {
      ...payload,
      extensions: {},
      payload: {
        ...payload.payload,
        paymentGroup: paymentGroup.map((m, i) => (i === paymentIndex ? forged : m)),
      },
    };
    const refused = await fetch(url(), { headers: paymentHeader(copy) });
    expect(refused.status).toBe(402);
    expect((await refused.json()).error).toBe('payment_already_used');
    // The buyer's own retry still gets the file it paid for, charged once.
    const again = await fetch(url(), { headers: paymentHeader(payload) });
    expect(again.status).toBe(200);
    expect(resource.schema.safeParse(await again.json()).success).toBe(true);
    expect(before - stack.facilitator.ledger.assetBalance(buyer.address)).toBe(BigInt(resource.amountAtomic));
  });

  it('answers 502 when settle answers 500', async () => {
    proxy.modes.settle = '500';
    await expectUpstreamError(502, 'facilitator_bad_response');
  });

  it('answers 502 when settle answers something that is not JSON', async () => {
    proxy.modes.settle = 'garbage';
    await expectUpstreamError(502, 'facilitator_bad_response');
  });

  it('answers 402 with the failure in PAYMENT-RESPONSE when settlement is refused', async () => {
    proxy.modes.settle = 'expire-first';
    const payload = await signedPayment();
    const before = stack.facilitator.ledger.assetBalance(buyer.address);
    const response = await fetch(url(), { headers: paymentHeader(payload) });
    expect(response.status).toBe(402);
    expect(response.headers.get('PAYMENT-REQUIRED')).not.toBeNull();
    const settlement = decodePaymentResponseHeader(response.headers.get('PAYMENT-RESPONSE')!);
    expect(settlement.success).toBe(false);
    expect(settlement.errorReason).toBe('invalid_exact_avm_simulation_failed');
    expect(settlement.transaction).toBe('');
    expect((await response.json()).error).toBe('invalid_exact_avm_simulation_failed');
    expect(stack.facilitator.ledger.assetBalance(buyer.address)).toBe(before);
  });

  it('serves the file when settle reports a failure but the chain shows the payment confirmed', async () => {
    proxy.modes.settle = 'unconfirmed';
    const payload = await signedPayment();
    const before = stack.facilitator.ledger.assetBalance(buyer.address);
    const first = await fetch(url(), { headers: paymentHeader(payload) });
    expect(first.status).toBe(200);
    expect(resource.schema.safeParse(await first.json()).success).toBe(true);
    const settlement = decodePaymentResponseHeader(first.headers.get('PAYMENT-RESPONSE')!);
    expect(settlement.success).toBe(true);
    expect(stack.facilitator.ledger.confirmedRound(settlement.transaction)).toBeDefined();
    expect(before - stack.facilitator.ledger.assetBalance(buyer.address)).toBe(BigInt(resource.amountAtomic));
    // The same payment again is the same delivery, never a second call to settle.
    proxy.modes.settle = 'pass';
    const calls = { ...proxy.calls };
    const again = await fetch(url(), { headers: paymentHeader(payload) });
    expect(again.status).toBe(200);
    expect(proxy.calls).toEqual(calls);
  });

  it('answers 503 when the facilitator is down, for unpaid and paid requests alike', async () => {
    const payload = await signedPayment(); // challenge fetched while the facilitator was still up
    const down = await listen(new Hono(), 0, '127.0.0.1');
    const downUrl = `http://127.0.0.1:${down.port}`;
    await down.close(); // nothing listens there any more
    const offline = await startWorker(downUrl);
    try {
      for (const headers of [{}, paymentHeader(payload)]) {
        const response = await fetch(`${offline.url}${resource.path}`, { headers });
        expect(response.status).toBe(503);
        expect(response.headers.get('retry-after')).toBe('30');
        expect(PaywallErrorBody.parse(await response.json()).error).toBe('facilitator_unreachable');
      }
    } finally {
      await offline.close();
    }
  });

  it('answers 503 when the facilitator goes down after the challenge was issued', async () => {
    const ownProxy = await startProxyFacilitator(stack.facilitator.url, () => undefined);
    const ownWorker = await startWorker(ownProxy.url);
    try {
      const { paymentRequired } = await fetchChallenge(`${ownWorker.url}${resource.path}`);
      const payload = await buyer.pay(paymentRequired);
      await ownProxy.close();
      const before = stack.facilitator.ledger.assetBalance(buyer.address);
      const response = await fetch(`${ownWorker.url}${resource.path}`, { headers: paymentHeader(payload) });
      expect(response.status).toBe(503);
      expect(PaywallErrorBody.parse(await response.json()).error).toBe('facilitator_unreachable');
      expect(stack.facilitator.ledger.assetBalance(buyer.address)).toBe(before);
    } finally {
      await ownWorker.close();
    }
  });
});

describe('paid file unavailable', () => {
  it('answers 503 before any verification or settlement when the file is missing', async () => {
    const payload = await signedPayment(); // signed while the file was there
    await rm(join(stack.paidDir, resource.file));
    const calls = { ...proxy.calls };
    const { body } = await expectUpstreamError(503, 'paid_resource_unavailable', payload);
    expect(body.retry_after_seconds).toBe(30);
    expect(proxy.calls.verify).toBe(calls.verify);
    expect(proxy.calls.settle).toBe(calls.settle);
  });

  it('answers 503 when the file does not pass its schema', async () => {
    const payload = await signedPayment();
    await writeFile(
      join(stack.paidDir, resource.file),
      JSON.stringify({
        ...(PAID_EXAMPLES[resource.id] as object),
        updated: new Date().toISOString(),
        payment_status: 'pending',
      }),
    );
    const calls = { ...proxy.calls };
    await expectUpstreamError(503, 'paid_resource_unavailable', payload);
    expect(proxy.calls.verify).toBe(calls.verify);
  });

  it('answers the unpaid request with 503 too while the file is missing: nobody is asked to pay', async () => {
    await rm(join(stack.paidDir, resource.file));
    const response = await fetch(url());
    expect(response.status).toBe(503);
    expect(response.headers.get('PAYMENT-REQUIRED')).toBeNull();
    expect(PaywallErrorBody.parse(await response.json()).error).toBe('paid_resource_unavailable');
  });
});

describe('configuration', () => {
  it('a misconfigured Workers entry answers 500 paywall_misconfigured with CORS and no-store', async () => {
    const env = {
      EMI_PAYTO: 'NOT-AN-ADDRESS',
      EMI_FACILITATOR_URL: 'http://127.0.0.1:1',
      EMI_BASE_URL: 'http://127.0.0.1:8080',
      PAID_KV: { get: async () => null },
      ASSETS: { fetch: async () => new Response('asset') },
    };
    const worker = createSiteWorker(() => new MemoryPaymentBook());
    const response = await worker.fetch(new Request(`http://127.0.0.1${resource.path}`), env);
    expect(response.status).toBe(500);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('access-control-expose-headers')).toContain('PAYMENT-RESPONSE');
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(PaywallErrorBody.parse(await response.json()).error).toBe('paywall_misconfigured');
  });

  it('a misconfigured Workers entry names the variable to mend, as emi does', async () => {
    const answer = async (variables: Record<string, string>) => {
      const env = {
        EMI_PAYTO: algosdk.generateAccount().addr.toString(),
        EMI_FACILITATOR_URL: 'http://127.0.0.1:1',
        PAID_KV: { get: async () => null },
        ASSETS: { fetch: async () => new Response('asset') },
        ...variables,
      };
      const response = await createSiteWorker(() => new MemoryPaymentBook()).fetch(
        new Request(`http://127.0.0.1${resource.path}`),
        env,
      );
      expect(response.status).toBe(500);
      return PaywallErrorBody.parse(await response.json()).message;
    };
    expect(await answer({ EMI_PAYTO: 'NOT-AN-ADDRESS' })).toMatch(
      /^EMI_PAYTO is not a valid Algorand address/,
    );
    expect(await answer({ EMI_NETWORK: 'algorand:nowhere' })).toMatch(
      /^EMI_NETWORK is not a supported network/,
    );
    expect(await answer({ EMI_INDEXER_URL: 'ftp://x' })).toMatch(/^EMI_INDEXER_URL must be http\(s\)/);
  });

  it("the vote route of a Worker with a bad EMI_BASE_URL answers the paywall's 500 naming it, not an unhandled one", async () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      const env = {
        EMI_BASE_URL: 'not a url',
        ARENA_VOTES: { idFromName: () => 'votes', get: () => ({}) },
        ASSETS: { fetch: async () => new Response('asset') },
      };
      const response = await createSiteWorker(() => new MemoryPaymentBook()).fetch(
        new Request('http://127.0.0.1/arena/vote', { method: 'POST', body: '{}' }),
        env,
      );
      expect(response.status).toBe(500);
      expect(response.headers.get('access-control-allow-origin')).toBe('*');
      const body = PaywallErrorBody.parse(await response.json());
      expect(body.error).toBe('paywall_misconfigured');
      expect(body.message).toBe('EMI_BASE_URL is not a URL: "not a url"');
      expect(errors.mock.calls.some((call) => String(call[0]).includes('"unhandled"'))).toBe(false);
    } finally {
      errors.mockRestore();
    }
  });

  const valid = {
    payTo: algosdk.generateAccount().addr.toString(),
    facilitatorUrl: 'http://127.0.0.1:1',
    baseUrl: 'http://127.0.0.1:8080',
    storage: { read: async () => null },
  };

  it('refuses to start with an invalid payee address', () => {
    expect(() => createPaywallApp({ ...valid, payTo: 'NOT-AN-ADDRESS' })).toThrow(PaywallConfigError);
    // Change a character of the public key part: the checksum (last 4 bytes) no longer matches. (The last
    // character is a poor choice: its low bits are base32 padding, so changing it can leave the address valid.)
    const almost = (valid.payTo.startsWith('A') ? 'B' : 'A') + valid.payTo.slice(1);
    expect(() => createPaywallApp({ ...valid, payTo: almost })).toThrow(PaywallConfigError);
  });

  it('refuses an unknown network and non-http URLs; accepts the long network spelling', () => {
    expect(() => createPaywallApp({ ...valid, network: 'eip155:8453' })).toThrow(PaywallConfigError);
    expect(() => createPaywallApp({ ...valid, facilitatorUrl: 'file:///etc' })).toThrow(PaywallConfigError);
    expect(() =>
      createPaywallApp({ ...valid, network: 'algorand:wGHE2Pwdvd7S12BL5FaOP20EGYesN73ktiC1qzkkit8=' }),
    ).not.toThrow();
  });
});
