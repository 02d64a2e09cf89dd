// Settle answers that read as "nothing happened" after the facilitator did submit the payment, and a payment another
// request holds. The money rules: a charged buyer always ends with the file (or a payment kept to collect it with),
// never a challenge to pay again. The paywall runs as `emi paywall` runs it with a configured facilitator
// (createLocalPaywall: the SQLite payment book in a state folder), on loopback, in front of a facilitator that
// forwards to the development facilitator and then misbehaves, and an indexer that can be down. Buyers pay with the
// official @x402/fetch client (or the official x402Client where a payment must be built by hand).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import algosdk from 'algosdk';
import { wrapFetchWithPayment } from '@x402/fetch';
import { decodePaymentResponseHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentPayload } from '@x402/core/types';
import { PaywallErrorBody } from '../schemas/paid/payment-required.ts';
import { paymentIdOf } from '../schemas/paid/payment-identifier.ts';
import { startDevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import type { DevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import { createLocalPaywall } from '../paywall-worker/local.ts';
import type { LocalPaywall } from '../paywall-worker/local.ts';
import { listen } from '../paywall-worker/node-listen.ts';
import { presentationOf } from '../paywall-worker/payment-book.ts';
import { SqlitePaymentBook } from '../paywall-worker/payment-book-sqlite.ts';
import { signedPaymentOf } from '../paywall-worker/core/group-policy.ts';
import { REFUSAL_MEMORY_MS } from '../paywall-worker/core/decide.ts';
import { createDevBuyer } from '../paywall-worker/buy.ts';
import {
  fetchChallenge,
  newBuyer,
  resourceById,
  startIndexer,
  writePaidFixtures,
} from './paywall-harness.ts';

const resource = resourceById('paidMarketRegime');
const NETWORK = 'algorand:wGHE2Pwdvd7S12BL5FaOP20EGYesN73k';
/** Algorand mainnet as the exact scheme's document writes it (the whole genesis hash). */
const LONG_NETWORK = 'algorand:wGHE2Pwdvd7S12BL5FaOP20EGYesN73ktiC1qzkkit8=';
const OTHER_TXID = 'X'.repeat(52);

type Mode =
  /** forwarded as it is */
  | 'pass'
  /**
   * submitted, then x402's `settlement_pending` naming the transaction; a later call for the same payment gets the
   * development facilitator's own answer ("already in the ledger", naming no transaction), as an AVM facilitator
   * without a store of pending transactions answers the official resource server's retry
   */
  | 'pending'
  /** submitted, then HTTP 500 with a failed SettleResponse naming no transaction */
  | 'error500'
  /** submitted, then HTTP 200 with a failed SettleResponse naming no transaction, for no x402 verdict */
  | 'failed200'
  /** the development facilitator's answer, with HTTP 500 when it is a refusal (a facilitator that says so) */
  | 'refuse500'
  /**
   * not forwarded: the official AVM scheme's answer when its submit is rejected (a copy of a payment already in
   * algod's pool or ledger), which names the transaction
   */
  | 'submit-rejected'
  /** submitted, then the official AVM scheme's answer when the wait for confirmation fails (naming the transaction) */
  | 'confirmation-failed'
  /** submitted, then the confirmation-failed answer naming ANOTHER transaction (a confused or lying facilitator) */
  | 'confirmation-failed-other'
  /** forwarded, with the network in the long CAIP-2 form (the scheme document's own spelling) */
  | 'long-network'
  /** submitted, then the connection is reset: the answer is lost */
  | 'lose'
  /** waits until the test opens the gate, then forwarded */
  | 'hold';

/** The transaction id of the payment in a /settle request body. */
function paymentTxid(body: string): string {
  const { paymentPayload } = JSON.parse(body) as { paymentPayload: PaymentPayload };
  return txidOf(paymentPayload);
}

function txidOf(payload: PaymentPayload): string {
  const { paymentGroup, paymentIndex } = payload.payload as { paymentGroup: string[]; paymentIndex: number };
  return algosdk.decodeSignedTransaction(Buffer.from(paymentGroup[paymentIndex]!, 'base64')).txn.txID();
}

/** A facilitator in front of the development one whose settle misbehaves after (or before) forwarding. */
async function startFacilitator(target: string) {
  const state = {
    mode: 'pass' as Mode,
    settleCalls: 0,
    /** payments answered settlement_pending once */
    pending: new Set<string>(),
    gate: null as null | {
      reached: Promise<void>;
      open: () => void;
      arrive: () => void;
      opened: Promise<void>;
    },
  };
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const forward = async () => {
      const response = await fetch(`${target}${req.url}`, {
        method: req.method,
        headers: body ? { 'Content-Type': 'application/json' } : {},
        body: body || undefined,
      });
      return { status: response.status, text: await response.text() };
    };
    const reply = (status: number, text: string) => {
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(text);
    };
    if (req.url !== '/settle') {
      const answer = await forward();
      return reply(answer.status, answer.text);
    }
    state.settleCalls += 1;
    const mode = state.mode;
    if (mode === 'hold' && state.gate) {
      state.gate.arrive();
      await state.gate.opened;
    }
    if (mode === 'submit-rejected') {
      return reply(
        200,
        JSON.stringify({
          success: false,
          errorReason: 'invalid_exact_avm_settlement_failed',
          errorMessage: 'Failed to submit transaction: transaction already in ledger',
          transaction: paymentTxid(body),
          network: NETWORK,
        }),
      );
    }
    const answer = await forward(); // the money moves in every other mode
    switch (mode) {
      case 'pass':
      case 'hold':
        return reply(answer.status, answer.text);
      case 'pending': {
        if (state.pending.has(paymentTxid(body))) return reply(answer.status, answer.text);
        state.pending.add(paymentTxid(body));
        const settled = JSON.parse(answer.text) as { transaction: string; payer?: string };
        return reply(
          200,
          JSON.stringify({
            success: false,
            errorReason: 'settlement_pending',
            errorMessage: 'submitted, not final yet',
            transaction: settled.transaction || paymentTxid(body),
            network: NETWORK,
            payer: settled.payer,
          }),
        );
      }
      case 'error500':
        return reply(
          500,
          JSON.stringify({
            success: false,
            errorReason: 'unexpected_settle_error',
            errorMessage: 'internal',
            transaction: '',
            network: NETWORK,
          }),
        );
      case 'failed200':
        return reply(
          200,
          JSON.stringify({
            success: false,
            errorReason: 'unexpected_settle_error',
            errorMessage: 'internal',
            transaction: '',
            network: NETWORK,
          }),
        );
      case 'confirmation-failed':
        return reply(
          200,
          JSON.stringify({
            success: false,
            errorReason: 'invalid_exact_avm_confirmation_failed',
            errorMessage: 'Transaction submitted but confirmation failed: timeout',
            transaction: paymentTxid(body),
            network: NETWORK,
          }),
        );
      case 'confirmation-failed-other':
        return reply(
          200,
          JSON.stringify({
            success: false,
            errorReason: 'invalid_exact_avm_confirmation_failed',
            errorMessage: 'Transaction submitted but confirmation failed: timeout',
            transaction: OTHER_TXID,
            network: NETWORK,
          }),
        );
      case 'long-network':
        return reply(answer.status, JSON.stringify({ ...JSON.parse(answer.text), network: LONG_NETWORK }));
      case 'refuse500':
        return reply(
          (JSON.parse(answer.text) as { success: boolean }).success ? answer.status : 500,
          answer.text,
        );
      case 'lose':
        return req.socket.destroy();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    state,
    /** The next settle waits until `open()`; `reached` resolves once it has arrived. */
    hold() {
      let arrive!: () => void;
      let open!: () => void;
      const reached = new Promise<void>((resolve) => (arrive = resolve));
      const opened = new Promise<void>((resolve) => (open = resolve));
      state.mode = 'hold';
      state.gate = { reached, open, arrive, opened };
      return state.gate;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let chain: DevFacilitator;
let facilitator: Awaited<ReturnType<typeof startFacilitator>>;
let indexer: Awaited<ReturnType<typeof startIndexer>>;
let dir: string;
let payTo: string;
let bookFile: string;
let paywall: { local: LocalPaywall; url: string; close(): Promise<void> };

/** The paywall as `emi paywall` runs it with a configured facilitator: its payment book a SQLite file. */
async function startPaywall(book: string) {
  const local = await createLocalPaywall({
    paidDir: join(dir, 'paid'),
    baseUrl: 'http://127.0.0.1:8080',
    payTo,
    facilitatorUrl: facilitator.url,
    facilitatorTimeoutMs: 1500,
    indexerUrl: indexer.url,
    allowSimulated: true, // the fixtures are the simulated examples
    paymentBookFile: book,
  });
  const server = await listen(local.app, 0, '127.0.0.1');
  return {
    local,
    url: `http://127.0.0.1:${server.port}`,
    close: async () => {
      await server.close();
      await local.close();
    },
  };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'emi-settle-answers-'));
  await mkdir(join(dir, 'paid'));
  await writePaidFixtures(join(dir, 'paid'));
  chain = await startDevFacilitator({ port: 0 }); // stands in for the chain behind a configured facilitator
  payTo = algosdk.generateAccount().addr.toString();
  chain.ledger.optIn(payTo);
  facilitator = await startFacilitator(chain.url);
  indexer = await startIndexer(chain.url);
  bookFile = join(dir, 'state', 'payments.sqlite');
  paywall = await startPaywall(bookFile);
});
afterEach(async () => {
  facilitator.state.mode = 'pass';
  facilitator.state.gate?.open();
  facilitator.state.gate = null;
  indexer.state.down = false;
  await writePaidFixtures(join(dir, 'paid'));
});
afterAll(async () => {
  await paywall?.close();
  await facilitator?.close();
  await indexer?.close();
  await chain?.close();
  await rm(dir, { recursive: true, force: true });
});

const url = () => `${paywall.url}${resource.path}`;

/** A buyer with the official @x402/fetch client (payment-identifier ids, as `emi buy`), recording what it sends. */
async function officialBuyer() {
  const { address, client } = await createDevBuyer(chain.url, '1000000');
  const sent: string[] = [];
  const spy: typeof fetch = async (input, init) => {
    const request = new Request(input as RequestInfo, init);
    const signature = request.headers.get('PAYMENT-SIGNATURE');
    if (signature) sent.push(signature);
    return fetch(request);
  };
  return {
    address,
    pay: wrapFetchWithPayment(spy, client),
    /** The PAYMENT-SIGNATURE it sent (the payment a careful client keeps and sends again). */
    signature: () => {
      expect(sent).toHaveLength(1);
      return sent[0]!;
    },
    balance: () => chain.ledger.assetBalance(address),
  };
}

const sendAgain = (signature: string) => fetch(url(), { headers: { 'PAYMENT-SIGNATURE': signature } });

/** A failed answer that keeps the payment for a retry: no challenge, the transaction named, never the body. */
async function expectKept(response: Response, txid: string) {
  expect(response.status).not.toBe(200);
  expect(response.status).not.toBe(402);
  expect(response.headers.get('PAYMENT-REQUIRED')).toBeNull();
  const body = PaywallErrorBody.parse(await response.json());
  expect(body.transaction).toBe(txid);
  expect(body.message).toMatch(/same PAYMENT-SIGNATURE/);
  return body;
}

describe("x402's settlement_pending (submitted, not final yet)", () => {
  it('is reconciled on chain, never settled a second time and read as a refusal: the official client gets the file', async () => {
    facilitator.state.mode = 'pending';
    const buyer = await officialBuyer();
    const before = buyer.balance();
    const paid = await buyer.pay(url());
    expect(paid.status).toBe(200); // was 402: the SDK settled again, "already in ledger" read as a refusal
    const body = await paid.text();
    expect(resource.schema.safeParse(JSON.parse(body)).success).toBe(true);
    expect(facilitator.state.settleCalls).toBeGreaterThan(0);
    const calls = facilitator.state.settleCalls;
    expect(before - buyer.balance()).toBe(BigInt(resource.amountAtomic));
    // The same payment again: the same body, no call to settle, no second charge.
    const again = await sendAgain(buyer.signature());
    expect(again.status).toBe(200);
    expect(await again.text()).toBe(body);
    expect(facilitator.state.settleCalls).toBe(calls);
    expect(before - buyer.balance()).toBe(BigInt(resource.amountAtomic));
  });

  it('asks the facilitator to settle once per request (the SDK retry gets the first answer again)', async () => {
    facilitator.state.mode = 'pending';
    indexer.state.down = true;
    const calls = facilitator.state.settleCalls;
    const buyer = await officialBuyer();
    const first = await buyer.pay(url());
    expect(facilitator.state.settleCalls - calls).toBe(1);
    const txid = txidOf(JSON.parse(Buffer.from(buyer.signature(), 'base64').toString()) as PaymentPayload);
    const body = await expectKept(first, txid);
    expect(first.status).toBe(502);
    expect(body.error).toBe('settlement_pending');
    expect(decodePaymentResponseHeader(first.headers.get('PAYMENT-RESPONSE')!)).toMatchObject({
      success: false,
      errorReason: 'settlement_pending',
      transaction: txid,
    });
  });

  it('keeps the payment while the chain cannot be asked; the same payment collects the file, charged once', async () => {
    facilitator.state.mode = 'pending';
    indexer.state.down = true;
    const buyer = await officialBuyer();
    const before = buyer.balance();
    const first = await buyer.pay(url());
    const txid = txidOf(JSON.parse(Buffer.from(buyer.signature(), 'base64').toString()) as PaymentPayload);
    await expectKept(first, txid);
    expect(before - buyer.balance()).toBe(BigInt(resource.amountAtomic)); // charged, no file yet
    // Retried while the chain still cannot be asked: still kept, never released as refused.
    facilitator.state.mode = 'pass';
    await expectKept(await sendAgain(buyer.signature()), txid);
    indexer.state.down = false;
    const collected = await sendAgain(buyer.signature());
    expect(collected.status).toBe(200);
    expect(decodePaymentResponseHeader(collected.headers.get('PAYMENT-RESPONSE')!)).toMatchObject({
      success: true,
      transaction: txid,
    });
    expect(before - buyer.balance()).toBe(BigInt(resource.amountAtomic));
  });
});

describe('a facilitator failing after it submitted the payment', () => {
  it.each(['error500', 'failed200', 'confirmation-failed'] as const)(
    '%s: the chain shows the payment, so the official client gets the file, charged once',
    async (mode) => {
      facilitator.state.mode = mode;
      const buyer = await officialBuyer();
      const before = buyer.balance();
      const paid = await buyer.pay(url());
      expect(paid.status).toBe(200); // was 402 telling the charged buyer to pay again
      expect(resource.schema.safeParse(await paid.json()).success).toBe(true);
      const txid = txidOf(JSON.parse(Buffer.from(buyer.signature(), 'base64').toString()) as PaymentPayload);
      expect(decodePaymentResponseHeader(paid.headers.get('PAYMENT-RESPONSE')!)).toMatchObject({
        success: true,
        transaction: txid,
        payer: buyer.address,
      });
      expect(before - buyer.balance()).toBe(BigInt(resource.amountAtomic));
    },
  );

  it.each(['error500'] as const)(
    '%s while the chain cannot be asked: the payment is kept (no challenge), and delivered on its retry',
    async (mode) => {
      facilitator.state.mode = mode;
      indexer.state.down = true;
      const buyer = await officialBuyer();
      const before = buyer.balance();
      const first = await buyer.pay(url());
      const txid = txidOf(JSON.parse(Buffer.from(buyer.signature(), 'base64').toString()) as PaymentPayload);
      await expectKept(first, txid);
      expect(before - buyer.balance()).toBe(BigInt(resource.amountAtomic));
      facilitator.state.mode = 'pass';
      indexer.state.down = false;
      const collected = await sendAgain(buyer.signature());
      expect(collected.status).toBe(200);
      expect(before - buyer.balance()).toBe(BigInt(resource.amountAtomic));
    },
  );

  it('a failed answer naming another transaction is not passed on as the buyer’s: the body names the payment', async () => {
    facilitator.state.mode = 'confirmation-failed-other';
    indexer.state.down = true; // the outcome cannot be found out: the answer is the worker's word alone
    const buyer = await officialBuyer();
    const first = await buyer.pay(url());
    const txid = txidOf(JSON.parse(Buffer.from(buyer.signature(), 'base64').toString()) as PaymentPayload);
    await expectKept(first, txid);
    expect(first.headers.get('PAYMENT-RESPONSE')).toBeNull(); // was the facilitator's, naming OTHER_TXID
  });

  it('an honest refusal (nothing submitted, absent from the chain) stays a 402 with its reason, and is released', async () => {
    const buyer = await newBuyer(chain, '1'); // cannot pay the price: the facilitator refuses before submitting
    const { paymentRequired } = await fetchChallenge(url());
    const payment = await buyer.pay(paymentRequired);
    const header = { 'PAYMENT-SIGNATURE': encodePaymentSignatureHeader(payment) };
    const refused = await fetch(url(), { headers: header });
    expect(refused.status).toBe(402);
    expect(refused.headers.get('PAYMENT-REQUIRED')).not.toBeNull();
    const settlement = decodePaymentResponseHeader(refused.headers.get('PAYMENT-RESPONSE')!);
    expect(settlement).toMatchObject({ success: false, transaction: '' });
    expect((await refused.json()).error).toBe(settlement.errorReason);
    // Released: once the buyer can pay, the same payment is settled (once), after the refusal's short memory.
    chain.ledger.fund(buyer.address, 1_000_000n);
    const before = chain.ledger.assetBalance(buyer.address);
    const remembered = await fetch(url(), { headers: header });
    expect(remembered.status).toBe(402);
    expect(chain.ledger.assetBalance(buyer.address)).toBe(before);
    const realNow = Date.now;
    vi.spyOn(Date, 'now').mockImplementation(() => realNow() + REFUSAL_MEMORY_MS);
    const paid = await fetch(url(), { headers: header }).finally(() => vi.restoreAllMocks());
    expect(paid.status).toBe(200);
    expect(before - chain.ledger.assetBalance(buyer.address)).toBe(BigInt(resource.amountAtomic));
  });

  // The facilitator's refusal is trusted, as its success is: the chain is asked only when an answer is lost. A copy of
  // a payment rebuilt from the chain is refused by an honest facilitator ("already in the ledger"), and asking the
  // chain then would show the payment landed, in the very round the copy came in: it bought nothing here.
  it.each(['pass', 'refuse500', 'submit-rejected'] as const)(
    'a copy of a payment that just landed, sent to a paywall whose book never saw it, buys nothing (%s)',
    async (mode) => {
      const buyer = await officialBuyer();
      expect((await buyer.pay(url())).status).toBe(200);
      const other = await startPaywall(join(dir, `copy-${mode}`, 'payments.sqlite'));
      try {
        facilitator.state.mode = mode;
        const copy = await fetch(`${other.url}${resource.path}`, {
          headers: { 'PAYMENT-SIGNATURE': buyer.signature() },
        });
        expect(copy.status).toBe(402);
        expect(copy.headers.get('PAYMENT-REQUIRED')).not.toBeNull();
        expect((await copy.text()).includes('"metadata"')).toBe(false); // no paid body
      } finally {
        await other.close();
      }
    },
  );

  it('a refusal of a payment that landed before it was presented (to another payment book) delivers nothing', async () => {
    const buyer = await officialBuyer();
    expect((await buyer.pay(url())).status).toBe(200);
    chain.ledger.advance(10); // about half a minute of rounds later
    const other = await startPaywall(join(dir, 'other-state', 'payments.sqlite'));
    try {
      // The honest facilitator refuses it (already in the ledger), and its refusal stands.
      const replayed = await fetch(`${other.url}${resource.path}`, {
        headers: { 'PAYMENT-SIGNATURE': buyer.signature() },
      });
      expect(replayed.status).toBe(402);
      expect((await replayed.json()).message).toMatch(/already in ledger/);
    } finally {
      await other.close();
    }
  });
});

describe("the settlement's network", () => {
  it('is passed on in the offers’ spelling whatever form the facilitator wrote it in, and kept so for redelivery', async () => {
    facilitator.state.mode = 'long-network';
    const buyer = await officialBuyer();
    const paid = await buyer.pay(url());
    expect(paid.status).toBe(200);
    const answer = decodePaymentResponseHeader(paid.headers.get('PAYMENT-RESPONSE')!);
    expect(answer).toMatchObject({ success: true, network: NETWORK }); // was LONG_NETWORK
    const offered = (await fetchChallenge(url())).paymentRequired.accepts[0]?.network;
    expect(answer.network).toBe(offered);
    const again = await sendAgain(buyer.signature());
    expect(decodePaymentResponseHeader(again.headers.get('PAYMENT-RESPONSE')!).network).toBe(NETWORK);
  });
});

describe('a payment another request is processing', () => {
  it('answers 503 payment_in_progress with Retry-After and no challenge: nobody is invited to pay again', async () => {
    const gate = facilitator.hold();
    const buyer = await officialBuyer();
    const before = buyer.balance();
    const first = buyer.pay(url());
    await gate.reached;
    const signature = buyer.signature();
    const txid = txidOf(JSON.parse(Buffer.from(signature, 'base64').toString()) as PaymentPayload);

    const duplicate = await sendAgain(signature);
    expect(duplicate.status).toBe(503); // was a 402 with a full PAYMENT-REQUIRED and "Pay exactly ..."
    expect(duplicate.headers.get('Retry-After')).toBe('30');
    expect(duplicate.headers.get('PAYMENT-REQUIRED')).toBeNull();
    expect(duplicate.headers.get('PAYMENT-RESPONSE')).toBeNull();
    const body = PaywallErrorBody.parse(await duplicate.json());
    expect(body).toMatchObject({ error: 'payment_in_progress', transaction: txid, retry_after_seconds: 30 });
    expect(body.message).toMatch(/Do not sign a new payment/);

    // The official client sent the same payment again gets that answer back (on a 402 it signed a new payment
    // and threw "Payment already attempted").
    const { client } = await createDevBuyer(chain.url, '0');
    const official = await wrapFetchWithPayment(fetch, client)(url(), {
      headers: { 'PAYMENT-SIGNATURE': signature },
    });
    expect(official.status).toBe(503);

    gate.open();
    expect((await first).status).toBe(200);
    expect(before - buyer.balance()).toBe(BigInt(resource.amountAtomic));
  });

  it('a claim left by a worker stopped mid-settle answers 503 until its lease lapses, then delivers the body it offered', async () => {
    // A worker claimed the payment, the facilitator settled it, and the worker stopped before answering.
    const buyer = await newBuyer(chain);
    const { paymentRequired } = await fetchChallenge(url());
    const payment = await buyer.pay(paymentRequired);
    const { paymentGroup, paymentIndex } = payment.payload as {
      paymentGroup: string[];
      paymentIndex: number;
    };
    const signed = signedPaymentOf(paymentGroup[paymentIndex])!;
    const id = paymentIdOf(payment.extensions);
    const presentation = presentationOf(signed.signedPayment, 'error' in id ? null : id.id);
    const offered = await readFile(join(dir, 'paid', resource.file), 'utf8');
    let seedNow = Date.now() - 30_000;
    const crashed = new SqlitePaymentBook(bookFile, () => seedNow);
    try {
      expect(await crashed.claim(signed.txid, presentation, offered)).toEqual({ state: 'claimed' });
      const settled = await fetch(`${chain.url}/settle`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          x402Version: 2,
          paymentPayload: payment,
          paymentRequirements: payment.accepted,
        }),
      });
      expect(((await settled.json()) as { success: boolean }).success).toBe(true);
      const header = { 'PAYMENT-SIGNATURE': encodePaymentSignatureHeader(payment) };

      const during = await fetch(url(), { headers: header });
      expect(during.status).toBe(503); // was a 402 with a challenge, for two minutes, to a charged buyer
      expect(during.headers.get('PAYMENT-REQUIRED')).toBeNull();
      expect(during.headers.get('Retry-After')).toBe('30');
      expect(PaywallErrorBody.parse(await during.json())).toMatchObject({
        error: 'payment_in_progress',
        transaction: signed.txid,
      });

      // The claim is two minutes old (the lease lapsed), and the file moved to a newer generation meanwhile.
      await crashed.release(signed.txid);
      seedNow = Date.now() - 121_000;
      await crashed.claim(signed.txid, presentation, offered);
      await writePaidFixtures(join(dir, 'paid'), -30);
      const after = await fetch(url(), { headers: header });
      expect(after.status).toBe(200);
      expect(await after.text()).toBe(offered); // the body it was offered, not the file as it is now
      expect(decodePaymentResponseHeader(after.headers.get('PAYMENT-RESPONSE')!)).toMatchObject({
        success: true,
        transaction: signed.txid,
      });
    } finally {
      crashed.close();
    }
  });
});

