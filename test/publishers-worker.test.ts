// The publisher programme's Worker glue, in Node through the same `createSiteWorker` the Workers entry exports:
// publishers from EMI_PUBLISHERS (a bad entry closes /p/ with a JSON 500 naming the publisher and the field, and
// logs it), the admin route's token rules, and the USDC opt-in check. The paid path itself is run in workerd by
// test/publishers-cloudflare.test.ts; the ledger's storage here is an in-memory stand-in.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { Hono } from 'hono';
import { PaywallErrorBody } from '../schemas/paid/payment-required.ts';
import { PAID_EXAMPLES } from '../schemas/paid/examples.ts';
import { PAID_RESOURCES } from '../schemas/resources.ts';
import type { Health } from '../paywall-worker/core/health.ts';
import { createSiteWorker } from '../paywall-worker/cloudflare/site-worker.ts';
import type { LedgerFor } from '../paywall-worker/cloudflare/publishers.ts';
import { listen } from '../paywall-worker/node-listen.ts';
import { MemoryPaymentBook } from '../paywall-worker/payment-book.ts';
import { StorageCreditLedger } from '../paywall-worker/publishers/credit-ledger-storage.ts';
import type { LedgerStorage } from '../paywall-worker/publishers/credit-ledger-storage.ts';
import {
  creditLedgerObject,
  durableCreditLedger,
} from '../paywall-worker/publishers/credit-ledger-durable.ts';
import { account, publisherEntry } from './publishers-harness.ts';

const TOKEN = 'operator-token-for-tests-32-char';
const operator = account();
const acmePayTo = account();

function memoryStorage(): LedgerStorage {
  const data = new Map<string, unknown>();
  return {
    get: async <T>(key: string) => data.get(key) as T | undefined,
    put: async (entries) => void Object.entries(entries).forEach(([k, v]) => data.set(k, structuredClone(v))),
    delete: async (keys) => keys.filter((key) => data.delete(key)).length,
    list: async <T>({ prefix, start }: { prefix: string; start?: string }) =>
      new Map(
        [...data.entries()]
          .filter(([key]) => key.startsWith(prefix) && (start === undefined || key >= start))
          .sort(([a], [b]) => (a < b ? -1 : 1)) as [string, T][],
      ),
  };
}

/** A ledger over in-memory Durable Objects; `objects` shared between two ledgers outlives a deploy, as theirs do. */
const ledgerOver =
  (objects = new Map<unknown, StorageCreditLedger>()): LedgerFor =>
  (_env, ids) =>
    durableCreditLedger(
      {
        idFromName: (name) => name,
        get: (id) =>
          creditLedgerObject(
            objects.get(id) ?? objects.set(id, new StorageCreditLedger(memoryStorage())).get(id)!,
          ),
      },
      ids,
    );
/** A fresh ledger at each call (each worker its own). */
const memoryLedger: LedgerFor = (env, ids) => ledgerOver()(env, ids);

const baseEnv = (vars: Record<string, unknown>) => ({
  EMI_PAYTO: operator,
  EMI_FACILITATOR_URL: 'http://127.0.0.1:1',
  EMI_BASE_URL: 'http://127.0.0.1:8080',
  PAID_KV: { get: async () => null },
  ASSETS: {
    fetch: async (request: Request) =>
      new URL(request.url).pathname === '/x402-buyer/'
        ? new Response('<!doctype html><title>Buy</title><body><main>buyer</main></body>')
        : new Response('not found', { status: 404 }),
  },
  ...vars,
});

/** `ledgerFor` null: createSiteWorker's own default, as the Workers entry is without its binding. */
function workerWith(vars: Record<string, unknown>, ledgerFor: LedgerFor | null = memoryLedger) {
  const worker = createSiteWorker(() => new MemoryPaymentBook(), ledgerFor ?? undefined);
  const env = baseEnv(vars);
  return (path: string, init?: RequestInit) =>
    worker.fetch(new Request(`http://127.0.0.1:8080${path}`, init), env);
}

let errors: string[];
beforeAll(() => {
  vi.spyOn(console, 'error').mockImplementation((...parts: unknown[]) => void errors.push(parts.join(' ')));
});
afterEach(() => {
  errors = [];
});
afterAll(() => {
  vi.restoreAllMocks();
});
errors = [];
/** The details of the JSON log lines of one event. */
const logged = (event: string): string[] =>
  errors
    .map((line) => JSON.parse(line) as { event?: string; detail?: string })
    .filter((entry) => entry.event === event)
    .map((entry) => entry.detail ?? '');

