// An exception in the apps the hosts call `.fetch()` on themselves (the vote app, the MCP route, the publishers'
// storefront and admin routes; the Cloudflare worker calls each directly) is answered like the paywall's own: one
// JSON line on stderr and a JSON 500 with CORS, never Hono's text/plain "Internal Server Error".
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import algosdk from 'algosdk';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { MockInstance } from 'vitest';
import { createMcpRoute } from '../mcp/http.ts';
import { createSiteWorker } from '../paywall-worker/cloudflare/site-worker.ts';
import type { SiteWorkerEnv } from '../paywall-worker/cloudflare/site-worker.ts';
import { MemoryPaymentBook } from '../paywall-worker/payment-book.ts';
import { createAdminRoute } from '../paywall-worker/publishers/admin-route.ts';
import type { CreditLedger } from '../paywall-worker/publishers/credit-ledger.ts';
import type { Publisher } from '../paywall-worker/publishers/config.ts';
import { createStorefront } from '../paywall-worker/publishers/storefront.ts';
import { JSON_TYPE, MCP_PATH, VOTE_EXPORT_PATH } from '../schemas/delivery.ts';

const TOKEN = 'test-export-token-of-32-characters';
const boom = (): never => {
  throw new Error('store exploded');
};

let stderr: MockInstance<typeof console.error>;
beforeEach(() => {
  stderr = vi.spyOn(console, 'error').mockImplementation(() => {});
});
afterEach(() => stderr.mockRestore());

/** The paywall's JSON error body of a 500. */
const PAYWALL_500 = { success: false, status: 500, error: 'internal_error' };

/**
 * The answer is a JSON 500 with CORS (the paywall's error body, or `body` in the app's own words), and one JSON
 * `unhandled` line naming the request was logged.
 */
async function expectJson500(
  answer: Response,
  method: string,
  path: string,
  body: Record<string, unknown> = PAYWALL_500,
): Promise<void> {
  expect(answer.status).toBe(500);
  expect(answer.headers.get('content-type')?.split(';')[0]).toBe(JSON_TYPE.split(';')[0]);
  expect(answer.headers.get('access-control-allow-origin')).toBe('*');
  expect(answer.headers.get('cache-control')).toBe('no-store');
  expect(await answer.json()).toMatchObject(body);
  const lines = stderr.mock.calls.map(([line]) => JSON.parse(String(line)) as Record<string, unknown>);
  expect(lines).toContainEqual(
    expect.objectContaining({
      level: 'error',
      event: 'unhandled',
      method,
      path,
      detail: expect.stringContaining('exploded'),
    }),
  );
}

describe('an exception outside the paywall app is a logged JSON 500', () => {
  it('the Cloudflare worker’s vote export, when the vote store fails', async () => {
    const worker = createSiteWorker(() => new MemoryPaymentBook());
    const env: SiteWorkerEnv = {
      ASSETS: { fetch: async () => new Response('not found', { status: 404 }) },
      ARENA_VOTES: { idFromName: () => 'votes', get: () => ({ fetch: async () => boom() }) },
      EMI_VOTE_EXPORT_TOKEN: TOKEN,
    };
    const answer = await worker.fetch(
      new Request(`https://arena.example${VOTE_EXPORT_PATH}`, {
        headers: { Authorization: `Bearer ${TOKEN}` },
      }),
      env,
    );
    await expectJson500(answer, 'GET', VOTE_EXPORT_PATH);
  });

  it('the Cloudflare worker, when its assets binding fails or a store throws what is not an Error', async () => {
    const worker = createSiteWorker(() => new MemoryPaymentBook());
    const failingAssets: SiteWorkerEnv = {
      ASSETS: { fetch: async () => boom() },
    };
    const free = await worker.fetch(new Request('https://site.example/api/market-regime.php'), failingAssets);
    await expectJson500(free, 'GET', '/api/market-regime.php');

    stderr.mockClear();
    const overloaded: SiteWorkerEnv = {
      ASSETS: { fetch: async () => new Response('not found', { status: 404 }) },
      // Hono's onError sees only Error instances: a rejection with a plain object passes it by.
      ARENA_VOTES: {
        idFromName: () => 'votes',
        get: () => ({ fetch: () => Promise.reject({ code: 'DO_OVERLOADED_store_exploded' }) }),
      },
      EMI_VOTE_EXPORT_TOKEN: TOKEN,
    };
    const answer = await createSiteWorker(() => new MemoryPaymentBook()).fetch(
      new Request(`https://arena.example${VOTE_EXPORT_PATH}`, {
        headers: { Authorization: `Bearer ${TOKEN}` },
      }),
      overloaded,
    );
    await expectJson500(answer, 'GET', VOTE_EXPORT_PATH);
  });

  it('the MCP route, when its server cannot be built', async () => {
    const route = createMcpRoute(() => {
      throw new Error('server exploded');
    });
    const answer = await route.request(MCP_PATH, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    // In JSON-RPC's words, as the route's other refusals: an MCP client reads `error.code`.
    await expectJson500(answer, 'POST', MCP_PATH, {
      jsonrpc: '2.0',
      error: { code: -32603, message: 'The MCP endpoint could not handle this request.' },
      id: null,
    });
    // The route's other answers are untouched.
    const fine = createMcpRoute(() => new McpServer({ name: 'fine', version: '1.0.0' }));
    expect((await fine.request(MCP_PATH, { method: 'GET' })).status).toBe(405);
  });

  const publisher = {
    id: 'acme',
    brand: { name: 'Acme' },
    payTo: algosdk.generateAccount().addr.toString(),
    products: [{ slug: 'atlas-human-report' }],
    closedAt: null,
  } as unknown as Publisher;

  it('the storefront, when the buyer page cannot be read', async () => {
    const storefront = createStorefront({
      publishers: [publisher],
      buyerConfig: {},
      readBuyerFile: async () => boom(),
    });
    await expectJson500(await storefront.request('/p/acme/x402-buyer/'), 'GET', '/p/acme/x402-buyer/');
  });

  it('the admin route, when the credit ledger fails', async () => {
    const ledger = new Proxy({}, { get: () => async () => boom() }) as CreditLedger;
    const admin = createAdminRoute({
      publishers: [publisher],
      ledger,
      token: TOKEN,
      clientIp: () => '127.0.0.1',
    });
    const path = '/p/acme/admin/statement';
    const answer = await admin.request(path, { headers: { Authorization: `Bearer ${TOKEN}` } });
    await expectJson500(answer, 'GET', path);
  });
});
