// Pins the paywall's reading of a settle call that failed in transit, and of a payment found confirmed after its
// settle answer was lost (rules in paywall-worker/facilitator-errors.ts, core/settle.ts and core/verdict.ts; a
// mutation audit found each of these rules could be broken without a test noticing):
// - a connection refused before the settle request left this machine settled nothing: 503 "Nothing was settled",
//   no transaction named, the payment released (it settles once the facilitator is back);
// - a connection reset after the request was sent may have come after the payment landed: the answer names the
//   transaction and keeps the payment pending, so the buyer's retry collects the file (never "already in the ledger");
// - a confirmation found on chain counts as this paywall's doing when it is younger than the first attempt plus a
//   minute, its age read as rounds times 2.5 s: a buyer retrying minutes later still collects the file;
// - a re-settle on a resumed payment: a verdict ("already in the ledger") proves nothing and the payment stays
//   pending; an answer naming the transaction is passed on as it is.
// Real servers on loopback: the development facilitator and ledger, a facilitator in front of it whose settle can
// fail in transit (and which can stop listening and come back on the same port), an indexer that can be down, and a
// paywall whose clock the test moves and whose log and payment book the test reads.
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import algosdk from 'algosdk';
import { decodePaymentResponseHeader } from '@x402/core/http';
import type { PaymentPayload } from '@x402/core/types';
import { PaywallErrorBody } from '../schemas/paid/payment-required.ts';
import { startDevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import type { DevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import type { PaywallLogEntry } from '../paywall-worker/core/decide.ts';
import { MemoryPaymentBook } from '../paywall-worker/payment-book.ts';
import { startPaywallServer } from '../paywall-worker/server.ts';
import type { PaywallServer } from '../paywall-worker/server.ts';
import { createFsStorage } from '../paywall-worker/storage-fs.ts';
import {
  fetchChallenge,
  newBuyer,
  paymentHeader,
  resourceById,
  startIndexer,
  writePaidFixtures,
} from './paywall-harness.ts';
import type { Buyer } from './paywall-harness.ts';

const resource = resourceById('paidMarketRegime');
const NETWORK = 'algorand:wGHE2Pwdvd7S12BL5FaOP20EGYesN73k';
/** Outside the ephemeral range, so that nothing else takes it while the facilitator is down. */
const FACILITATOR_PORT = 19990;

type SettleMode =
  /** forwarded as it is */
  | 'pass'
  /** submitted, then the connection is reset (TCP RST: the paywall reads ECONNRESET): the answer is lost */
  | 'reset'
  /** submitted, then the connection is closed without an answer: the answer is lost */
  | 'lose'
  /** submitted, then the AVM scheme's failed wait for confirmation, naming the transaction (no verdict) */
  | 'confirmation-failed';

function txidOf(payload: PaymentPayload): string {
  const { paymentGroup, paymentIndex } = payload.payload as { paymentGroup: string[]; paymentIndex: number };
  return algosdk.decodeSignedTransaction(Buffer.from(paymentGroup[paymentIndex]!, 'base64')).txn.txID();
}

/** A facilitator in front of the development one whose settle fails on demand, and which can stop listening. */
async function startFacilitator(target: string) {
  const state = { mode: 'pass' as SettleMode, settleCalls: 0 };
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const forwarded = await fetch(`${target}${req.url}`, {
      method: req.method,
      headers: body ? { 'Content-Type': 'application/json' } : {},
      body: body || undefined,
    });
    const text = await forwarded.text();
    const reply = (status: number, answer: string) => {
      // No kept-alive connection: once it is down, the paywall's next call is refused, never one on a stale socket.
      res.writeHead(status, { 'Content-Type': 'application/json', Connection: 'close' });
      res.end(answer);
    };
    if (req.url !== '/settle') return reply(forwarded.status, text);
    state.settleCalls += 1; // the money moved (or was refused) above, in every mode
    switch (state.mode) {
      case 'pass':
        return reply(forwarded.status, text);
      case 'reset':
        return req.socket.resetAndDestroy();
      case 'lose':
        return req.socket.destroy();
      case 'confirmation-failed': {
        const { paymentPayload } = JSON.parse(body) as { paymentPayload: PaymentPayload };
        return reply(
          200,
          JSON.stringify({
            success: false,
            errorReason: 'invalid_exact_avm_confirmation_failed',
            errorMessage: 'Transaction submitted but confirmation failed: timeout',
            transaction: txidOf(paymentPayload),
            network: NETWORK,
          }),
        );
      }
    }
  });
  const up = () => new Promise<void>((resolve) => server.listen(FACILITATOR_PORT, '127.0.0.1', resolve));
  const down = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  await up();
  return { url: `http://127.0.0.1:${FACILITATOR_PORT}`, state, up, down };
}

