// A cross-origin browser agent pays: the official @x402/fetch client, bundled for the browser, runs in headless
// chromium on one loopback origin and buys a paid file from the worker on another. The browser enforces CORS for
// real: the paid retry carries PAYMENT-SIGNATURE and Access-Control-Expose-Headers, so it needs the preflight to
// allow both, and reading PAYMENT-RESPONSE needs it exposed.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { Hono } from 'hono';
import algosdk from 'algosdk';
import { build } from 'esbuild';
import { listen } from '../paywall-worker/node-listen.ts';
import { fundDevWallet } from '../paywall-worker/buy.ts';
import { hasChromium, launchChromium } from './buyer-stack.ts';
import { resourceById, startStack } from './paywall-harness.ts';
import type { Stack } from './paywall-harness.ts';
import type { AgentResult } from './browser/x402-fetch-agent.ts';

const resource = resourceById('atlas');

describe.skipIf(!hasChromium)('the official @x402/fetch client in chromium, from another origin', () => {
  let stack: Stack;
  let browser: Browser;
  let dir: string;
  let page: Awaited<ReturnType<typeof listen>>;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'emi-agent-'));
    await build({
      entryPoints: [join(import.meta.dirname, 'browser', 'x402-fetch-agent.ts')],
      outfile: join(dir, 'agent.js'),
      bundle: true,
      format: 'esm',
      platform: 'browser',
      target: ['chrome109'],
      inject: [join(import.meta.dirname, 'browser', 'buffer-shim.ts')],
      alias: {
        crypto: join(import.meta.dirname, 'browser', 'node-builtins-unused.ts'),
        util: join(import.meta.dirname, 'browser', 'node-builtins-unused.ts'),
      },
      define: { global: 'globalThis', 'process.env.NODE_ENV': '"production"' },
      logLevel: 'silent',
    });
    const html =
      '<!doctype html><meta charset="utf-8"><title>agent</title><script type="module" src="agent.js"></script>';
    const site = new Hono()
      .get('/', (c) => c.html(html))
      .get('/agent.js', async (c) =>
        c.body(await readFile(join(dir, 'agent.js'), 'utf8'), 200, { 'Content-Type': 'text/javascript' }),
      );
    [stack, browser, page] = await Promise.all([
      startStack(),
      launchChromium(),
      listen(site, 0, '127.0.0.1'),
    ]);
  });

  afterAll(async () => {
    await browser?.close();
    await page?.close();
    await stack?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('buys the atlas: the ledger moves exactly the price, and the report arrives', async () => {
    const account = algosdk.generateAccount();
    await fundDevWallet(stack.facilitator.url, account.addr.toString(), '1000000');
    const pageOrigin = `http://127.0.0.1:${page.port}`;
    expect(new URL(stack.worker.url).origin).not.toBe(pageOrigin);

    const context = await browser.newContext();
    const tab = await context.newPage();
    const errors: string[] = [];
    tab.on('pageerror', (error) => errors.push(error.message));
    // A CORS refusal shows as a console error; the 402 itself and a missing favicon are logged too and are fine.
    tab.on('console', (message) => {
      if (message.type() === 'error' && /CORS|Access-Control/i.test(message.text()))
        errors.push(message.text());
    });
    await tab.goto(`${pageOrigin}/`);
    await tab.waitForFunction(() => 'buyWithX402' in globalThis);
    const before = stack.facilitator.ledger.assetBalance(account.addr.toString());
    const result = (await tab.evaluate(
      ([url, algod, key]) =>
        (
          globalThis as unknown as { buyWithX402: (u: string, a: string, k: string) => Promise<AgentResult> }
        ).buyWithX402(url, algod, key),
      [stack.url(resource), stack.facilitator.url, Buffer.from(account.sk).toString('base64')] as const,
    )) as AgentResult;
    await context.close();

    expect(errors).toEqual([]);
    expect(result.status).toBe(200);
    expect(resource.schema.safeParse(JSON.parse(result.body)).success).toBe(true);
    expect(result.transaction).toMatch(/^[A-Z2-7]{52}$/);
    expect(before - stack.facilitator.ledger.assetBalance(account.addr.toString())).toBe(
      BigInt(resource.amountAtomic),
    );
  });
});
