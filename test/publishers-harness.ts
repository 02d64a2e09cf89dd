// Set-up for the publisher programme's end-to-end tests: the development facilitator (official @x402/avm
// facilitator scheme, in-memory ledger) behind a proxy whose settle can fail or lose its answer on demand, the
// worker with publisher sale points and credit hooks on a SQLite ledger, the operator's and publishers' addresses
// opted in, and the paid fixtures.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import algosdk from 'algosdk';
import { Hono } from 'hono';
import type { PaywallLogEntry } from '../paywall-worker/core/decide.ts';
import { startDevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import type { DevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import { listen } from '../paywall-worker/node-listen.ts';
import { SqlitePaymentBook } from '../paywall-worker/payment-book-sqlite.ts';
import type { PaywallAppOptions } from '../paywall-worker/app.ts';
import { startPaywallServer } from '../paywall-worker/server.ts';
import type { PaywallServer } from '../paywall-worker/server.ts';
import { createFsStorage } from '../paywall-worker/storage-fs.ts';
import { parsePublishers } from '../paywall-worker/publishers/config.ts';
import type { Publisher, PublisherInput } from '../paywall-worker/publishers/config.ts';
import type { SaleRecord } from '../paywall-worker/publishers/credit-ledger.ts';
import { SqliteCreditLedger } from '../paywall-worker/publishers/credit-ledger-sqlite.ts';
import { creditHooks, publisherSalePoints } from '../paywall-worker/publishers/sale-points.ts';
import { writePaidFixtures } from './paywall-harness.ts';

/**
 * How the proxy treats settle: pass it on; refuse it without submitting; lose the answer without passing it on
 * (a 500 after the request may have arrived); or pass it on and then lose the answer.
 */
export type SettleMode = 'pass' | 'refuse' | 'lose-unsent' | 'lose-after-submit';

/** Holds every settle that arrives until `open()` (or, so that a failing test ends, until `timeoutMs`). */
export function settleHold(timeoutMs = 20_000) {
  let arrive = () => {};
  let open = () => {};
  const arrived = new Promise<void>((resolve) => (arrive = resolve));
  const opened = new Promise<void>((resolve) => {
    open = resolve;
    setTimeout(resolve, timeoutMs).unref();
  });
  return { arrive, arrived, open, opened };
}
export type SettleHold = ReturnType<typeof settleHold>;

export async function startSettleProxy(target: string) {
  const state = {
    settle: 'pass' as SettleMode,
    settleCalls: 0,
    indexerDown: false,
    hold: null as SettleHold | null,
  };
  const app = new Hono();
  app.get('/supported', () => fetch(`${target}/supported`));
  // The indexer look-ups the worker reconciles lost answers with; `indexerDown` makes them fail.
  for (const path of ['/v2/transactions/:txid', '/health']) {
    app.get(path, (c) =>
      state.indexerDown ? c.json({ message: 'unavailable' }, 503) : fetch(`${target}${c.req.path}`),
    );
  }
  const forward = async (op: string, body: string) =>
    fetch(`${target}/${op}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
  app.post('/verify', async (c) => forward('verify', await c.req.text()));
  app.post('/settle', async (c) => {
    state.settleCalls += 1;
    const body = await c.req.text();
    if (state.hold) {
      state.hold.arrive();
      await state.hold.opened;
    }
    switch (state.settle) {
      case 'pass':
        return forward('settle', body);
      case 'refuse':
        return c.json(
          {
            success: false,
            errorReason: 'insufficient_funds',
            errorMessage: 'refused by the test facilitator',
            transaction: '',
            network: 'algorand:wGHE2Pwdvd7S12BL5FaOP20EGYesN73k',
          },
          200,
        );
      case 'lose-unsent':
        return c.json({ error: 'internal failure' }, 500);
      case 'lose-after-submit':
        await forward('settle', body);
        return c.json({ error: 'internal failure' }, 500);
    }
  });
  const listening = await listen(app, 0, '127.0.0.1');
  return { url: `http://127.0.0.1:${listening.port}`, state, close: listening.close };
}

/**
 * `emi paywall`'s worker (startPaywallServer) selling the simulated fixtures in `paidDir`, behind a settle proxy
 * (startSettleProxy) in front of the development facilitator, which the proxy also answers as the indexer for.
 */
export async function startWorkerBehindProxy(paidDir: string, appOptions: PaywallAppOptions = {}) {
  const facilitator = await startDevFacilitator();
  const proxy = await startSettleProxy(facilitator.url);
  const payTo = algosdk.generateAccount().addr.toString();
  facilitator.ledger.optIn(payTo);
  const worker = await startPaywallServer(
    {
      port: 0,
      payTo,
      facilitatorUrl: proxy.url,
      indexerUrl: proxy.url,
      facilitatorTimeoutMs: 5000,
      baseUrl: 'http://127.0.0.1:8080',
      storage: createFsStorage(paidDir),
      allowSimulated: true,
    },
    appOptions,
  );
  return {
    facilitator,
    proxy,
    worker,
    close: async () => {
      await worker.close();
      await proxy.close();
      await facilitator.close();
    },
  };
}

export const account = (): string => algosdk.generateAccount().addr.toString();

/** A valid publisher entry; `overrides` replace top-level fields. */
export const publisherEntry = (
  id: string,
  payTo: string,
  overrides: Partial<PublisherInput> = {},
): PublisherInput => ({
  id,
  brand: {
    name: `${id} Research`,
    accentColor: '#aa3300',
    contactUrl: `mailto:desk@${id}.example`,
    termsUrl: `https://${id}.example/terms`,
  },
  payTo,
  products: { 'atlas-human-report': { priceUsd: '0.15' }, atlas: { priceUsd: '0.05' } },
  ...overrides,
});

export interface PublisherStack {
  facilitator: DevFacilitator;
  worker: PaywallServer;
  ledger: SqliteCreditLedger;
  publishers: Publisher[];
  operatorPayTo: string;
  paidDir: string;
  proxy: Awaited<ReturnType<typeof startSettleProxy>>;
  logs: PaywallLogEntry[];
  url(path: string): string;
  /** Stops the worker and starts it again with these publishers, as an operator's restart after a config change. */
  restart(entries: (operatorPayTo: string) => PublisherInput[]): Promise<void>;
  close(): Promise<void>;
}

/** `entries` are publisher configurations; `credits` each publisher's starting balance. */
export async function startPublisherStack(
  entries: (operatorPayTo: string) => PublisherInput[],
  credits: Record<string, number>,
): Promise<PublisherStack> {
  const paidDir = await mkdtemp(join(tmpdir(), 'emi-publishers-'));
  await writePaidFixtures(paidDir);
  const facilitator = await startDevFacilitator();
  const proxy = await startSettleProxy(facilitator.url);
  const operatorPayTo = account();
  const publishers = parsePublishers(entries(operatorPayTo), operatorPayTo);
  for (const address of [operatorPayTo, ...publishers.map((p) => p.payTo)]) facilitator.ledger.optIn(address);
  const ledger = new SqliteCreditLedger(join(paidDir, 'publishers.sqlite'));
  for (const [id, amount] of Object.entries(credits)) if (amount) await ledger.credit(id, amount);
  const logs: PaywallLogEntry[] = [];
  const log = (entry: PaywallLogEntry) => void logs.push(entry);
  // The payment book in a SQLite file, as `emi serve` keeps it: it outlives a restart of the worker.
  const book = new SqlitePaymentBook(join(paidDir, 'payments.sqlite'));
  const startWorker = (serving: Publisher[]) =>
    startPaywallServer(
      {
        port: 0,
        payTo: operatorPayTo,
        facilitatorUrl: proxy.url,
        facilitatorTimeoutMs: 3000,
        baseUrl: 'http://127.0.0.1:8080',
        storage: createFsStorage(paidDir),
        allowSimulated: true,
        indexerUrl: proxy.url,
      },
      {
        salePoints: publisherSalePoints(serving),
        hooks: creditHooks(serving, ledger, log),
        log,
        paymentBook: book,
      },
    );
  let worker = await startWorker(publishers);
  const stack: PublisherStack = {
    facilitator,
    worker,
    ledger,
    publishers,
    operatorPayTo,
    paidDir,
    proxy,
    logs,
    url: (path) => `${worker.url}${path}`,
    restart: async (next) => {
      await worker.close();
      stack.publishers = parsePublishers(next(operatorPayTo), operatorPayTo);
      worker = stack.worker = await startWorker(stack.publishers);
    },
    close: async () => {
      await worker.close();
      await proxy.close();
      await facilitator.close();
      ledger.close();
      book.close();
      await rm(paidDir, { recursive: true, force: true });
    },
  };
  return stack;
}

/** A delivered sale of acme's atlas (1 credit, 0.05 USDC) as the worker reports it to the credit ledger. */
export const sale = (transaction: string, at = '2026-11-01T10:00:00.000Z'): SaleRecord => ({
  at,
  publisherId: 'acme',
  product: 'atlas',
  path: '/p/acme/api/x402-atlas.php',
  priceUsd: '0.05',
  amountAtomic: '50000',
  payTo: 'PAYTO',
  payer: 'PAYER',
  transaction,
  network: 'algorand:wGHE2Pwdvd7S12BL5FaOP20EGYesN73k',
  credits: 1,
});