/** The real in-memory book, recording what became of each claim that did not end in a delivery. */
class WatchedBook extends MemoryPaymentBook {
  readonly last = new Map<string, 'pending' | 'released'>();
  override release(txid: string): Promise<void> {
    this.last.set(txid, 'released');
    return super.release(txid);
  }
  override pending(txid: string, payment: string, attemptedAt: number, body?: string): Promise<void> {
    this.last.set(txid, 'pending');
    return super.pending(txid, payment, attemptedAt, body);
  }
}

let chain: DevFacilitator;
let facilitator: Awaited<ReturnType<typeof startFacilitator>>;
let indexer: Awaited<ReturnType<typeof startIndexer>>;
let paidDir: string;
let payTo: string;
let buyer: Buyer;
const clock = { offsetMs: 0, now: () => Date.now() + clock.offsetMs };
let paywall: PaywallServer | null = null;
let book: WatchedBook;
let logged: PaywallLogEntry[] = [];

beforeAll(async () => {
  chain = await startDevFacilitator({ port: 0 });
  payTo = algosdk.generateAccount().addr.toString();
  chain.ledger.optIn(payTo);
  paidDir = await mkdtemp(join(tmpdir(), 'emi-pinned-settle-faults-'));
  await writePaidFixtures(paidDir);
  buyer = await newBuyer(chain);
  facilitator = await startFacilitator(chain.url);
  indexer = await startIndexer(chain.url);
});
afterEach(async () => {
  await paywall?.close();
  paywall = null;
  facilitator.state.mode = 'pass';
  indexer.state.down = false;
  clock.offsetMs = 0;
});
afterAll(async () => {
  await facilitator?.down();
  await indexer?.close();
  await chain?.close();
  await rm(paidDir, { recursive: true, force: true });
});

/** A paywall with its own payment book and log, on this test's clock. */
async function startPaywall(): Promise<PaywallServer> {
  book = new WatchedBook(clock.now);
  logged = [];
  paywall = await startPaywallServer(
    {
      port: 0,
      payTo,
      facilitatorUrl: facilitator.url,
      facilitatorTimeoutMs: 1500, // generous: the machine runs other suites in parallel
      baseUrl: 'http://127.0.0.1:8080',
      storage: createFsStorage(paidDir),
      allowSimulated: true,
      indexerUrl: indexer.url,
    },
    { now: clock.now, paymentBook: book, log: (entry) => logged.push(entry) },
  );
  return paywall;
}

const url = () => `${paywall!.url}${resource.path}`;
const pay = async (): Promise<PaymentPayload> => buyer.pay((await fetchChallenge(url())).paymentRequired);
const send = (payment: PaymentPayload) => fetch(url(), { headers: paymentHeader(payment) });
const charged = () => chain.ledger.assetBalance(buyer.address);
const events = () => logged.map((entry) => entry.event);

/** A failed answer that keeps the payment for a retry: no challenge, the transaction named, never the body. */
async function expectKept(response: Response, txid: string) {
  expect(response.status).not.toBe(200);
  expect(response.status).not.toBe(402);
  expect(response.headers.get('PAYMENT-REQUIRED')).toBeNull();
  const body = PaywallErrorBody.parse(await response.json());
  expect(body.transaction).toBe(txid);
  expect(body.message).toMatch(/same PAYMENT-SIGNATURE/);
  expect(book.last.get(txid)).toBe('pending');
  return body;
}

/** A payment whose settle answer was lost (it landed) while the chain could not be asked: charged, kept pending. */
async function lostPayment(mode: SettleMode = 'lose') {
  await startPaywall();
  const payment = await pay();
  const txid = txidOf(payment);
  const before = charged();
  facilitator.state.mode = mode;
  indexer.state.down = true;
  const first = await send(payment);
  await expectKept(first, txid);
  expect(chain.ledger.confirmedRound(txid)).toBeDefined();
  expect(before - charged()).toBe(BigInt(resource.amountAtomic));
  facilitator.state.mode = 'pass';
  return { payment, txid, before, first };
}

