// Delivery is bound to the settlement of this very payment, and a lost settle answer is reconciled on chain.
// A misbehaving facilitator on loopback (raw node:http, so it can reset a connection) stands in front of the
// development facilitator: it answers success with no transaction or with another payment's (or this payment's
// transaction on another network, or from another payer), settles and then resets the connection, or swallows the
// request. The buyer ends with the file, or with no charge, never neither.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import algosdk from 'algosdk';
import { decodePaymentResponseHeader } from '@x402/core/http';
import type { PaymentPayload } from '@x402/core/types';
import { PaywallErrorBody, PaymentRequiredBody } from '../schemas/paid/payment-required.ts';
import { ALGORAND_MAINNET, ALGORAND_TESTNET } from '../schemas/paid/terms.ts';
import { normalizeNetwork } from '../paywall-worker/network.ts';
import type { PaywallLogEntry } from '../paywall-worker/core/decide.ts';
import { startPaywallServer } from '../paywall-worker/server.ts';
import type { PaywallServer } from '../paywall-worker/server.ts';
import { createFsStorage } from '../paywall-worker/storage-fs.ts';
import {
  fetchChallenge,
  newBuyer,
  paymentHeader,
  resourceById,
  startStack,
  writePaidFixtures,
} from './paywall-harness.ts';
import type { Buyer, Stack } from './paywall-harness.ts';

type SettleMode =
  | 'pass'
  | 'success-no-transaction'
  | 'success-other-transaction'
  | 'success-other-network'
  | 'success-other-payer'
  | 'settle-then-reset'
  | 'swallow'
  | 'failure-with-transaction';

/** The transaction id of the payment in a /settle request body. */
function paymentTxid(body: string): string {
  const { paymentPayload } = JSON.parse(body) as { paymentPayload: PaymentPayload };
  const { paymentGroup, paymentIndex } = paymentPayload.payload as {
    paymentGroup: string[];
    paymentIndex: number;
  };
  return algosdk.decodeSignedTransaction(Buffer.from(paymentGroup[paymentIndex]!, 'base64')).txn.txID();
}

/** The network the payment's requirements name in a /settle request body. */
const offeredNetwork = (body: string): string =>
  (JSON.parse(body) as { paymentRequirements: { network: string } }).paymentRequirements.network;

/** An Algorand network other than `network`. */
const otherNetwork = (network: string): string =>
  normalizeNetwork(network) === ALGORAND_MAINNET ? ALGORAND_TESTNET : ALGORAND_MAINNET;

const otherPayer = algosdk.generateAccount().addr.toString();

