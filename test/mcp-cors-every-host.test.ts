// `/mcp` answers CORS alike on every host, from the delivery policy: `emi serve` (the preview in front of the local
// paywall, over HTTP), `emi paywall` (its MCP route, as the CLI hands `/mcp` to it) and the Cloudflare site worker.
// A browser MCP client on another origin must be allowed to send Mcp-Protocol-Version, Mcp-Session-Id, Last-Event-ID
// and Content-Type, and must be able to read Mcp-Session-Id (and x402's headers, as on every worker path) on the
// answer itself, not only on the preflight. Ports 19940-19941.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import algosdk from 'algosdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalStack } from '../generator/local-stack.ts';
import { createSiteWorker } from '../paywall-worker/cloudflare/site-worker.ts';
import type { SiteWorkerEnv } from '../paywall-worker/cloudflare/site-worker.ts';
import { createLocalPaywall } from '../paywall-worker/local.ts';
import { MemoryPaymentBook } from '../paywall-worker/payment-book.ts';
import { EXPOSED_HEADERS, MCP_PATH, preflightAnswer } from '../schemas/delivery.ts';
import { MCP_INITIALIZE } from './helpers/mcp-initialize.ts';

const PREVIEW_PORT = 19940;
const PAYWALL_BASE = 'http://127.0.0.1:19941';
const WORKER_BASE = 'https://mcp.example';

type Send = (path: string, init: RequestInit) => Promise<Response>;

/** The CORS fields a browser reads, as the policy's preflight for `/mcp` sets them. */
const CORS_FIELDS = [
  'access-control-allow-origin',
  'access-control-allow-methods',
  'access-control-allow-headers',
  'access-control-expose-headers',
  'access-control-max-age',
];
const corsOf = (response: Response): Record<string, string | null> =>
  Object.fromEntries(CORS_FIELDS.map((name) => [name, response.headers.get(name)]));
const listOf = (value: string | null | undefined): string[] =>
  (value ?? '').split(',').map((item) => item.trim().toLowerCase());

const PREFLIGHT: RequestInit = {
  method: 'OPTIONS',
  headers: {
    Origin: 'https://agent.example',
    'Access-Control-Request-Method': 'POST',
    'Access-Control-Request-Headers': 'content-type,mcp-protocol-version,mcp-session-id,last-event-id',
  },
};
/** The first MCP request, from a page on another origin. */
const INITIALIZE: RequestInit = {
  ...MCP_INITIALIZE,
  headers: { ...(MCP_INITIALIZE.headers as Record<string, string>), Origin: 'https://agent.example' },
};

const cleanups: Array<() => Promise<unknown>> = [];
const hosts: Array<[string, Send]> = [];

beforeAll(async () => {
  const root = await mkdtemp(join(tmpdir(), 'emi-mcp-cors-'));
  cleanups.push(() => rm(root, { recursive: true, force: true }));
  const stack = await startLocalStack({
    port: PREVIEW_PORT,
    host: '127.0.0.1',
    dir: join(root, 'dist'),
    paid: join(root, 'paid'),
    devFacilitatorPort: 0,
    ledgerFile: join(root, 'serve-publishers.sqlite'),
    log: () => {},
  });
  cleanups.push(() => stack.close());
  hosts.push(['emi serve', (path, init) => fetch(`${stack.url}${path}`, init)]);

  const paywall = await createLocalPaywall({
    paidDir: join(root, 'paid'),
    baseUrl: PAYWALL_BASE,
    devFacilitatorPort: 0,
    ledgerFile: join(root, 'paywall-publishers.sqlite'),
    siteDir: join(root, 'dist'),
  });
  cleanups.push(() => paywall.close());
  const { mcp } = paywall;
  if (!mcp) throw new Error('emi paywall built no MCP route');
  hosts.push(['emi paywall', async (path, init) => mcp.fetch(new Request(`${PAYWALL_BASE}${path}`, init))]);

  const worker = createSiteWorker(() => new MemoryPaymentBook());
  const env: SiteWorkerEnv = {
    EMI_PAYTO: algosdk.generateAccount().addr.toString(),
    EMI_FACILITATOR_URL: 'http://127.0.0.1:9',
    PAID_KV: { get: async () => null },
    ASSETS: { fetch: async () => new Response('not found', { status: 404 }) },
  };
  hosts.push(['worker', (path, init) => worker.fetch(new Request(`${WORKER_BASE}${path}`, init), env)]);
}, 60_000);

afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('/mcp CORS is the delivery policy’s on every host', () => {
  it('answers the preflight of a browser MCP client with preflightAnswer(/mcp) everywhere', async () => {
    const policy = corsOf(preflightAnswer(MCP_PATH));
    expect(listOf(policy['access-control-allow-headers'])).toEqual(
      expect.arrayContaining(['content-type', 'mcp-protocol-version', 'mcp-session-id', 'last-event-id']),
    );
    expect(listOf(policy['access-control-expose-headers'])).toContain('mcp-session-id');
    for (const [name, send] of hosts) {
      const answer = await send(MCP_PATH, PREFLIGHT);
      expect(answer.status, name).toBe(204);
      expect(corsOf(answer), name).toEqual(policy);
    }
  });

  it('lets a page read Mcp-Session-Id and the x402 headers on the POST’s own answer, and on the 405 of a GET', async () => {
    for (const [name, send] of hosts) {
      const posted = await send(MCP_PATH, INITIALIZE);
      expect(posted.status, name).toBe(200);
      expect((await posted.json()) as unknown, name).toMatchObject({ id: 1, result: expect.anything() });
      expect(posted.headers.get('access-control-allow-origin'), name).toBe('*');
      expect(posted.headers.get('access-control-expose-headers'), name).toBe(EXPOSED_HEADERS);
      expect(posted.headers.get('cache-control'), name).toBe('no-store');

      const refused = await send(MCP_PATH, { method: 'GET', headers: { Origin: 'https://agent.example' } });
      expect(refused.status, name).toBe(405);
      expect(refused.headers.get('access-control-expose-headers'), name).toBe(EXPOSED_HEADERS);
    }
  });
});