describe('publishers from EMI_PUBLISHERS', () => {
  it.each([
    [
      'a field',
      JSON.stringify([publisherEntry('acme', acmePayTo, { payTo: 'NOT-AN-ADDRESS' })]),
      'publisher "acme": payTo: must be a valid Algorand address',
    ],
    [
      'a price',
      JSON.stringify([publisherEntry('acme', acmePayTo, { products: { atlas: { priceUsd: '0.01' } } })]),
      'publisher "acme": products.atlas.priceUsd: 0.01 is below the base price',
    ],
    ['the operator payee', JSON.stringify([publisherEntry('acme', operator)]), "is the operator's own payee"],
    ['JSON', '[{"id":', 'EMI_PUBLISHERS is not valid JSON'],
  ])('a bad entry (%s) closes /p/ with a JSON 500 naming it, and is logged', async (_what, value, named) => {
    const request = workerWith({ EMI_PUBLISHERS: value, EMI_ADMIN_TOKEN: TOKEN });
    for (const path of [
      '/p/acme/api/x402-atlas.php',
      '/p/acme/x402-buyer/',
      '/p/other/api/x402-atlas.php',
      '/p/acme/admin/statement',
    ]) {
      const response = await request(path, { headers: { Authorization: `Bearer ${TOKEN}` } });
      expect(response.status, path).toBe(500);
      expect(response.headers.get('PAYMENT-REQUIRED')).toBeNull();
      const body = PaywallErrorBody.parse(await response.json());
      expect(body.error).toBe('publishers_misconfigured');
      expect(body.message).toContain(named);
    }
    expect(logged('publishers_misconfigured').some((detail) => detail.includes(named))).toBe(true);
  });

  it('with publishers but no PUBLISHER_CREDITS binding, /p/ answers 500 naming the binding', async () => {
    const request = workerWith({ EMI_PUBLISHERS: JSON.stringify([publisherEntry('acme', acmePayTo)]) }, null);
    const body = PaywallErrorBody.parse(await (await request('/p/acme/api/x402-atlas.php')).json());
    expect(body.message).toContain('PUBLISHER_CREDITS');
  });

  it('takes a config file’s whole JSON, and a structured [vars] value, as well as the list', async () => {
    const entries = [publisherEntry('acme', acmePayTo)];
    for (const value of [JSON.stringify({ publishers: entries }), entries]) {
      const page = await workerWith({ EMI_PUBLISHERS: value })('/p/acme/x402-buyer/');
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('Sold by acme Research');
    }
  });
});

describe('the admin route', () => {
  const entries = JSON.stringify([publisherEntry('acme', acmePayTo)]);
  const credit = (token: string | null, body: unknown = { credits: 3 }) => ({
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      ...(token === null ? {} : { Authorization: `Bearer ${token}` }),
    },
    body: JSON.stringify(body),
  });

  it('does not exist without EMI_ADMIN_TOKEN', async () => {
    const request = workerWith({ EMI_PUBLISHERS: entries });
    for (const token of [null, '', 'guess', TOKEN]) {
      const response = await request('/p/acme/admin/credits', credit(token));
      expect(response.status).toBe(404);
      expect(PaywallErrorBody.parse(await response.json()).error).toBe('not_found');
    }
    expect((await request('/p/acme/admin/statement')).status).toBe(404);
  });

  it('wants the token, names no publisher before it, and credits and reports with it', async () => {
    const request = workerWith({ EMI_PUBLISHERS: entries, EMI_ADMIN_TOKEN: TOKEN });
    for (const token of [null, 'guess', `${TOKEN}x`, TOKEN.slice(0, -1)]) {
      for (const path of ['/p/acme/admin/credits', '/p/nobody/admin/credits']) {
        const refused = await request(path, credit(token));
        expect(refused.status, `${path} ${token}`).toBe(401);
        expect(refused.headers.get('WWW-Authenticate')).toBe('Bearer');
      }
    }
    expect((await request('/p/nobody/admin/credits', credit(TOKEN))).status).toBe(404);
    const credited = await request('/p/acme/admin/credits', credit(TOKEN, { credits: 3, note: 'first' }));
    expect(credited.status).toBe(200);
    expect(credited.headers.get('Cache-Control')).toBe('no-store');
    expect(await credited.json()).toMatchObject({ publisherId: 'acme', balance: 3, available: 3 });
    for (const bad of [{ credits: 0 }, { credits: 1.5 }, { credits: '3' }, {}, { credits: 1, note: 7 }]) {
      expect((await request('/p/acme/admin/credits', credit(TOKEN, bad))).status).toBe(400);
    }
    const withdrawn = await request('/p/acme/admin/credits', credit(TOKEN, { credits: -4 }));
    expect(withdrawn.status).toBe(409);
    expect(((await withdrawn.json()) as { message: string }).message).toContain('cannot withdraw 4');

    const auth = { headers: { Authorization: `Bearer ${TOKEN}` } };
    const statement = await request('/p/acme/admin/statement?since=2026-11-01', auth);
    expect(await statement.json()).toEqual({
      publisher: 'acme',
      since: '2026-11-01T00:00:00.000Z',
      balance: expect.objectContaining({ balance: 3, sales: 0 }),
      sales: [],
      grants: [{ at: expect.any(String), publisherId: 'acme', credits: 3, note: 'first' }],
    });
    expect((await request('/p/acme/admin/statement?since=yesterday', auth)).status).toBe(400);
  });
});

