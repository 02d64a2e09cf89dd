// The operator's secrets stay out of the Worker's public answers: hosted algod services (QuickNode, Chainstack) put
// the API token in EMI_ALGOD_URL's path, and a facilitator's error body may repeat its key. `wrangler dev` runs the
// Worker in workerd with an algod on loopback that refuses every question (401) and a facilitator that refuses too,
// its refusal naming a secret: the 503s, /x402/health, the paid MCP tool and a publisher's path say the opt-in
// "could not be checked" (HTTP 401) and the facilitator's reason in a few words, never the URL nor the body; the
// Worker's log still says why.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uploadPaidFiles } from '../deploy/cloudflare/run.ts';
import type { WranglerDev } from '../deploy/cloudflare/run.ts';
import { toolNameOf } from '../mcp/free-tools.ts';
import { createSiteWorker } from '../paywall-worker/cloudflare/site-worker.ts';
import { listen } from '../paywall-worker/node-listen.ts';
import { MemoryPaymentBook } from '../paywall-worker/payment-book.ts';
import { PaywallErrorBody } from '../schemas/paid/payment-required.ts';
import { startTestWorker } from './helpers/test-worker.ts';
import { resourceById, writePaidFixtures } from './paywall-harness.ts';
import { account, publisherEntry } from './publishers-harness.ts';

const ALGOD_SECRET = 'qn-SECRET-TOKEN-abc123';
const FACILITATOR_SECRET = 'fac-SECRET-KEY-xyz789';
const resource = resourceById('atlas');

/** A server on loopback refusing every request with 401, its body naming `secret` as some services' bodies do. */
async function refusingServer(secret: string) {
  const app = new Hono().all('*', (c) => c.json({ message: `invalid API key ${secret}` }, 401));
  return listen(app, 0, '127.0.0.1');
}

/** Fails naming where a secret (or the server holding it) shows in a public answer. */
function expectNoSecret(where: string, text: string, hosts: readonly string[]): void {
  for (const secret of [ALGOD_SECRET, FACILITATOR_SECRET, ...hosts]) {
    expect(text, `${where} repeats ${secret}`).not.toContain(secret);
  }
}