describe('a payment whose settle answer was lost is delivered the body it was offered', () => {
  /** A payment whose settle answer is lost while the chain cannot be asked: charged, kept pending. */
  async function lostPayment() {
    facilitator.state.mode = 'lose';
    indexer.state.down = true;
    const buyer = await officialBuyer();
    const before = buyer.balance();
    const offered = await readFile(join(dir, 'paid', resource.file), 'utf8');
    const first = await buyer.pay(url());
    const txid = txidOf(JSON.parse(Buffer.from(buyer.signature(), 'base64').toString()) as PaymentPayload);
    await expectKept(first, txid);
    expect(before - buyer.balance()).toBe(BigInt(resource.amountAtomic));
    facilitator.state.mode = 'pass';
    indexer.state.down = false;
    return { buyer, before, offered, txid };
  }

  it('after the file turned future-dated (not for sale): the body of its generation, not the current file', async () => {
    const { buyer, before, offered } = await lostPayment();
    await writePaidFixtures(join(dir, 'paid'), -20 * 60); // dated 20 minutes ahead: not for sale
    const unpaid = await fetch(url());
    expect(unpaid.status).toBe(503);
    expect(PaywallErrorBody.parse(await unpaid.json()).error).toBe('data_stale');
    const collected = await sendAgain(buyer.signature());
    expect(collected.status).toBe(200);
    expect(await collected.text()).toBe(offered); // was the future-dated file, which is not for sale
    expect(before - buyer.balance()).toBe(BigInt(resource.amountAtomic));
  });

  it('while the paid file is missing: the body it was offered, kept by the payment book', async () => {
    const { buyer, before, offered } = await lostPayment();
    await rm(join(dir, 'paid', resource.file));
    const unpaid = await fetch(url());
    expect(unpaid.status).toBe(503);
    expect(PaywallErrorBody.parse(await unpaid.json()).error).toBe('paid_resource_unavailable');
    const collected = await sendAgain(buyer.signature());
    expect(collected.status).toBe(200); // was 503 until the file came back
    expect(await collected.text()).toBe(offered);
    const again = await sendAgain(buyer.signature());
    expect(again.status).toBe(200);
    expect(await again.text()).toBe(offered);
    expect(before - buyer.balance()).toBe(BigInt(resource.amountAtomic));
  });
});
