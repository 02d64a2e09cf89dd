// A payment id stays with its payment as long as the payment's record does. A payment whose settle answer was lost
// is collected later, and its record (which delivers it again for an hour) starts then, not when it was first sent:
// an id binding that dated from the first send lapsed while the record still delivered, and the official client's
// next call with the same id (a new signature) was charged a second time. The binding is bound anew whenever the
// record is written, so the new signature gets 409 for as long as the first payment can be collected.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryPaymentBook } from '../paywall-worker/payment-book.ts';
import type { DevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import type { PaywallServer } from '../paywall-worker/server.ts';
import { PaywallErrorBody } from '../schemas/paid/payment-required.ts';
import { officialBuyerWithOneId, resourceById, writePaidFixtures } from './paywall-harness.ts';
import { startWorkerBehindProxy } from './publishers-harness.ts';

const MINUTE = 60_000;
type Stack = Awaited<ReturnType<typeof startWorkerBehindProxy>>;
const resource = resourceById('paidMarketRegime');
const PRICE = BigInt(resource.amountAtomic);
let offset = 0;
const clock = () => Date.now() + offset;
let paidDir: string;
let facilitator: DevFacilitator;
let proxy: Stack['proxy'];
let worker: PaywallServer;
let stack: Stack;
const url = () => `${worker.url}${resource.path}`;

beforeAll(async () => {
  paidDir = await mkdtemp(join(tmpdir(), 'emi-id-lifetime-'));
  stack = await startWorkerBehindProxy(paidDir, {
    now: clock,
    paymentBook: new MemoryPaymentBook(clock),
    log: () => undefined,
  });
  ({ facilitator, proxy, worker } = stack);
});
afterAll(async () => {
  await stack?.close();
  await rm(paidDir, { recursive: true, force: true });
});

/** The paid files as of the shifted clock (the worker refuses to sell a file older than its limit). */
const freshFiles = () => writePaidFixtures(paidDir, -offset / 1000);

describe('a payment id collected late', () => {
  it('stays bound while the record delivers: a new signature with it is refused (409), never charged again', async () => {
    await freshFiles();
    const buyer = officialBuyerWithOneId(facilitator, 1_000_000n);
    proxy.state.settle = 'lose-after-submit';
    proxy.state.indexerDown = true;
    const lost = await buyer.fetchWithPayment(url());
    expect(lost.status).toBeGreaterThanOrEqual(500); // the answer was lost: the payment kept pending
    expect(buyer.balance()).toBe(1_000_000n - PRICE);
    proxy.state.settle = 'pass';
    proxy.state.indexerDown = false;
    const [kept] = buyer.sent;
    const sendKept = () => fetch(url(), { headers: { 'PAYMENT-SIGNATURE': kept! } });

    // Collected 40 minutes later: its record (the body it bought) lasts an hour from now.
    offset = 40 * MINUTE;
    await freshFiles();
    expect((await sendKept()).status).toBe(200);

    // 65 minutes after the first send: the record still delivers, and the id still belongs to that payment.
    offset = 65 * MINUTE;
    await freshFiles();
    expect((await sendKept()).status).toBe(200);
    facilitator.ledger.advance(1);
    const second = await buyer.fetchWithPayment(url());
    expect(second.status).toBe(409); // was 200: a second charge
    expect(PaywallErrorBody.parse(await second.json()).error).toBe('payment_id_conflict');
    expect(buyer.balance()).toBe(1_000_000n - PRICE);
    expect((await sendKept()).status).toBe(200);
  }, 60_000);
});

describe('a payment id whose payment is kept pending', () => {
  it('stays bound when a copy without the id rewrites the record: a new signature an hour on is refused', async () => {
    offset = 0;
    await freshFiles();
    const buyer = officialBuyerWithOneId(facilitator, 1_000_000n);
    proxy.state.settle = 'lose-after-submit';
    proxy.state.indexerDown = true; // the outcome stays unknown: the payment is kept pending
    expect((await buyer.fetchWithPayment(url())).status).toBeGreaterThanOrEqual(500);
    expect(buyer.balance()).toBe(1_000_000n - PRICE);
    proxy.state.settle = 'pass';

    // 50 minutes on, the same signed bytes without the id (anyone can rebuild them from the chain): refused, and
    // the pending record is written anew.
    offset = 50 * MINUTE;
    await freshFiles();
    const payload = JSON.parse(Buffer.from(buyer.sent[0]!, 'base64').toString('utf8')) as {
      extensions?: unknown;
    };
    const copy = Buffer.from(JSON.stringify({ ...payload, extensions: {} })).toString('base64');
    expect((await fetch(url(), { headers: { 'PAYMENT-SIGNATURE': copy } })).status).toBe(402);

    // 70 minutes on: the record still holds the payment, so its id still does.
    offset = 70 * MINUTE;
    await freshFiles();
    facilitator.ledger.advance(1);
    const second = await buyer.fetchWithPayment(url());
    expect(second.status).toBe(409); // was 200: a second charge
    expect(buyer.balance()).toBe(1_000_000n - PRICE);
    proxy.state.indexerDown = false;
  }, 60_000);
});