describe('a settle call that failed in transit', () => {
  it('refused before it was sent: 503 "Nothing was settled", no transaction, released; the same payment settles later', async () => {
    await startPaywall();
    const payment = await pay(); // the offer (the facilitator's /supported) is known: settle is the next call
    const txid = txidOf(payment);
    const before = charged();
    await facilitator.down();
    try {
      const refused = await send(payment);
      expect(refused.status).toBe(503);
      expect(refused.headers.get('PAYMENT-REQUIRED')).toBeNull();
      const body = PaywallErrorBody.parse(await refused.json());
      expect(body.error).toBe('facilitator_unreachable');
      expect(body.message).toContain('Nothing was settled');
      expect(body.transaction).toBeNull();
      expect(events()).toContain('settle_not_sent');
      expect(events()).not.toContain('settle_answer_lost');
      expect(book.last.get(txid)).toBe('released');
      expect(charged()).toBe(before);
    } finally {
      await facilitator.up();
    }
    const calls = facilitator.state.settleCalls;
    const paid = await send(payment);
    expect(paid.status).toBe(200);
    expect(facilitator.state.settleCalls - calls).toBe(1); // settled now, not reconciled as an earlier try
    expect(events()).not.toContain('settled_after_unknown');
    expect(before - charged()).toBe(BigInt(resource.amountAtomic));
  });

  it('reset after it was sent (the payment landed): the transaction is named and kept; the retry collects the file, charged once', async () => {
    const { payment, txid, before, first } = await lostPayment('reset');
    expect(first.status).toBe(503); // a reset connection reads as unreachable, but not as "nothing was settled"
    expect(events()).toContain('settle_answer_lost');
    expect(events()).not.toContain('settle_not_sent');
    indexer.state.down = false;
    const collected = await send(payment);
    expect(collected.status).toBe(200); // was 402 "already in ledger": the reset taken as nothing sent, released
    expect(decodePaymentResponseHeader(collected.headers.get('PAYMENT-RESPONSE')!)).toMatchObject({
      success: true,
      transaction: txid,
    });
    expect(before - charged()).toBe(BigInt(resource.amountAtomic));
  });
});

describe('a payment found confirmed after its settle answer was lost', () => {
  // The confirmation is about as old as the first attempt: 100 rounds (250 s at the 2.5 s lower bound) after an
  // attempt 200 s ago is within its minute of margin, so it is this paywall's doing and is delivered.
  it('is delivered to the buyer who retries minutes later (200 s, 100 rounds)', async () => {
    const { payment, txid, before } = await lostPayment();
    clock.offsetMs = 200_000;
    chain.ledger.advance(100);
    indexer.state.down = false;
    const collected = await send(payment);
    expect(collected.status).toBe(200); // was 402 payment_already_used, "landed ... before it was presented here"
    expect(decodePaymentResponseHeader(collected.headers.get('PAYMENT-RESPONSE')!).transaction).toBe(txid);
    expect(events()).toContain('reconciled_confirmed');
    expect(events()).not.toContain('confirmed_before_attempt');
    expect(before - charged()).toBe(BigInt(resource.amountAtomic));
  });

  // Dated from the first attempt (kept in the book), not from the retry: ten minutes later the confirmation is ten
  // minutes old, and still this paywall's doing.
  it('is dated from the first attempt, not the retry (10 minutes, 240 rounds)', async () => {
    const { payment, before } = await lostPayment();
    clock.offsetMs = 10 * 60_000;
    chain.ledger.advance(240);
    indexer.state.down = false;
    const collected = await send(payment);
    expect(collected.status).toBe(200);
    expect(before - charged()).toBe(BigInt(resource.amountAtomic));
  });
});

describe('a resumed payment settled again while the chain cannot be asked', () => {
  it('a verdict ("already in the ledger") keeps it pending; an answer naming the transaction is passed on; then it is delivered', async () => {
    const { payment, txid, before } = await lostPayment();
    // Settled again: the development facilitator refuses it with a verdict, which proves nothing on a resume.
    const calls = facilitator.state.settleCalls;
    const unknown = await send(payment);
    expect(facilitator.state.settleCalls - calls).toBe(1);
    expect(events()).toContain('settle_refused');
    expect(unknown.status).toBe(504);
    expect((await expectKept(unknown, txid)).error).toBe('settlement_unknown');
    // Settled again, answered with a failure naming the transaction: that answer, with its PAYMENT-RESPONSE.
    facilitator.state.mode = 'confirmation-failed';
    const unconfirmed = await send(payment);
    expect(unconfirmed.status).toBe(502); // was 504 settlement_unknown, the facilitator's answer dropped
    expect(unconfirmed.headers.get('PAYMENT-RESPONSE')).not.toBeNull();
    expect(decodePaymentResponseHeader(unconfirmed.headers.get('PAYMENT-RESPONSE')!)).toMatchObject({
      success: false,
      errorReason: 'invalid_exact_avm_confirmation_failed',
      transaction: txid,
    });
    expect((await expectKept(unconfirmed, txid)).error).toBe('invalid_exact_avm_confirmation_failed');
    facilitator.state.mode = 'pass';
    indexer.state.down = false;
    const collected = await send(payment);
    expect(collected.status).toBe(200);
    expect(before - charged()).toBe(BigInt(resource.amountAtomic));
  });
});