/** A facilitator whose /settle lies, resets after settling, or never answers; everything else is forwarded. */
async function startLyingFacilitator(target: string) {
  const state = { settle: 'pass' as SettleMode, settleCalls: 0, otherTransaction: '' };
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const forward = () =>
      fetch(`${target}${req.url}`, {
        method: req.method,
        headers: body ? { 'Content-Type': 'application/json' } : {},
        body: body || undefined,
      });
    const reply = async (response: Response) => {
      res.writeHead(response.status, { 'Content-Type': 'application/json' });
      res.end(await response.text());
    };
    if (req.url !== '/settle' || state.settle === 'pass') return reply(await forward());
    state.settleCalls += 1;
    const network = 'algorand:wGHE2Pwdvd7S12BL5FaOP20EGYesN73k';
    switch (state.settle) {
      case 'success-no-transaction':
        return reply(Response.json({ success: true, transaction: '', network }));
      case 'success-other-transaction':
        return reply(Response.json({ success: true, transaction: state.otherTransaction, network }));
      case 'success-other-network':
      case 'success-other-payer': {
        // This payment's own transaction (never submitted), but on a network it was not offered on, or from
        // another payer: a success about some other payment.
        const offered = offeredNetwork(body);
        return reply(
          Response.json(
            state.settle === 'success-other-network'
              ? { success: true, transaction: paymentTxid(body), network: otherNetwork(offered) }
              : { success: true, transaction: paymentTxid(body), network: offered, payer: otherPayer },
          ),
        );
      }
      case 'settle-then-reset':
        await forward(); // the money moves...
        return req.socket.destroy(); // ...and the answer never arrives
      case 'swallow':
        return; // never answers: the worker times out
      case 'failure-with-transaction':
        // As @x402/avm answers a submitted payment it could not see confirmed: a failure naming the transaction.
        return reply(
          Response.json({
            success: false,
            errorReason: 'invalid_exact_avm_confirmation_failed',
            errorMessage: 'not confirmed in time',
            transaction: paymentTxid(body),
            network,
          }),
        );
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    state,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const resource = resourceById('paidMarketRegime');
let stack: Stack;
let liar: Awaited<ReturnType<typeof startLyingFacilitator>>;
let worker: PaywallServer;
let buyer: Buyer;
const logged: PaywallLogEntry[] = [];

beforeAll(async () => {
  stack = await startStack();
  liar = await startLyingFacilitator(stack.facilitator.url);
  worker = await startPaywallServer(
    {
      port: 0,
      payTo: stack.payTo,
      facilitatorUrl: liar.url,
      facilitatorTimeoutMs: 1500,
      baseUrl: 'http://127.0.0.1:8080',
      storage: createFsStorage(stack.paidDir),
      allowSimulated: true,
      indexerUrl: stack.facilitator.url, // the development facilitator answers indexer look-ups
    },
    { log: (entry) => logged.push(entry) },
  );
  buyer = await newBuyer(stack.facilitator, '5000000');
});
afterEach(() => {
  liar.state.settle = 'pass';
});
afterAll(async () => {
  await worker?.close();
  await liar?.close();
  await stack?.close();
});

const url = () => `${worker.url}${resource.path}`;

async function signed(): Promise<{ payload: PaymentPayload; txid: string }> {
  const { paymentRequired } = await fetchChallenge(url());
  const payload = await buyer.pay(paymentRequired);
  const { paymentGroup, paymentIndex } = payload.payload as { paymentGroup: string[]; paymentIndex: number };
  const txid = algosdk.decodeSignedTransaction(Buffer.from(paymentGroup[paymentIndex]!, 'base64')).txn.txID();
  return { payload, txid };
}

const balance = () => stack.facilitator.ledger.assetBalance(buyer.address);

describe('a settlement must name this payment', () => {
  it.each([
    'success-no-transaction',
    'success-other-transaction',
    'success-other-network',
    'success-other-payer',
  ] as const)('a facilitator answering %s gets no file served, and nothing is charged', async (mode) => {
    const earlier = await signed();
    expect((await fetch(url(), { headers: paymentHeader(earlier.payload) })).status).toBe(200);
    liar.state.otherTransaction = earlier.txid; // another payment's real, confirmed transaction
    liar.state.settle = mode;
    const { payload, txid } = await signed();
    const before = balance();
    const response = await fetch(url(), { headers: paymentHeader(payload) });
    expect(response.status).toBe(502);
    const body = PaywallErrorBody.parse(await response.json());
    expect(body.error).toBe('settlement_not_for_this_payment');
    expect(body.transaction).toBe(txid);
    expect(response.headers.get('PAYMENT-RESPONSE')).toBeNull();
    expect(balance()).toBe(before);
    expect(logged.some((e) => e.event === 'settlement_mismatch' && e.txid === txid)).toBe(true);

    // With an honest facilitator the same payment then settles, exactly once.
    liar.state.settle = 'pass';
    const retry = await fetch(url(), { headers: paymentHeader(payload) });
    expect(retry.status).toBe(200);
    expect(decodePaymentResponseHeader(retry.headers.get('PAYMENT-RESPONSE')!).transaction).toBe(txid);
    expect(before - balance()).toBe(BigInt(resource.amountAtomic));
  });
});

describe('a failed settlement naming the transaction', () => {
  it('is passed on in PAYMENT-RESPONSE, the payment kept for a retry, which settles it once', async () => {
    liar.state.settle = 'failure-with-transaction';
    const { payload, txid } = await signed();
    const before = balance();
    const response = await fetch(url(), { headers: paymentHeader(payload) });
    expect(response.status).toBe(502);
    expect(PaywallErrorBody.parse(await response.json()).transaction).toBe(txid);
    // Before: no PAYMENT-RESPONSE, so an x402 client had no settle result to read.
    expect(decodePaymentResponseHeader(response.headers.get('PAYMENT-RESPONSE')!)).toMatchObject({
      success: false,
      errorReason: 'invalid_exact_avm_confirmation_failed',
      transaction: txid,
    });
    expect(balance()).toBe(before);

    liar.state.settle = 'pass';
    const retry = await fetch(url(), { headers: paymentHeader(payload) });
    expect(retry.status).toBe(200);
    expect(decodePaymentResponseHeader(retry.headers.get('PAYMENT-RESPONSE')!).transaction).toBe(txid);
    expect(before - balance()).toBe(BigInt(resource.amountAtomic));
  });
});

describe('a lost settle answer is reconciled, not released', () => {
  it('settles, loses the answer to a reset, and still serves the file to the charged buyer', async () => {
    liar.state.settle = 'settle-then-reset';
    const { payload, txid } = await signed();
    const before = balance();
    const response = await fetch(url(), { headers: paymentHeader(payload) });
    expect(response.status).toBe(200);
    expect(resource.schema.safeParse(await response.json()).success).toBe(true);
    const settlement = decodePaymentResponseHeader(response.headers.get('PAYMENT-RESPONSE')!);
    expect(settlement).toMatchObject({ success: true, transaction: txid, payer: buyer.address });
    expect(stack.facilitator.ledger.confirmedRound(txid)).toBeDefined();
    expect(before - balance()).toBe(BigInt(resource.amountAtomic));
    expect(logged.some((e) => e.event === 'settle_answer_lost' && e.txid === txid)).toBe(true);

    // The same payment again: the same file and settlement, never a second charge or settle call.
    const calls = liar.state.settleCalls;
    const again = await fetch(url(), { headers: paymentHeader(payload) });
    expect(again.status).toBe(200);
    expect(again.headers.get('PAYMENT-RESPONSE')).toBe(response.headers.get('PAYMENT-RESPONSE'));
    expect(liar.state.settleCalls).toBe(calls);
    expect(before - balance()).toBe(BigInt(resource.amountAtomic));
  });

  it('a payment already made is delivered again even after the file went stale; new sales stop', async () => {
    const { payload } = await signed();
    expect((await fetch(url(), { headers: paymentHeader(payload) })).status).toBe(200);
    await writePaidFixtures(stack.paidDir, 3600); // an hour old: past the 180 s this worker sells
    try {
      const unpaid = await fetch(url());
      expect(unpaid.status).toBe(503);
      expect(PaywallErrorBody.parse(await unpaid.json()).error).toBe('data_stale');
      const fresh = await signed().catch(() => null); // no challenge can be had for stale data
      expect(fresh).toBeNull();
      const again = await fetch(url(), { headers: paymentHeader(payload) });
      expect(again.status).toBe(200);
    } finally {
      await writePaidFixtures(stack.paidDir);
    }
  });

  it('a payment whose settle never landed and whose window passed is refused as not charged', async () => {
    liar.state.settle = 'swallow';
    const { payload, txid } = await signed();
    const before = balance();
    const first = await fetch(url(), { headers: paymentHeader(payload) });
    expect(first.status).toBe(504);
    expect(PaywallErrorBody.parse(await first.json()).transaction).toBe(txid);

    stack.facilitator.ledger.advance(50); // the 10-round validity window is over
    liar.state.settle = 'pass';
    const retry = await fetch(url(), { headers: paymentHeader(payload) });
    expect(retry.status).toBe(402);
    const body = PaymentRequiredBody.parse(await retry.json());
    expect(body.error).toBe('payment_not_settled');
    expect(body.message).toMatch(/you were not charged/);
    expect(decodePaymentResponseHeader(retry.headers.get('PAYMENT-RESPONSE')!)).toMatchObject({
      success: false,
      errorReason: 'payment_not_settled',
      transaction: txid,
    });
    expect(balance()).toBe(before);
  });
});