describe('the admin route after the last publisher was removed', () => {
  it('still gives its statement and a withdrawal of its credits, and refuses a grant', async () => {
    // One ledger across the two deploys, as the Durable Objects outlive a deploy.
    const lasting = ledgerOver();
    const headers = { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' };
    const post = (credits: number) => ({ method: 'POST', headers, body: JSON.stringify({ credits }) });
    const before = workerWith(
      { EMI_PUBLISHERS: JSON.stringify([publisherEntry('acme', acmePayTo)]), EMI_ADMIN_TOKEN: TOKEN },
      lasting,
    );
    expect((await before('/p/acme/admin/credits', post(5))).status).toBe(200);

    const after = workerWith({ EMI_PUBLISHERS: '[]', EMI_ADMIN_TOKEN: TOKEN }, lasting);
    const statement = await after('/p/acme/admin/statement', { headers });
    expect(statement.status).toBe(200);
    expect(((await statement.json()) as { balance: { balance: number } }).balance.balance).toBe(5);
    const grant = await after('/p/acme/admin/credits', post(1));
    expect(grant.status).toBe(409);
    expect(await grant.json()).toMatchObject({ error: 'publisher_removed' });
    expect((await after('/p/acme/admin/credits', post(-5))).status).toBe(200);
    expect((await after('/p/nobody/admin/statement', { headers })).status).toBe(404);
    // No storefront sells meanwhile.
    expect((await after('/p/acme/api/x402-atlas.php')).status).toBe(404);
  });
});

describe('USDC opt-in on the Worker', () => {
  let algod: Awaited<ReturnType<typeof listen>>;
  beforeAll(async () => {
    const app = new Hono();
    app.get('/v2/accounts/:address/assets/:asset', (c) => c.json({ message: 'not found' }, 404));
    algod = await listen(app, 0, '127.0.0.1');
  });
  afterAll(async () => {
    await algod?.close();
  });

  it('with EMI_ALGOD_URL, a publisher not opted in closes its sales with a JSON 500, not the admin route', async () => {
    const request = workerWith({
      EMI_PUBLISHERS: JSON.stringify([publisherEntry('acme', acmePayTo)]),
      EMI_ALGOD_URL: `http://127.0.0.1:${algod.port}`,
      EMI_ADMIN_TOKEN: TOKEN,
    });
    const sale = await request('/p/acme/api/x402-atlas.php');
    expect(sale.status).toBe(500);
    expect(PaywallErrorBody.parse(await sale.json()).message).toBe(
      `publisher "acme": payTo: ${acmePayTo} has not opted in to USDC (ASA 31566704)`,
    );
    expect(logged('publishers_misconfigured').join('\n')).toContain('has not opted in to USDC');
    const admin = await request('/p/acme/admin/statement', { headers: { Authorization: `Bearer ${TOKEN}` } });
    expect(admin.status).toBe(200);
  });
});

describe('/x402/health on the Worker', () => {
  it("reports each publisher path's seller state from the same code as on Node", async () => {
    const updated = new Date().toISOString();
    const files = new Map(
      PAID_RESOURCES.map((r) => [
        r.file,
        JSON.stringify({ ...(PAID_EXAMPLES[r.id] as Record<string, unknown>), updated }),
      ]),
    );
    const request = workerWith({
      EMI_PUBLISHERS: JSON.stringify([
        publisherEntry('acme', acmePayTo),
        publisherEntry('gone', account(), { closedAt: '2026-01-01T00:00:00Z' }),
      ]),
      EMI_ALLOW_SIMULATED: '1',
      PAID_KV: { get: async (key: string) => files.get(key) ?? null },
    });
    const health = (await (await request('/x402/health')).json()) as Health;
    const state = new Map(health.files.map((f) => [f.path, f]));
    expect(state.get('/api/x402-atlas.php')?.state).toBe('for_sale');
    expect(state.get('/p/acme/api/x402-atlas.php')).toMatchObject({
      state: 'not_available_from_seller', // no credits granted
      seller: 'acme',
    });
    expect(state.get('/p/gone/api/x402-atlas.php')).toMatchObject({ state: 'seller_closed', seller: 'gone' });
  });
});

describe("a closed storefront's page on the Worker", () => {
  it('is Gone (410) and says it is closed, from EMI_PUBLISHERS as on Node; an open one is not', async () => {
    const request = workerWith({
      EMI_PUBLISHERS: JSON.stringify([
        publisherEntry('acme', acmePayTo),
        publisherEntry('gone', account(), { closedAt: '2026-01-01T00:00:00Z' }),
      ]),
    });
    const closed = await request('/p/gone/x402-buyer/');
    expect(closed.status).toBe(410);
    const html = await closed.text();
    expect(html).toContain('This storefront is closed.');
    expect(html.replace(/\s+/g, ' ')).toContain('stopped selling here on 2026-01-01 00:00 UTC');
    const open = await request('/p/acme/x402-buyer/');
    expect(open.status).toBe(200);
    expect(await open.text()).not.toContain('This storefront is closed.');
  });
});
