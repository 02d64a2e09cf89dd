// What the paywall's log says about money: one line per sale and per redelivery, a closing line for a payment first
// logged as unknown and later settled, a refused payment sent again in a loop answered from memory (one settle
// call, one line with a count), a settlement the payment book could not record, and no payer's address.
import algosdk from 'algosdk';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { HTTPFacilitatorClient } from '@x402/core/server';
import type { FacilitatorClient } from '@x402/core/server';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import type { PaymentPayload } from '@x402/core/types';
import { createPaywallApp } from '../paywall-worker/app.ts';
import type { PaywallApp } from '../paywall-worker/app.ts';
import type { PaywallLogEntry } from '../paywall-worker/core/decide.ts';
import { REFUSAL_MEMORY_MS } from '../paywall-worker/core/decide.ts';
import type { DevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import { MemoryPaymentBook } from '../paywall-worker/payment-book.ts';
import type { PaymentBook } from '../paywall-worker/payment-book.ts';
import { newBuyer, paymentHeader, resourceById, startDevSale } from './paywall-harness.ts';
import type { Buyer, DevSale } from './paywall-harness.ts';

const resource = resourceById('paidMarketRegime');
const PORT = 19680;

let devSale: DevSale;
let facilitator: DevFacilitator;
let payTo: string;
let buyer: Buyer;

beforeAll(async () => {
  devSale = await startDevSale(PORT, 'emi-paylogs-');
  ({ facilitator, payTo, buyer } = devSale);
});
afterAll(async () => {
  await devSale?.close();
});
afterEach(() => {
  vi.restoreAllMocks();
});

interface Worker {
  app: PaywallApp;
  logged: PaywallLogEntry[];
  settleCalls: () => number;
  clock: { ms: number };
}

/** The worker on the development facilitator (in this process, no port), its log, its settle calls and its clock. */
function worker(
  options: {
    book?: PaymentBook;
    /** Replaces the facilitator's settle (the real one is `settle`). */
    settle?: (
      settle: FacilitatorClient['settle'],
      ...args: Parameters<FacilitatorClient['settle']>
    ) => ReturnType<FacilitatorClient['settle']>;
  } = {},
): Worker {
  const real = new HTTPFacilitatorClient({ url: facilitator.url });
  let calls = 0;
  const client: FacilitatorClient = {
    verify: (payload, requirements) => real.verify(payload, requirements),
    getSupported: () => real.getSupported(),
    settle: (payload, requirements) => {
      calls += 1;
      const settle = real.settle.bind(real);
      return options.settle ? options.settle(settle, payload, requirements) : settle(payload, requirements);
    },
  };
  const logged: PaywallLogEntry[] = [];
  const clock = { ms: Date.now() };
  const app = createPaywallApp(devSale.config(), {
    facilitatorClient: client,
    paymentBook: options.book,
    log: (entry) => void logged.push(entry),
    now: () => clock.ms,
  });
  return { app, logged, settleCalls: () => calls, clock };
}

async function payFor(app: PaywallApp, who: Buyer = buyer): Promise<PaymentPayload> {
  const challenge = await app.request(resource.path);
  expect(challenge.status).toBe(402);
  return who.pay(decodePaymentRequiredHeader(challenge.headers.get('PAYMENT-REQUIRED')!));
}

const send = (app: PaywallApp, payload: PaymentPayload) =>
  app.request(resource.path, { headers: paymentHeader(payload) });

const events = (logged: PaywallLogEntry[], event: string) => logged.filter((e) => e.event === event);

const txidOf = (response: Response): string =>
  (
    JSON.parse(Buffer.from(response.headers.get('PAYMENT-RESPONSE')!, 'base64').toString()) as {
      transaction: string;
    }
  ).transaction;

describe('sales and redeliveries', () => {
  it('logs one `sold` line per sale (txid, path, amount, payee), written by the default logger', async () => {
    const { app, logged } = worker();
    const payload = await payFor(app);
    const paid = await send(app, payload);
    expect(paid.status).toBe(200);
    const txid = txidOf(paid);
    expect(events(logged, 'sold')).toEqual([
      {
        level: 'info',
        event: 'sold',
        path: resource.path,
        txid,
        amount: payload.accepted.amount,
        pay_to: payTo,
      },
    ]);
  });

  it('logs a redelivery, and the default logger writes both sale lines with their time', async () => {
    const stderr = vi.spyOn(console, 'error').mockImplementation(() => {});
    const app = createPaywallApp(devSale.config(), {});
    const payload = await payFor(app); // the harness's buyer sends a payment id: it may collect its file again
    const first = await send(app, payload);
    const again = await send(app, payload);
    expect([first.status, again.status]).toEqual([200, 200]);
    const lines = stderr.mock.calls.map((args) => JSON.parse(String(args[0])) as Record<string, unknown>);
    const sale = lines.filter((line) => line.event === 'sold' || line.event === 'redelivered');
    expect(sale.map((line) => line.event)).toEqual(['sold', 'redelivered']);
    for (const line of sale) {
      expect(line).toMatchObject({ level: 'info', path: resource.path, txid: txidOf(first) });
      expect(Date.parse(String(line.at))).not.toBeNaN();
    }
  });

  it('closes a payment logged as settlement_unknown when a retry settles it (settled_after_unknown)', async () => {
    let lose = true;
    const { app, logged } = worker({
      settle: (settle, payload, requirements) => {
        if (!lose) return settle(payload, requirements);
        lose = false;
        return Promise.reject(new Error('socket hang up')); // an answer lost before the facilitator submitted
      },
    });
    const payload = await payFor(app);
    const first = await send(app, payload);
    expect(first.status).toBe(502);
    expect(((await first.json()) as { transaction: string | null }).transaction).toBeTruthy();
    expect(events(logged, 'settlement_unknown')).toHaveLength(1);
    const retry = await send(app, payload);
    expect(retry.status).toBe(200);
    const txid = txidOf(retry);
    expect(events(logged, 'settled_after_unknown')).toEqual([
      expect.objectContaining({ level: 'warn', event: 'settled_after_unknown', path: resource.path, txid }),
    ]);
    expect(events(logged, 'sold')).toHaveLength(1);
  });
});

describe('a refused payment sent again in a loop', () => {
  it('is settled once per window and logged once with a count; each answer stays a 402 with a challenge', async () => {
    const { app, logged, settleCalls, clock } = worker();
    const poor = await newBuyer(facilitator, '1'); // 1 atomic unit, the price is 10000
    const payload = await payFor(app, poor);
    const answers: Response[] = [];
    for (let i = 0; i < 25; i++) answers.push(await send(app, payload));
    expect(settleCalls()).toBe(1);
    for (const answer of answers) {
      expect(answer.status).toBe(402);
      expect(answer.headers.get('PAYMENT-REQUIRED')).toBeTruthy();
      const body = (await answer.json()) as { error: string; message: string };
      expect(body.error).toBe('invalid_exact_avm_simulation_failed');
      expect(body.message).toContain(`repeated for ${REFUSAL_MEMORY_MS / 1000} s`);
    }
    expect(events(logged, 'settle_refused')).toHaveLength(1);
    // After the window the facilitator is asked again; the line written says how many it left out.
    clock.ms += REFUSAL_MEMORY_MS;
    const later = await send(app, payload);
    expect(later.status).toBe(402);
    expect(settleCalls()).toBe(2);
    const refusedLines = events(logged, 'settle_refused');
    expect(refusedLines).toHaveLength(2);
    expect(refusedLines[1]).toMatchObject({ suppressed: 24 });
    expect(facilitator.ledger.assetBalance(poor.address)).toBe(1n);
  });

  it('names no payer address in the refusal detail, only the payee', async () => {
    const payer = algosdk.generateAccount().addr.toString();
    const { app, logged } = worker({
      settle: () =>
        Promise.resolve({
          success: false,
          errorReason: 'insufficient_funds',
          errorMessage: `account ${payer} holds 1 of the 10000 to pay ${payTo}`,
          transaction: '',
          network: 'algorand:wGHE2Pwdvd7S12BL5FaOP20EGYesN73ktiC1qzkkit8=',
        }),
    });
    const refused = await send(app, await payFor(app));
    expect(refused.status).toBe(402);
    const [line] = events(logged, 'settle_refused');
    expect(line?.detail).toBe(`insufficient_funds: account [address] holds 1 of the 10000 to pay ${payTo}`);
  });
});

describe('a payment book that cannot write (a full disk)', () => {
  class FullBook extends MemoryPaymentBook {
    override settled(): Promise<void> {
      return Promise.reject(Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' }));
    }
    override pending(): Promise<void> {
      return Promise.reject(Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' }));
    }
  }

  it('logs that the payment settled but was not recorded, with the txid, and the book failure with it', async () => {
    const { app, logged } = worker({ book: new FullBook() });
    const payload = await payFor(app);
    const before = facilitator.ledger.assetBalance(payTo);
    const answer = await send(app, payload);
    expect(answer.status).toBe(503);
    expect(facilitator.ledger.assetBalance(payTo)).toBe(before + BigInt(payload.accepted.amount));
    const body = (await answer.json()) as { error: string; transaction: string | null; message: string };
    expect(body.error).toBe('settlement_not_recorded');
    const txid = body.transaction!;
    const notRecorded = events(logged, 'settled_not_recorded');
    expect(notRecorded).toEqual([expect.objectContaining({ level: 'error', path: resource.path, txid })]);
    expect(notRecorded[0]!.detail).toMatch(/settled.*could not record.*SQLITE_FULL.*same payment/);
    expect(events(logged, 'payment_book_failed')).toEqual([
      expect.objectContaining({ level: 'error', path: resource.path, txid }),
    ]);
    expect(events(logged, 'unhandled')).toEqual([]);
    expect(events(logged, 'sold')).toEqual([]);
  });
});
