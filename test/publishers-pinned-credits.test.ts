// Pins for the publishers' credits that a mutation audit found unguarded.
// 1. A payment whose settle answer was lost is settled again only while the storefront may still sell: once it
//    may not (its last credit withdrawn, or taken by another sale between the availability check and the hold), an
//    unconfirmed payment still inside its validity window is left to expire (504 settlement_unknown), never settled
//    with no credit held (core/settle.ts resume, core/decide.ts claimAndSettle).
// 2. A reservation never resolved (the process died mid-sale) stops counting in balance() after RESERVATION_TTL_MS
//    by itself: the availability check runs before reserve(), the only clean-up, so a storefront with one credit
//    would otherwise say "no credit" for ever.
// 3. The statement: a sale at exactly `since` is in it, and totals read in six-decimal USDC ("0.000050", not "0.50").
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import algosdk from 'algosdk';
import type { PaymentPayload } from '@x402/core/types';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { RESERVATION_TTL_MS } from '../paywall-worker/publishers/credit-ledger.ts';
import { SqliteCreditLedger } from '../paywall-worker/publishers/credit-ledger-sqlite.ts';
import { statementText } from '../paywall-worker/publishers/statement.ts';
import { PaywallErrorBody } from '../schemas/paid/payment-required.ts';
import { fetchChallenge, newBuyer, paymentHeader } from './paywall-harness.ts';
import { account, publisherEntry, sale, startPublisherStack } from './publishers-harness.ts';
import type { PublisherStack } from './publishers-harness.ts';

const reportOf = (id: string) => `/p/${id}/api/x402-atlas-human-report.php`;

/** The last round the signed payment can land in. */
function lastValidOf(payload: PaymentPayload): bigint {
  const { paymentGroup, paymentIndex } = payload.payload as { paymentGroup: string[]; paymentIndex: number };
  const signed = Buffer.from(paymentGroup[paymentIndex]!, 'base64');
  return algosdk.decodeSignedTransaction(signed).txn.lastValid;
}

describe('a lost settle answer while the storefront may no longer sell', () => {
  let stack: PublisherStack;

  beforeAll(async () => {
    stack = await startPublisherStack(
      () => [publisherEntry('gone', account()), publisherEntry('raced', account())],
      { gone: 1, raced: 1 },
    );
  });
  afterEach(() => {
    stack.proxy.state.settle = 'pass';
    vi.restoreAllMocks();
  });
  afterAll(async () => {
    await stack?.close();
  });

  /**
   * Pays `publisher`'s report and loses the settle answer before it reaches the facilitator: the payment is pending
   * in the book, not on chain, and still inside its validity window.
   */
  async function pendingPayment(publisher: string) {
    const buyer = await newBuyer(stack.facilitator);
    const payload = await buyer.pay((await fetchChallenge(stack.url(reportOf(publisher)))).paymentRequired);
    stack.proxy.state.settle = 'lose-unsent';
    const lost = await fetch(stack.url(reportOf(publisher)), { headers: paymentHeader(payload) });
    expect(lost.status).toBeGreaterThanOrEqual(500);
    const txid = PaywallErrorBody.parse(await lost.json()).transaction;
    expect(txid).not.toBeNull();
    expect(stack.facilitator.ledger.confirmedRound(txid!)).toBeUndefined();
    expect(stack.facilitator.ledger.round).toBeLessThan(lastValidOf(payload));
    expect(await stack.ledger.balance(publisher)).toMatchObject({ balance: 1, reserved: 0, sales: 0 });
    stack.proxy.state.settle = 'pass';
    return { buyer, payload, charged: () => stack.facilitator.ledger.assetBalance(buyer.address) };
  }

  /** The retry is answered 504 settlement_unknown; nothing is settled, charged or recorded as a sale. */
  async function expectLeftToExpire(publisher: string, pending: Awaited<ReturnType<typeof pendingPayment>>) {
    const settleCalls = stack.proxy.state.settleCalls;
    const before = pending.charged();
    const retried = await fetch(stack.url(reportOf(publisher)), { headers: paymentHeader(pending.payload) });
    expect(retried.status).toBe(504);
    expect(PaywallErrorBody.parse(await retried.json()).error).toBe('settlement_unknown');
    expect(stack.proxy.state.settleCalls).toBe(settleCalls);
    expect(pending.charged()).toBe(before);
    expect((await stack.ledger.balance(publisher)).sales).toBe(0);
    expect(await stack.ledger.statement(publisher)).toEqual([]);
  }

  it('is not settled again once the last credit is withdrawn', async () => {
    const pending = await pendingPayment('gone');
    await stack.ledger.credit('gone', -1);
    await expectLeftToExpire('gone', pending);
  });

  it('is not settled again when another sale takes the last credit between the availability check and the hold', async () => {
    const pending = await pendingPayment('raced');
    // The availability check sees the credit; another sale holds it before this retry can: the retry's own hold
    // then fails, and that alone must keep the payment from being settled.
    const balance = stack.ledger.balance.bind(stack.ledger);
    let raced = false;
    vi.spyOn(stack.ledger, 'balance').mockImplementationOnce(async (id) => {
      const seen = await balance(id);
      raced = await stack.ledger.reserve(id, 'ANOTHER-SALE');
      return seen;
    });
    await expectLeftToExpire('raced', pending);
    expect(raced).toBe(true); // the other sale held the credit where it was meant to
  });
});

describe('SqliteCreditLedger', () => {
  let dir: string;
  let clock: number;
  let ledger: SqliteCreditLedger;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'emi-pinned-credits-'));
  });
  afterEach(() => ledger?.close());
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const open = (name: string) => {
    clock = Date.parse('2026-11-01T10:00:00Z');
    ledger = new SqliteCreditLedger(join(dir, `${name}.sqlite`), () => clock);
  };

  it('stops counting an unresolved reservation in balance() after its time, with no reserve() in between', async () => {
    open('expiry');
    await ledger.credit('acme', 1);
    expect(await ledger.reserve('acme', 'T1')).toBe(true);
    expect(await ledger.balance('acme')).toMatchObject({ balance: 1, reserved: 1, available: 0 });
    clock += RESERVATION_TTL_MS + 60_000; // the process died mid-sale; eleven minutes later
    expect(await ledger.balance('acme')).toMatchObject({ balance: 1, reserved: 0, available: 1 });
  });

  it('keeps a sale made at exactly `since` in the statement since that time', async () => {
    open('since');
    await ledger.credit('acme', 3);
    await ledger.consume(sale('T1', '2026-11-01T08:59:59.999Z'));
    await ledger.consume(sale('T2', '2026-11-01T09:00:00.000Z'));
    await ledger.consume(sale('T3', '2026-11-01T09:00:00.001Z'));
    const since = await ledger.statement('acme', '2026-11-01T09:00:00.000Z');
    expect(since.map((s) => s.transaction)).toEqual(['T2', 'T3']);
  });
});

describe('statement text', () => {
  it('writes the total of a 50-atomic-unit sale as 0.000050 USDC', () => {
    const lines = statementText('acme', [{ ...sale('T1', '2026-11-01T10:00:00.000Z'), amountAtomic: '50' }]);
    expect(lines.at(-1)).toBe(
      '1 sale(s), 0.000050 USDC paid directly to the publisher, 1 credit(s) consumed',
    );
  });
});
