// The Cloudflare recipe in its own runtime: `wrangler dev` runs deploy/cloudflare/wrangler.toml in workerd on
// loopback with no network (static assets, the paid files in local R2, the payment book in a Durable Object), in
// front of the development facilitator. The official @x402/fetch client buys through it.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import algosdk from 'algosdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectMcpPreflightAllowsPost } from './mcp-preflight.ts';
import { decodePaymentResponseHeader } from '@x402/core/http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { TRACKED_ASSETS } from '../schemas/common.ts';
import { importWorkerVotes } from '../generator/state/endpoint-votes.ts';
import { openArenaStore } from '../generator/state/store.ts';
import { SITE_HEADERS, freeCacheFor } from '../schemas/delivery.ts';
import { ErrorResponse } from '../schemas/error.ts';
import { FREE_RESOURCES, PAID_RESOURCES } from '../schemas/resources.ts';
import { uploadPaidFiles } from '../deploy/cloudflare/run.ts';
import type { WranglerDev } from '../deploy/cloudflare/run.ts';
import { buyWithDevWallet } from '../paywall-worker/buy.ts';
import { startDevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import type { DevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import {
  fetchChallenge,
  newBuyer,
  paymentHeader,
  resourceById,
  writePaidFixtures,
} from './paywall-harness.ts';
import { nextRound, signedVoteBody } from './helpers/signed-vote.ts';
import { startTestWorker } from './helpers/test-worker.ts';

const VOTE_EXPORT_TOKEN = 'test-export-token-of-32-characters';

describe('Cloudflare recipe in workerd (wrangler dev)', { timeout: 120_000 }, () => {
  let root: string;
  let facilitator: DevFacilitator;
  let worker: WranglerDev;
  let payTo: string;
  let startWorker: () => Promise<WranglerDev>;

  const write = async (file: string, body: unknown) => {
    await mkdir(dirname(join(root, 'dist', file)), { recursive: true });
    await writeFile(join(root, 'dist', file), typeof body === 'string' ? body : JSON.stringify(body));
  };

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'emi-cloudflare-'));
    for (const resource of FREE_RESOURCES) await write(resource.file, { file: resource.file });
    for (const asset of TRACKED_ASSETS) await write(`api/reasoning/${asset}.json`, { asset });
    await write('index.html', '<!doctype html><title>home</title>');
    await write('404.html', '<!doctype html><title>not found page</title>');
    await write('x402-buyer/index.html', '<!doctype html><title>buyer page</title>');
    await mkdir(join(root, 'paid'));
    await writePaidFixtures(join(root, 'paid'));

    facilitator = await startDevFacilitator();
    payTo = algosdk.generateAccount().addr.toString();
    facilitator.ledger.optIn(payTo);
    const persistTo = join(root, 'state');
    await uploadPaidFiles(join(root, 'paid'), { persistTo });
    startWorker = async () => {
      return startTestWorker({
        persistTo,
        assetsDir: join(root, 'dist'),
        payTo,
        facilitatorUrl: facilitator.url,
        vars: { EMI_VOTE_EXPORT_TOKEN: VOTE_EXPORT_TOKEN },
      });
    };
    worker = await startWorker();
  }, 180_000);

  afterAll(async () => {
    await worker?.stop();
    await facilitator?.close();
    if (root) await rm(root, { recursive: true, force: true });
  });

  const expectSiteHeaders = (response: Response) => {
    for (const [name, value] of Object.entries(SITE_HEADERS))
      expect(response.headers.get(name), name).toBe(value);
  };

  it('buys each of the four paths with the official @x402/fetch; the ledger moves exactly the price', async () => {
    const { ledger } = facilitator;
    for (const resource of PAID_RESOURCES) {
      const before = ledger.assetBalance(payTo);
      const result = await buyWithDevWallet({
        url: `${worker.url}${resource.path}`,
        facilitatorUrl: facilitator.url,
        fundAtomic: '1000000',
      });
      expect(result.status, resource.path).toBe(200);
      expect(result.transaction).toMatch(/^[A-Z2-7]{52}$/);
      expect(ledger.assetBalance(payTo) - before).toBe(BigInt(resource.amountAtomic));
    }
  });

  it('answers the 402 and the paid 200 with no-store and the policy’s CORS headers', async () => {
    const resource = resourceById('atlas');
    const { response, paymentRequired } = await fetchChallenge(`${worker.url}${resource.path}`);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    const buyer = await newBuyer(facilitator);
    const paid = await fetch(`${worker.url}${resource.path}`, {
      headers: paymentHeader(await buyer.pay(paymentRequired)),
    });
    expect(paid.status).toBe(200);
    expect(paid.headers.get('cache-control')).toBe('no-store');
    expect(paid.headers.get('access-control-expose-headers')).toContain('PAYMENT-RESPONSE');
  });

  it('serves one payment once: twice at once, and again after a restart of workerd (the Durable Object remembers)', async () => {
    const resource = resourceById('paidMarketRegime');
    const { ledger } = facilitator;
    const { paymentRequired } = await fetchChallenge(`${worker.url}${resource.path}`);
    const buyer = await newBuyer(facilitator);
    const headers = paymentHeader(await buyer.pay(paymentRequired));
    const before = ledger.assetBalance(buyer.address);
    const answers = await Promise.all([1, 2].map(() => fetch(`${worker.url}${resource.path}`, { headers })));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 503]);
    // The twin is told to send the same payment again later, not asked to pay (no challenge).
    const twin = answers.find((a) => a.status === 503)!;
    expect(twin.headers.get('payment-required')).toBeNull();
    expect(twin.headers.get('retry-after')).not.toBeNull();
    expect(((await twin.json()) as { error: string }).error).toBe('payment_in_progress');
    const settled = decodePaymentResponseHeader(
      answers.find((a) => a.status === 200)!.headers.get('payment-response')!,
    );
    expect(before - ledger.assetBalance(buyer.address)).toBe(BigInt(resource.amountAtomic));

    await worker.stop();
    worker = await startWorker();
    const again = await fetch(`${worker.url}${resource.path}`, { headers });
    expect(again.status).toBe(200); // delivered again, not charged again
    expect(decodePaymentResponseHeader(again.headers.get('payment-response')!).transaction).toBe(
      settled.transaction,
    );
    expect(before - ledger.assetBalance(buyer.address)).toBe(BigInt(resource.amountAtomic));
  });

  it('serves free files as JSON with the policy’s cache and CORS headers', async () => {
    for (const resource of FREE_RESOURCES) {
      const response = await fetch(`${worker.url}${resource.path}`);
      expect(response.status, resource.path).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      // The static assets carry no modification time: revalidated at every use (schemas/delivery.ts freeCacheFor).
      expect(response.headers.get('cache-control')).toBe(freeCacheFor(null));
      expectSiteHeaders(response);
      expect(await response.json()).toEqual({ file: resource.file });
    }
  });

  it('maps reasoning.php?asset= case-insensitively and answers JSON 400, JSON 404 and the HTML 404 page', async () => {
    expect(await (await fetch(`${worker.url}/api/reasoning.php?asset=eth`)).json()).toEqual({ asset: 'ETH' });
    expect(await (await fetch(`${worker.url}/api/reasoning.php`)).json()).toEqual({
      file: 'api/reasoning.php',
    });
    const invalid = await fetch(`${worker.url}/api/reasoning.php?asset=DOGE`);
    expect(invalid.status).toBe(400);
    expect(invalid.headers.get('cache-control')).toBe('no-store');
    expect(ErrorResponse.parse(await invalid.json()).error).toBe('invalid_asset');
    const missing = await fetch(`${worker.url}/api/nothing.php`);
    expect(missing.status).toBe(404);
    expect(ErrorResponse.parse(await missing.json()).error).toBe('not_found');
    const page = await fetch(`${worker.url}/docs/nothing/`);
    expect(page.status).toBe(404);
    expect(await page.text()).toContain('not found page');
  });

  it('redirects a folder asked for without its slash, as nginx does (the page’s relative links need it)', async () => {
    const slashless = await fetch(`${worker.url}/x402-buyer?from=test`, { redirect: 'manual' });
    expect(slashless.status).toBe(301);
    expect(new URL(slashless.headers.get('location')!, worker.url).href).toBe(
      `${worker.url}/x402-buyer/?from=test`,
    );
    const page = await fetch(`${worker.url}/x402-buyer/`, { redirect: 'manual' });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('buyer page');
    // A file is served as it is.
    expect((await fetch(`${worker.url}/404.html`, { redirect: 'manual' })).status).not.toBe(301);
  });

  it('answers MCP at /mcp in workerd: the official SDK client lists the tools and gets the paid tool’s x402 challenge', async () => {
    const client = new Client({ name: 'emi-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${worker.url}/mcp`)));
    try {
      const names = (await client.listTools()).tools.map((tool) => tool.name);
      expect(names).toEqual(expect.arrayContaining(['reasoning', 'history', 'atlas', 'paid_main_brain']));
      const result = (await client.callTool({ name: 'atlas', arguments: {} })) as CallToolResult;
      expect(result.isError).toBe(true);
      expect(JSON.stringify(result.structuredContent)).toContain('"x402Version":2');
    } finally {
      await client.close();
    }
    // A browser agent on another origin may post to it too (the Worker answers preflights by the policy).
    await expectMcpPreflightAllowsPost(`${worker.url}/mcp`);
  });

  it('takes a wallet-signed vote for the next round once in workerd (Durable Object store), refuses a replay and a forgery, and the generator imports it once', async () => {
    const vote = signedVoteBody({ site: worker.url, round: nextRound() });
    const post = (body: unknown) =>
      fetch(`${worker.url}/arena/vote`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
    expect((await post(vote)).status).toBe(201);
    const replay = await post(vote);
    expect(replay.status).toBeGreaterThanOrEqual(400);
    expect(replay.status).toBeLessThan(500);
    const forged = await post({ ...vote, address: algosdk.generateAccount().addr.toString() });
    expect(forged.status).toBeGreaterThanOrEqual(400);
    expect(forged.status).toBeLessThan(500);

    // The generator's next run imports it from the Worker's export route, once.
    const store = openArenaStore(join(root, 'arena.sqlite'));
    try {
      const warnings: string[] = [];
      const warn = (line: string) => void warnings.push(line);
      expect(await importWorkerVotes(store, worker.url, 'wrong-token', Date.now(), warn)).toBe(0);
      expect(warnings.join('\n')).toMatch(/answered 401/);
      expect(await importWorkerVotes(store, worker.url, VOTE_EXPORT_TOKEN, Date.now(), warn)).toBe(1);
      expect(await importWorkerVotes(store, worker.url, VOTE_EXPORT_TOKEN, Date.now(), warn)).toBe(0);
    } finally {
      store.close();
    }
  });
});