describe(
  'the Worker in workerd (wrangler dev) with an algod and a facilitator that refuse',
  { timeout: 120_000 },
  () => {
    let root: string;
    let algod: Awaited<ReturnType<typeof listen>>;
    let facilitator: Awaited<ReturnType<typeof listen>>;
    let worker: WranglerDev;
    let hosts: string[];

    beforeAll(async () => {
      root = await mkdtemp(join(tmpdir(), 'emi-secrets-worker-'));
      const write = async (file: string, text: string) => {
        await mkdir(dirname(join(root, 'dist', file)), { recursive: true });
        await writeFile(join(root, 'dist', file), text);
      };
      await write('index.html', '<!doctype html><title>home</title>');
      await write('x402-buyer/index.html', '<!doctype html><title>buyer page</title>');
      await mkdir(join(root, 'paid'));
      await writePaidFixtures(join(root, 'paid'));
      const persistTo = join(root, 'state');
      await uploadPaidFiles(join(root, 'paid'), { persistTo });
      algod = await refusingServer(ALGOD_SECRET);
      facilitator = await refusingServer(FACILITATOR_SECRET);
      hosts = [`127.0.0.1:${algod.port}`, `127.0.0.1:${facilitator.port}`];
      worker = await startTestWorker({
        persistTo,
        assetsDir: join(root, 'dist'),
        payTo: account(),
        facilitatorUrl: `http://127.0.0.1:${facilitator.port}/x402`,
        vars: {
          EMI_ALGOD_URL: `http://127.0.0.1:${algod.port}/${ALGOD_SECRET}/`,
          EMI_PUBLISHERS: JSON.stringify([publisherEntry('acme', account())]),
        },
      });
    }, 180_000);

    afterAll(async () => {
      await worker?.stop();
      await algod?.close();
      await facilitator?.close();
      if (root) await rm(root, { recursive: true, force: true });
    });

    it('answers the paid path 503: the opt-in could not be checked (HTTP 401), no URL; the log says where', async () => {
      const response = await fetch(`${worker.url}${resource.path}`);
      const text = await response.text();
      expectNoSecret('the 503', text, hosts);
      expect(response.status).toBe(503);
      const body = PaywallErrorBody.parse(JSON.parse(text));
      expect(body.error).toBe('payee_not_opted_in');
      expect(body.message).toMatch(/could not be checked \(HTTP 401\)/);
      // The operator's log: why, and which algod (its host, not the token in its path).
      await expect
        .poll(() => worker.output(), { timeout: 10_000 })
        .toMatch(/could not be checked at http:\/\/127/);
      expect(worker.output()).toContain('HTTP 401');
    });

    it('says in /x402/health why nothing sells, in a few words: no URL, no facilitator body', async () => {
      const response = await fetch(`${worker.url}/x402/health`);
      const text = await response.text();
      expectNoSecret('/x402/health', text, hosts);
      const health = JSON.parse(text) as {
        facilitator: { answers: boolean; detail: string | null };
        payee: { problem: string | null };
      };
      expect(health.facilitator).toEqual({ answers: false, detail: 'HTTP 401' });
      expect(health.payee.problem).toMatch(/could not be checked \(HTTP 401\)/);
      // The facilitator's own words stay in the operator's log.
      await expect.poll(() => worker.output(), { timeout: 10_000 }).toContain(FACILITATOR_SECRET);
    });

    it('refuses the paid MCP tool with the same words, in its text and its structured content', async () => {
      const client = new Client({ name: 'emi-secrets-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${worker.url}/mcp`)));
      try {
        const result = (await client.callTool({
          name: toolNameOf(resource.id),
          arguments: {},
        })) as CallToolResult;
        expectNoSecret('the MCP tool result', JSON.stringify(result), hosts);
        expect(result.isError).toBe(true);
        expect(result.structuredContent).toMatchObject({ error: 'payee_not_opted_in', status: 503 });
        expect(String((result.structuredContent as { message?: unknown }).message)).toMatch(
          /could not be checked \(HTTP 401\)/,
        );
      } finally {
        await client.close();
      }
    });

    it("answers a publisher's path 503 payee_unchecked (not a bad entry), no URL; the log says where", async () => {
      const response = await fetch(`${worker.url}/p/acme${resource.path}`);
      const text = await response.text();
      expectNoSecret("a publisher's path", text, hosts);
      expect(response.status).toBe(503);
      const body = PaywallErrorBody.parse(JSON.parse(text));
      expect(body.error).toBe('payee_unchecked');
      expect(body.message).toMatch(/^publisher "acme": payTo: USDC opt-in could not be checked \(HTTP 401\)/);
      await expect
        .poll(() => worker.output(), { timeout: 10_000 })
        .toMatch(/publisher \\"acme\\": payTo: USDC opt-in could not be checked at http:\/\/127/);
    });
  },
);

describe('the Worker with a facilitator or indexer URL that carries credentials', () => {
  /** The Worker's answer to a paid path with `vars` (the paid files are not needed: the config is refused first). */
  async function paidAnswer(vars: Record<string, string>): Promise<{ status: number; text: string }> {
    const env = {
      EMI_PAYTO: account(),
      EMI_FACILITATOR_URL: 'http://127.0.0.1:1/x402',
      EMI_BASE_URL: 'http://127.0.0.1:8080',
      PAID_KV: { get: async () => null },
      ASSETS: { fetch: async () => new Response('not found', { status: 404 }) },
      ...vars,
    };
    const site = createSiteWorker(() => new MemoryPaymentBook());
    const response = await site.fetch(new Request(`http://127.0.0.1:8080${resource.path}`), env);
    return { status: response.status, text: await response.text() };
  }

  it.each([
    ['EMI_FACILITATOR_URL', 'http://operator:pw-SECRET@127.0.0.1:1/x402', /user name or password/],
    ['EMI_FACILITATOR_URL', 'http://127.0.0.1:1/x402?key=SECRET', /query string/],
    ['EMI_INDEXER_URL', 'http://127.0.0.1:1/idx#SECRET', /fragment/],
  ])(
    '%s=%s: every paid path answers 500 paywall_misconfigured naming the variable, not the secret',
    async (name, value, why) => {
      const { status, text } = await paidAnswer({ [name]: value });
      expect(status).toBe(500);
      expect(text).not.toContain('SECRET');
      const body = PaywallErrorBody.parse(JSON.parse(text));
      expect(body.error).toBe('paywall_misconfigured');
      expect(body.message).toContain(name);
      expect(body.message).toMatch(why);
    },
  );
});
